import Foundation
import SQLite
import TestSupport
import Testing

@Suite("SQLite connections and statements")
struct DatabaseTests {
  func freshDatabase(_ directory: TemporaryDirectory) throws -> Database {
    try Database(path: directory.path("test.sqlite").path, mode: .readWriteCreate)
  }

  @Test func everyStorageClassRoundTripsThroughBindAndColumn() throws {
    let directory = try TemporaryDirectory()
    let db = try freshDatabase(directory)
    try db.execute("CREATE TABLE t (a, b, c, d, e, f)")
    let insert = try db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)")
    try insert.bind([
      .null, .integer(Int64.min), .real(-0.5), .text("héllo ✓"), .blob([0, 1, 255]), .blob([]),
    ])
    try insert.run()
    let row = try db.prepare("SELECT a, b, c, d, e, f, typeof(f) FROM t").allRows()[0]
    #expect(row[0] == .null)
    #expect(row[1] == .integer(Int64.min))
    #expect(row[2] == .real(-0.5))
    #expect(row[3] == .text("héllo ✓"))
    #expect(row[4] == .blob([0, 1, 255]))
    #expect(row[5] == .blob([]))
    #expect(row[6] == .text("blob"))  // an empty blob stays a blob, not NULL
  }

  @Test func typedColumnAccessorsReadWithoutBoxing() throws {
    let directory = try TemporaryDirectory()
    let db = try freshDatabase(directory)
    try db.execute("CREATE TABLE t (i INTEGER, r FLOAT, s VARCHAR, b BLOB)")
    let insert = try db.prepare("INSERT INTO t VALUES (?, ?, ?, ?)")
    for i in 0..<100 {
      try insert.bind(Int64(i), at: 1)
      try insert.bind(Double(i) / 2, at: 2)
      try insert.bind("row \(i)", at: 3)
      try insert.bind([UInt8(i)], at: 4)
      try insert.run()
    }
    let select = try db.prepare("SELECT i, r, s, b FROM t ORDER BY i")
    #expect(select.columnNames == ["i", "r", "s", "b"])
    #expect(select.declaredType(at: 1) == "FLOAT")
    var count: Int64 = 0
    while try select.step() {
      #expect(select.int64(at: 0) == count)
      #expect(select.double(at: 1) == Double(count) / 2)
      #expect(select.text(at: 2) == "row \(count)")
      #expect(select.withBlob(at: 3) { Array($0) } == [UInt8(count)])
      #expect(select.storageType(at: 3) == .blob)
      count += 1
    }
    #expect(count == 100)
  }

  @Test func aSyntaxErrorCarriesTheCodeMessageAndSql() throws {
    let directory = try TemporaryDirectory()
    let db = try freshDatabase(directory)
    do {
      _ = try db.prepare("SELEC nonsense")
      Issue.record("expected an error")
    } catch {
      #expect(error.primaryCode == 1)  // SQLITE_ERROR
      #expect(error.sql == "SELEC nonsense")
      #expect(error.message.contains("syntax error"))
      #expect(error.description.contains("test.sqlite"))
    }
  }

  @Test func aConstraintViolationIsReportedWithTheStatement() throws {
    let directory = try TemporaryDirectory()
    let db = try freshDatabase(directory)
    try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY)")
    let insert = try db.prepare("INSERT INTO t VALUES (1)")
    try insert.run()
    #expect(throws: SQLiteError.self) { try insert.run() }
    do { try insert.run() } catch {
      #expect(error.primaryCode == 19)  // SQLITE_CONSTRAINT
      #expect(error.sql == "INSERT INTO t VALUES (1)")
    }
  }

  @Test func aFileThatIsNotADatabaseFailsAtOpenNamingThePath() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("notes.txt")
    try Data(String(repeating: "this is not sqlite\n", count: 100).utf8).write(to: path)
    do {
      _ = try Database(path: path.path, mode: .readOnly)
      Issue.record("expected an error")
    } catch {
      #expect(error.isNotADatabase)
      #expect(error.path == path.path)
    }
  }

  @Test func aMissingFileOpenedReadOnlyFailsAndIsNotCreated() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("missing.sqlite").path
    do {
      _ = try Database(path: path, mode: .readOnly)
      Issue.record("expected an error")
    } catch {
      #expect(error.isCannotOpen)
    }
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func pathsWithUriSpecialCharactersOpenTheRightFile() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("odd ?name#1%.sqlite").path
    let db = try Database(path: path, mode: .readWriteCreate)
    try db.execute("CREATE TABLE t (x)")
    #expect(FileManager.default.fileExists(atPath: path))
  }

  @Test func aReadOnlyConnectionRefusesToWrite() throws {
    let directory = try TemporaryDirectory()
    try freshDatabase(directory).execute("CREATE TABLE t (x)")
    let db = try Database(path: directory.path("test.sqlite").path, mode: .readOnly)
    do {
      try db.execute("INSERT INTO t VALUES (1)")
      Issue.record("expected an error")
    } catch {
      #expect(error.primaryCode == 8)  // SQLITE_READONLY
    }
  }
}

@Suite("SQLite's process-wide configuration")
struct SQLiteConfigurationTests {
  @Test func sqliteKeepsNoMemoryStatisticsSoItsAllocationsTakeNoGlobalLock() throws {
    let directory = try TemporaryDirectory()
    let db = try Database(path: directory.path("test.sqlite").path, mode: .readWriteCreate)
    try db.execute("CREATE TABLE t (a TEXT)")
    try db.execute("INSERT INTO t SELECT printf('%.*c', 1000, 'x') FROM (SELECT 1 UNION SELECT 2)")
    #expect(Database.memoryCounted == 0)
  }
}
