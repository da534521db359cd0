import Foundation
import SQLite
import TestSupport
import Testing

@Suite("SQLite transactions")
struct TransactionTests {
  struct Boom: Error {}

  @Test func aTransactionThatThrowsIsRolledBack() throws {
    let directory = try TemporaryDirectory()
    let db = try Database(path: directory.path("t.sqlite").path, mode: .readWriteCreate)
    try db.execute("CREATE TABLE t (x)")
    #expect(throws: Boom.self) {
      try db.transaction { db in
        try db.execute("INSERT INTO t VALUES (1)")
        throw Boom()
      }
    }
    #expect(try db.prepare("SELECT count(*) FROM t").scalar() == .integer(0))
    #expect(!db.isInTransaction)
  }

  @Test func aTransactionThatReturnsIsCommitted() throws {
    let directory = try TemporaryDirectory()
    let db = try Database(path: directory.path("t.sqlite").path, mode: .readWriteCreate)
    try db.execute("CREATE TABLE t (x)")
    let changed = try db.transaction(.immediate) { db in
      try db.execute("INSERT INTO t VALUES (1), (2)")
      return db.changes
    }
    #expect(changed == 2)
    #expect(try db.prepare("SELECT count(*) FROM t").scalar() == .integer(2))
  }

  @Test func aReadTransactionSeesOneSnapshotWhileAnotherConnectionWrites() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("wal.sqlite").path
    let writer = try Database(path: path, mode: .readWriteCreate)
    try writer.executeScript(
      "PRAGMA journal_mode=WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1)")
    let reader = try Database(path: path, mode: .readOnly)
    try reader.read { db in
      #expect(try db.prepare("SELECT count(*) FROM t").scalar() == .integer(1))
      try writer.execute("INSERT INTO t VALUES (2), (3)")
      #expect(try db.prepare("SELECT count(*) FROM t").scalar() == .integer(1))
    }
    #expect(try reader.prepare("SELECT count(*) FROM t").scalar() == .integer(3))
  }
}
