import Foundation
import TestSupport
import Testing

/// A folder with sample stores and a backup folder, for the tests of cron-grade operations.
struct CronWorkspace {
  static let sampleModel = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Library.xcdatamodeld"
  ).path

  let directory: TemporaryDirectory
  /// The backup folder.
  let backups: String

  init() throws {
    directory = try TemporaryDirectory()
    backups = directory.path("backups").path
    try FileManager.default.createDirectory(atPath: backups, withIntermediateDirectories: true)
  }

  func path(_ name: String) -> String { directory.path(name).path }

  /// A sample store of about `objects` objects (`graphvault sample`), named `name`.
  func sampleStore(_ name: String = "Library.sqlite", objects: Int = 300) throws -> String {
    let store = path(name)
    let result = try BuiltTool.run(["sample", store, "--objects", String(objects), "-q"])
    #expect(result.status == 0, "\(result.stderr)")
    return store
  }

  /// An empty store of the sample model (`graphvault create`): the fastest to back up.
  func emptyStore(_ name: String) throws -> String {
    let store = path(name)
    let result = try BuiltTool.run(["create", store, "--model", Self.sampleModel, "-q"])
    #expect(result.status == 0, "\(result.stderr)")
    return store
  }

  /// A file holding `password` (mode 0600), for `--password-file`.
  func passwordFile(_ password: String, name: String = "password") throws -> String {
    let file = path(name)
    try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: file))
    chmod(file, 0o600)
    return file
  }

  /// The arguments of a backup of `store` into the backup folder.
  func backupArguments(_ store: String, _ extra: [String] = []) -> [String] {
    ["backup", store, "--model", Self.sampleModel, "--output", backups] + extra
  }

  /// Backs `store` up into the backup folder; returns the archive's path.
  @discardableResult
  func backup(_ store: String, _ extra: [String] = []) throws -> String {
    let result = try BuiltTool.run(backupArguments(store, extra))
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// The archives in the backup folder (not hidden files), sorted.
  func archives() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: backups).filter {
      $0.hasSuffix(".gvault") && !$0.hasPrefix(".")
    }.sorted()
  }

  /// The hidden temporary files in `folder`.
  static func temporaries(in folder: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter {
      $0.hasPrefix(".") && $0.contains(".tmp-")
    }.sorted()
  }

  /// Parses a `--json` document.
  static func json(_ result: ProcessResult) throws -> [String: Any] {
    try #require(
      JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any],
      "not a JSON object: \(result.stdout) \(result.stderr)")
  }
}
