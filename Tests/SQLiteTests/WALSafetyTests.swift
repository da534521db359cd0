import Foundation
import SQLite
import TestSupport
import Testing

/// A backup reads stores that apps may still be using: reading must not checkpoint the WAL,
/// delete it, or change the main file.
@Suite("Reading WAL databases without changing them")
struct WALSafetyTests {
  func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

  /// Makes a database whose rows live only in its `-wal`, by copying the files while the writer
  /// is still open (as an app's store looks on disk).
  func walOnlyDatabase(in directory: TemporaryDirectory) throws -> String {
    let livePath = directory.path("live.sqlite").path
    let writer = try Database(path: livePath, mode: .readWriteCreate)
    try writer.executeScript(
      """
      PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
      CREATE TABLE t (x);
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500)
      INSERT INTO t SELECT i FROM n;
      """)
    let copy = directory.path("copy.sqlite").path
    for suffix in ["", "-wal"] {
      try FileManager.default.copyItem(atPath: livePath + suffix, toPath: copy + suffix)
    }
    return copy
  }

  @Test func aReadOnlyReadLeavesTheMainFileAndWalByteIdentical() throws {
    let directory = try TemporaryDirectory()
    let path = try walOnlyDatabase(in: directory)
    let mainBefore = try bytes(path)
    let walBefore = try bytes(path + "-wal")
    #expect(walBefore.count > 4096)
    do {
      let db = try Database(path: path, mode: .readOnly)
      let count = try db.read { db in try db.prepare("SELECT count(*) FROM t").scalar() }
      #expect(count == .integer(500))
    }
    #expect(try bytes(path) == mainBefore)
    #expect(try bytes(path + "-wal") == walBefore)
  }

  @Test(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func theWalOnlyFixtureStoreReadsFullyAndStaysByteIdentical() throws {
    let directory = try TemporaryDirectory()
    let store = try SharedFixtures.copyStore(
      "CoreDataMigration-Example/Stores/CoreDataMigration_Example_WAL.sqlite", into: directory.url)
    let mainBefore = try bytes(store.path)
    let walBefore = try bytes(store.path + "-wal")
    do {
      let db = try Database(path: store.path, mode: .readOnly)
      let counts = try db.read { db in
        (
          try db.prepare("SELECT count(*) FROM ZPOST").scalar(),
          try db.prepare("SELECT count(*) FROM ZCOLOR").scalar()
        )
      }
      #expect(counts.0 == .integer(84))
      #expect(counts.1 == .integer(84))
    }
    #expect(try bytes(store.path) == mainBefore)
    #expect(try bytes(store.path + "-wal") == walBefore)
  }
}
