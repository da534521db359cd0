import Foundation

/// What a finished child process printed, and how it ended.
public struct ProcessResult: Sendable {
  /// The exit status.
  public let status: Int32
  /// Standard output, as bytes.
  public let stdoutBytes: [UInt8]
  /// Standard error, as text.
  public let stderr: String
  /// Standard output, as text.
  public var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
}

/// Runs programs for tests: the built `graphvault` binary, `python3`, `bsdtar`.
public enum Subprocess {
  /// Runs `executable` (a path, or a name looked up on `PATH`) with `arguments`, feeding it
  /// `input` on standard input, in `directory` (the test's own when nil), and waits for it.
  public static func run(
    _ executable: String, _ arguments: [String], input: [UInt8] = [],
    environment: [String: String]? = nil, directory: String? = nil
  ) throws -> ProcessResult {
    let process = Process()
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let executable = executable == "python3" ? python3 : executable
    if executable.contains("/") {
      process.executableURL = URL(fileURLWithPath: executable)
      process.arguments = arguments
    } else {
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = [executable] + arguments
    }
    if let environment { process.environment = environment }
    let stdin = Pipe()
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardInput = stdin
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    // Read both pipes concurrently with writing, so a chatty child never blocks on a full pipe.
    let group = DispatchGroup()
    nonisolated(unsafe) var outData = Data()
    nonisolated(unsafe) var errData = Data()
    DispatchQueue.global().async(group: group) {
      outData = stdout.fileHandleForReading.readDataToEndOfFile()
    }
    DispatchQueue.global().async(group: group) {
      errData = stderr.fileHandleForReading.readDataToEndOfFile()
    }
    if !input.isEmpty { stdin.fileHandleForWriting.write(Data(input)) }
    try stdin.fileHandleForWriting.close()
    group.wait()
    process.waitUntilExit()
    return ProcessResult(
      status: process.terminationStatus, stdoutBytes: [UInt8](outData),
      stderr: String(decoding: errData, as: UTF8.self))
  }

  /// The interpreter `python3` on `PATH` runs, found once: a version manager's `python3` (pyenv's
  /// is a shell script) costs several times the interpreter's own start on every call, and the
  /// tests call Python thousands of times. `python3` itself when it cannot be asked.
  public static let python3: String = {
    guard
      let asked = try? run("/usr/bin/env", ["python3", "-c", "import sys; print(sys.executable)"]),
      asked.status == 0
    else { return "python3" }
    let path = asked.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    return FileManager.default.isExecutableFile(atPath: path) ? path : "python3"
  }()

  /// Runs a Python 3 script (given as source) with `arguments` and `input`.
  public static func python(
    _ script: String, _ arguments: [String] = [], input: [UInt8] = []
  ) throws -> ProcessResult {
    try run("python3", ["-c", script] + arguments, input: input)
  }

  /// Whether a program is on `PATH`.
  public static func isInstalled(_ name: String) -> Bool {
    (try? run("sh", ["-c", "command -v \(name)"]).status) == 0
  }
}
