import DurableIO
import Foundation
import TestSupport
import Testing

@Suite("Files written beside their final name")
struct PendingFileTests {
  static func names(in directory: TemporaryDirectory) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
  }

  @Test func nothingIsVisibleUnderTheFinalNameUntilPublished() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("a.gvault").path
    let file = try PendingFile(creating: path, mode: 0o600)
    try Array("hello".utf8).withUnsafeBytes { try file.write($0) }
    #expect(!FileManager.default.fileExists(atPath: path))
    #expect(try Self.names(in: directory).count == 1)
    try file.publish()
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "hello")
    #expect(try Self.names(in: directory) == ["a.gvault"])
    #expect(file.bytesWritten == 5)
    let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    #expect(mode == 0o600)
  }

  @Test func anAbandonedFileLeavesNothingAndKeepsWhatWasThere() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("a.gvault").path
    try Data("old".utf8).write(to: URL(fileURLWithPath: path))
    do {
      let file = try PendingFile(creating: path)
      try Array("new".utf8).withUnsafeBytes { try file.write($0) }
      file.abandon()
    }
    #expect(try Self.names(in: directory) == ["a.gvault"])
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
  }

  @Test func aFileReleasedUnpublishedIsRemoved() throws {
    let directory = try TemporaryDirectory()
    do {
      let file = try PendingFile(creating: directory.path("a.gvault").path)
      try Array("x".utf8).withUnsafeBytes { try file.write($0) }
    }
    #expect(try Self.names(in: directory).isEmpty)
  }

  @Test func aMissingFolderIsAnErrorNamingThePath() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("missing/a.gvault").path
    #expect {
      _ = try PendingFile(creating: path)
    } throws: { error in
      (error as? DurableIOError)?.errno == ENOENT
        && (error as? DurableIOError)?.description.contains("missing") == true
    }
  }

  @Test func aDatabaseBuiltBesideReplacesTheOldOneAndItsSidecars() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("store.sqlite").path
    for suffix in ["", "-wal", "-shm"] {
      try Data("old".utf8).write(to: URL(fileURLWithPath: path + suffix))
    }
    try DurableFile.buildDatabase(at: path) { temporary in
      try Data("new".utf8).write(to: URL(fileURLWithPath: temporary))
    }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "new")
    #expect(try Self.names(in: directory) == ["store.sqlite"])
  }

  @Test func aFailedBuildLeavesTheOldDatabaseAndNoTemporaryFiles() throws {
    struct Failure: Error {}
    let directory = try TemporaryDirectory()
    let path = directory.path("store.sqlite").path
    try Data("old".utf8).write(to: URL(fileURLWithPath: path))
    #expect(throws: Failure.self) {
      try DurableFile.buildDatabase(at: path) { temporary in
        try Data("half".utf8).write(to: URL(fileURLWithPath: temporary))
        try Data("j".utf8).write(to: URL(fileURLWithPath: temporary + "-journal"))
        throw Failure()
      }
    }
    #expect(try Self.names(in: directory) == ["store.sqlite"])
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
  }
}
