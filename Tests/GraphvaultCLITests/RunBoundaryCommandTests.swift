import Foundation
import TestSupport
import Testing

/// Where a run meets its surroundings: a fatal signal ends it with that signal, text from an
/// archive reaches the terminal escaped, a password file others can read is warned about, and
/// `--json` gets its document even for a mistake in the arguments.
@Suite("A run's edges")
struct RunBoundaryCommandTests {
  let directory: TemporaryDirectory

  init() throws { directory = try TemporaryDirectory() }

  @Test(arguments: [SIGQUIT, SIGSEGV, SIGABRT, SIGBUS])
  func aFatalSignalSentToARunEndsItWithThatSignalAndPublishesNothing(signal: Int32) throws {
    // A restore reading standard input that never ends: the run is in the middle of its work.
    let destination = directory.path("Restored-\(signal).sqlite").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: BuiltTool.path)
    process.arguments = ["restore", "-", "--to", destination]
    let input = Pipe()
    process.standardInput = input
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let store = directory.path("Shop-\(signal).sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "200"]).status == 0)
    let archive = try BuiltTool.run(["backup", store, "--output", "-"])
    // Half an archive: the restore has begun and waits for the rest.
    input.fileHandleForWriting.write(
      Data(archive.stdoutBytes.prefix(archive.stdoutBytes.count / 2)))
    Thread.sleep(forTimeInterval: 0.5)
    kill(process.processIdentifier, signal)
    // A run that ignored the signal would wait for the rest of its input forever.
    let ended = RunningProcess.eventually(within: 30) { !process.isRunning }
    #expect(ended, "the run went on after the signal")
    if !ended { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    try? input.fileHandleForWriting.close()
    #expect(process.terminationReason == .uncaughtSignal)
    #expect(process.terminationStatus == signal)
    #expect(!FileManager.default.fileExists(atPath: destination))
  }

  @Test func textFromAnArchiveReachesTheTerminalEscaped() throws {
    let folder = directory.path("backups").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    // A store whose name carries terminal codes: its path is recorded in the archive's header.
    let store = directory.path("Shop\u{1B}]0;owned\u{07}\u{1B}[2J.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "100"]).status == 0)
    let backup = try BuiltTool.run(["backup", store, "--output", folder + "/"])
    #expect(backup.status == 0, "\(backup.stderr)")
    let archive = backup.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    for command in [
      ["list", archive], ["list", folder], ["prune", folder, "--keep-last", "1", "--dry-run"],
    ] {
      let result = try BuiltTool.run(command)
      #expect(result.status == 0, "\(command): \(result.stderr)")
      #expect(!result.stdout.contains("\u{1B}") && !result.stdout.contains("\u{07}"), "\(command)")
      if command.count == 2 && command[1] == archive {
        #expect(result.stdout.contains("Shop\\x1b]0;owned\\x07\\x1b[2J.sqlite"), "\(result.stdout)")
      }
    }
  }

  @Test func aPasswordFileOthersCanReadIsWarnedAboutInTextAndJSON() throws {
    let store = directory.path("Shop.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "100"]).status == 0)
    let password = directory.path("password").path
    try Data("correct horse\n".utf8).write(to: URL(fileURLWithPath: password))
    chmod(password, 0o644)
    let archive = directory.path("a.gvault").path
    let backup = try BuiltTool.run([
      "backup", store, "--output", archive, "--password-file", password, "--json",
    ])
    #expect(backup.status == 0, "\(backup.stderr)")
    #expect(backup.stderr.contains("warning: the password file \(password) can be read by others"))
    let document =
      try JSONSerialization.jsonObject(with: Data(backup.stdoutBytes)) as? [String: Any]
    let warnings = document?["warnings"] as? [String]
    #expect(warnings?.first?.contains("mode 644") == true, "\(backup.stdout)")
    chmod(password, 0o600)
    let quiet = try BuiltTool.run(["verify", archive, "--password-file", password, "--json"])
    #expect(quiet.status == 0)
    #expect(!quiet.stderr.contains("warning"))
    let verified = try JSONSerialization.jsonObject(with: Data(quiet.stdoutBytes)) as? [String: Any]
    #expect(verified?["warnings"] == nil)
  }

  @Test func aMistakeInTheArgumentsGivesTheJSONDocumentToo() throws {
    for arguments in [
      ["backup", "--json", "--no-such-option"], ["verify", "--json"],
      ["prune", "/tmp", "--keep-daily", "-1", "--json"],
    ] {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == 64, "\(arguments)")
      let document =
        try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
      #expect(document?["ok"] as? Bool == false, "\(arguments): \(result.stdout)")
      #expect(document?["status"] as? Int == 64)
      #expect((document?["error"] as? String)?.isEmpty == false)
      #expect(!result.stderr.isEmpty)
    }
    // Without --json, argument-parser's own message only.
    let plain = try BuiltTool.run(["backup", "--no-such-option"])
    #expect(plain.status == 64)
    #expect(plain.stdout.isEmpty)
  }

  /// An export of half an archive on standard input, with `TMPDIR` at `tmp`: it has restored
  /// what it read into a scratch folder and waits there for the rest. Returns the run, its
  /// input, the whole archive, and a listing of `tmp`.
  func exportWaitingForInput(tmp: String, name: String) throws -> (
    process: Process, input: Pipe, archive: Data, scratch: () -> [String]
  ) {
    try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: false)
    let store = directory.path("\(name).sqlite").path
    let archive = directory.path("\(name).gvault").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "200"]).status == 0)
    #expect(try BuiltTool.run(["backup", store, "--output", archive]).status == 0)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: BuiltTool.path)
    process.arguments = ["export", "-", "--output", directory.path("\(name).json").path]
    process.environment = ProcessInfo.processInfo.environment.merging(["TMPDIR": tmp]) { $1 }
    let input = Pipe()
    process.standardInput = input
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
    input.fileHandleForWriting.write(bytes.prefix(bytes.count / 2))
    let scratch = { (try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? [] }
    let started = RunningProcess.eventually(within: 30) {
      scratch().contains { FileManager.default.fileExists(atPath: "\(tmp)/\($0)/.owner") }
    }
    #expect(started, "no scratch folder appeared in \(scratch())")
    return (process, input, bytes, scratch)
  }

  @Test(arguments: [SIGINT, SIGTERM, SIGHUP])
  func aRunStoppedBySignalRemovesItsScratchFolderAndEndsByThatSignal(signal: Int32) throws {
    let tmp = directory.path("tmp-\(signal)").path
    let run = try exportWaitingForInput(tmp: tmp, name: "Stopped-\(signal)")
    kill(run.process.processIdentifier, signal)
    let ended = RunningProcess.eventually(within: 30) { !run.process.isRunning }
    #expect(ended, "the run went on after the signal")
    if !ended { kill(run.process.processIdentifier, SIGKILL) }
    run.process.waitUntilExit()
    try? run.input.fileHandleForWriting.close()
    #expect(run.process.terminationReason == .uncaughtSignal)
    #expect(run.process.terminationStatus == signal)
    #expect(run.scratch().isEmpty, "\(run.scratch())")
    #expect(!FileManager.default.fileExists(atPath: directory.path("Stopped-\(signal).json").path))
  }

  @Test func aKilledRunsScratchFolderIsRemovedByTheNextRunOnceItHasSettled() throws {
    let tmp = directory.path("tmp").path
    let run = try exportWaitingForInput(tmp: tmp, name: "Killed")
    kill(run.process.processIdentifier, SIGKILL)
    run.process.waitUntilExit()
    try? run.input.fileHandleForWriting.close()
    let left = run.scratch()
    #expect(left.count == 1 && left[0].hasPrefix("graphvault-"), "\(left)")

    // The next run leaves a folder that changed in the last minute alone (its run may be
    // starting), and removes it once it has settled.
    let next = ["export", "-", "--output", directory.path("next.json").path, "-q"]
    let env = ["TMPDIR": tmp]
    #expect(try BuiltTool.run(next, input: [UInt8](run.archive), environment: env).status == 0)
    #expect(run.scratch() == left)
    try FileManager.default.setAttributes(
      [.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: "\(tmp)/\(left[0])")
    #expect(
      try BuiltTool.run(next + ["--force"], input: [UInt8](run.archive), environment: env).status
        == 0)
    #expect(run.scratch().isEmpty, "\(run.scratch())")
  }
}
