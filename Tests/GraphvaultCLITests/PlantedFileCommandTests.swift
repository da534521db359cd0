import Foundation
import TestSupport
import Testing

/// Files planted under the names graphvault gives its lock files, in a folder others may write
/// to, never make a run write to another file: every command refuses, naming the lock file,
/// and what the planted name points at keeps its bytes and its mode.
@Suite("Files planted at graphvault's names")
struct PlantedFileCommandTests {
  let workspace: TemporaryDirectory
  let store: String
  let folder: String
  let secret: String

  init() throws {
    workspace = try TemporaryDirectory()
    store = workspace.path("Shop.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "200"]).status == 0)
    folder = workspace.path("backups").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    #expect(try BuiltTool.run(["backup", store, "--output", folder + "/", "-q"]).status == 0)
    secret = workspace.path("secret").path
    try Data("root's secret\n".utf8).write(to: URL(fileURLWithPath: secret))
    chmod(secret, 0o600)
  }

  func isUntouched(_ path: String) throws -> Bool {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return try String(contentsOfFile: path, encoding: .utf8) == "root's secret\n"
      && (attributes[.posixPermissions] as? Int) == 0o600
  }

  func archive() throws -> String {
    let names = try FileManager.default.contentsOfDirectory(atPath: folder)
    return folder + "/" + (try #require(names.first { $0.hasSuffix(".gvault") }))
  }

  /// Each command with the lock name it takes, relative to the workspace.
  func cases() throws -> [(arguments: [String], lock: String)] {
    let archive = try archive()
    return [
      (["backup", store, "--output", folder + "/"], "backups/.graphvault-folder.lock"),
      (["backup", store, "--output", folder + "/"], "backups/.graphvault-backup-Shop.lock"),
      (["prune", folder + "/", "--keep-last", "1"], "backups/.graphvault-folder.lock"),
      (["restore", archive, "--to", workspace.path("R.sqlite").path], ".R.sqlite.lock"),
      (["restore", archive, "--to", store, "--force"], ".Shop.sqlite.lock"),
    ]
  }

  @Test func aSymbolicLinkAtALocksNameIsRefusedAndItsTargetKeepsItsBytesAndMode() throws {
    for (arguments, lock) in try cases() {
      let planted = workspace.path(lock).path
      try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: secret)
      let result = try BuiltTool.run(arguments)
      #expect(result.status == 74, "\(arguments[0]) \(lock): \(result.stdout)")
      #expect(result.stderr.contains("symbolic link"), "\(arguments[0]) \(lock): \(result.stderr)")
      #expect(result.stderr.contains(lock), "\(result.stderr)")
      #expect(try isUntouched(secret), "\(arguments[0]) \(lock)")
      try FileManager.default.removeItem(atPath: planted)
    }
  }

  @Test func aHardLinkAtALocksNameIsRefusedAndItsTargetKeepsItsBytesAndMode() throws {
    for (arguments, lock) in try cases() {
      let planted = workspace.path(lock).path
      #expect(link(secret, planted) == 0)
      let result = try BuiltTool.run(arguments)
      #expect(result.status == 74, "\(arguments[0]) \(lock): \(result.stdout)")
      #expect(result.stderr.contains("not a plain file"), "\(arguments[0]): \(result.stderr)")
      #expect(try isUntouched(secret), "\(arguments[0]) \(lock)")
      try FileManager.default.removeItem(atPath: planted)
    }
  }
}
