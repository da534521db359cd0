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

  @Test func aDatabaseReplacingAPrivateOneIsPrivateFromItsFirstByte() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("store.sqlite").path
    try Data("old".utf8).write(to: URL(fileURLWithPath: path))
    chmod(path, 0o600)
    var seen: mode_t = 0
    try DurableFile.buildDatabase(at: path) { temporary in
      var status = stat()
      #expect(stat(temporary, &status) == 0)
      seen = status.st_mode & 0o777
      try Data("new".utf8).write(to: URL(fileURLWithPath: temporary))
    }
    #expect(seen == 0o600)
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
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

  @Test func filesGetTheModeAskedForWhateverTheUmask() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("a.gvault").path
    let file = try PendingFile(creating: path, mode: 0o600)
    try file.publish()
    let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    #expect(mode == 0o600)
  }

  @Test func aPublishThatMustNotReplaceKeepsAFileThatAppearedMeanwhile() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("a.gvault").path
    let file = try PendingFile(creating: path)
    try Array("new".utf8).withUnsafeBytes { try file.write($0) }
    try Data("old".utf8).write(to: URL(fileURLWithPath: path))
    #expect {
      try file.publish(replacing: false)
    } throws: { ($0 as? DurableIOError)?.errno == EEXIST }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
    #expect(try Self.names(in: directory) == ["a.gvault"])
  }

  @Test func onlyTemporariesWhoseWriterIsGoneAreAbandoned() throws {
    let directory = try TemporaryDirectory()
    let living = try PendingFile(creating: directory.path("a.gvault").path)
    // A dead run's temporary database, its journal, and an orphaned journal.
    let dead = directory.path(".b.sqlite.tmp-1").path
    for name in [dead, dead + "-journal", directory.path(".c.sqlite.tmp-2-journal").path] {
      try Data("x".utf8).write(to: URL(fileURLWithPath: name))
    }
    let abandoned = DurableFile.abandonedTemporaries(in: directory.url.path).map {
      URL(fileURLWithPath: $0).lastPathComponent
    }
    #expect(abandoned == [".b.sqlite.tmp-1", ".b.sqlite.tmp-1-journal", ".c.sqlite.tmp-2-journal"])
    #expect(
      DurableFile.abandonedTemporaries(in: directory.url.path, of: "b.sqlite").count == 2)
    living.abandon()
  }

  @Test func aDatabaseBeingBuiltIsNeverTakenForALeftover() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("s.sqlite").path
    try DurableFile.buildDatabase(at: path) { temporary in
      try Data().write(to: URL(fileURLWithPath: temporary + "-journal"))
      #expect(DurableFile.abandonedTemporaries(in: directory.url.path).isEmpty)
      try Data("db".utf8).write(to: URL(fileURLWithPath: temporary))
      try? FileManager.default.removeItem(atPath: temporary + "-journal")
    }
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "db")
  }
}
