import Foundation

/// A child process started without waiting for it: tests stop it, resume it, kill it, or wait
/// for it.
public final class RunningProcess: @unchecked Sendable {
  private let process = Process()
  private let stdout = Pipe()
  private let stderr = Pipe()
  private let group = DispatchGroup()
  nonisolated(unsafe) private var outData = Data()
  nonisolated(unsafe) private var errData = Data()

  /// Starts `executable` with `arguments` (and `environment` instead of the test's own, when
  /// given), its standard input empty.
  public init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil)
    throws
  {
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    DispatchQueue.global().async(group: group) { [self] in
      outData = stdout.fileHandleForReading.readDataToEndOfFile()
    }
    DispatchQueue.global().async(group: group) { [self] in
      errData = stderr.fileHandleForReading.readDataToEndOfFile()
    }
  }

  /// Its process id.
  public var pid: Int32 { process.processIdentifier }

  /// Sends it `signal` (`SIGSTOP`, `SIGCONT`, `SIGKILL`).
  public func send(_ signal: Int32) { kill(process.processIdentifier, signal) }

  /// Waits for it to end.
  public func wait() -> ProcessResult {
    group.wait()
    process.waitUntilExit()
    return ProcessResult(
      status: process.terminationStatus, stdoutBytes: [UInt8](outData),
      stderr: String(decoding: errData, as: UTF8.self))
  }

  /// Polls `condition` every 10 ms for up to `seconds`.
  /// - Returns: whether it became true.
  public static func eventually(within seconds: Double = 60, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if condition() { return true }
      usleep(10_000)
    }
    return condition()
  }
}

extension RunningProcess {
  /// Python's `sqlite3` holding the write lock of the store at `store` (`BEGIN IMMEDIATE`, as
  /// an app in the middle of a save) until it is killed; returned once it holds it (it creates
  /// `ready` then), or nil when it did not within 30 seconds.
  public static func holdingWriteLock(on store: String, ready: String) throws -> RunningProcess? {
    let holder = try RunningProcess(
      "/usr/bin/env",
      [
        "python3", "-c",
        "import sqlite3,sys,time\nc=sqlite3.connect(sys.argv[1], isolation_level=None)\nc.execute('BEGIN IMMEDIATE')\nopen(sys.argv[2], 'w').close()\ntime.sleep(60)",
        store, ready,
      ])
    guard eventually(within: 30, { FileManager.default.fileExists(atPath: ready) }) else {
      holder.send(SIGKILL)
      _ = holder.wait()
      return nil
    }
    return holder
  }
}
