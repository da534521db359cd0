import Foundation
import SQLite
import TestSupport
import Testing

@Suite("Tables written page by page without SQLite")
struct TableTreeWriterTests {
  /// A value as a test row holds it, and how it is given to SQLite and to the writer.
  enum Value: Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    var sqlite: SQLiteValue {
      switch self {
      case .null: .null
      case .integer(let v): .integer(v)
      case .real(let v): .real(v)
      case .text(let v): .text(v)
      case .blob(let v): .blob(v)
      }
    }

    /// Sets `self` into `record`'s column `column`; whether the writer took it.
    func set(into record: inout RowRecord, at column: Int, keeping texts: inout [[UInt8]]) -> Bool {
      switch self {
      case .null:
        record.setNull(at: column)
        return true
      case .integer(let v): return record.setInteger(v, at: column)
      case .real(let v): return record.setReal(v, at: column)
      case .text(let v):
        texts.append(Array(v.utf8))
        return texts[texts.count - 1].withUnsafeBytes { record.setText($0, at: column) }
      case .blob(let v):
        texts.append(v)
        texts[texts.count - 1].withUnsafeBytes { record.setBlob($0, at: column) }
        return true
      }
    }
  }

  static let columns = [
    ("id", "INTEGER PRIMARY KEY"), ("n", "INTEGER"), ("r", "FLOAT"), ("s", "VARCHAR"),
    ("b", "BLOB"), ("t", "TIMESTAMP"), ("d", "DECIMAL"), ("x", ""),
  ]

  static func createTable(in db: Database, _ name: String = "t") throws {
    let list = columns.map { "\($0.0) \($0.1)" }.joined(separator: ", ")
    try db.execute("CREATE TABLE \(name) (\(list))")
  }

  static func makeDatabase(_ path: String, pageSize: Int, autoVacuum: Int) throws -> Database {
    let db = try Database(path: path, mode: .readWriteCreate)
    try db.execute("PRAGMA page_size = \(pageSize)")
    try db.execute("PRAGMA auto_vacuum = \(autoVacuum)")
    try createTable(in: db)
    try db.execute("CREATE TABLE other (a INTEGER PRIMARY KEY, b BLOB)")
    try db.execute("INSERT INTO other VALUES (1, zeroblob(3000))")
    return db
  }

  static func rootPage(of table: String, in db: Database) throws -> UInt32 {
    let statement = try db.prepare("SELECT rootpage FROM sqlite_master WHERE name = ?")
    try statement.bind(.text(table), at: 1)
    guard case .integer(let page) = try statement.scalar() else { return 0 }
    return UInt32(page)
  }

  /// Every row of `table`, each value with its storage class, in rowid order.
  static func dump(_ db: Database, _ table: String = "t") throws -> [[SQLiteValue]] {
    let names = columns.map(\.0)
    let list = names.map { "\($0), typeof(\($0))" }.joined(separator: ", ")
    return try db.prepare("SELECT rowid, \(list) FROM \(table) ORDER BY rowid").allRows()
  }

  static func integrity(_ db: Database) throws -> [SQLiteValue] {
    try db.prepare("PRAGMA integrity_check").allRows().map { $0[0] }
  }

  /// Random rows: small and large texts and blobs (some past a page, some past several),
  /// integers of every width, reals whole and not, NULLs.
  static func randomRows(count: Int, seed: UInt64) -> [(Int64, [Value])] {
    var generator = SeededRandom(seed: seed)
    var rowid: Int64 = Int64.random(in: -5...5, using: &generator)
    var rows: [(Int64, [Value])] = []
    for _ in 0..<count {
      rowid += Int64.random(in: 1...3, using: &generator)
      func bytes(_ most: Int) -> [UInt8] {
        let length = Int.random(in: 0...most, using: &generator)
        return (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
      }
      let big = Int.random(in: 0..<10, using: &generator) == 0
      let widths: [Int64] = [1, 127, 32767, 8_388_607, 2_147_483_647, 140_737_488_355_327, .max]
      let width = widths.randomElement(using: &generator)!
      rows.append(
        (
          rowid,
          [
            .null,
            Bool.random(using: &generator)
              ? .integer(Int64.random(in: -width...width, using: &generator)) : .null,
            .real(Double(Int.random(in: -1000...1000, using: &generator)) / 4),
            .text(
              String(
                repeating: "ä", count: Int.random(in: 0...(big ? 3000 : 40), using: &generator))),
            .blob(bytes(big ? 9000 : 60)),
            .real(Double(Int.random(in: 0...100, using: &generator)) / 2),
            .integer(Int64.random(in: -3...3, using: &generator)),
            Bool.random(using: &generator) ? .real(0.5) : .blob(bytes(3)),
          ]
        ))
    }
    return rows
  }

  @Test(arguments: [(512, 0), (512, 1), (1024, 2), (4096, 2), (65536, 1)])
  func aTableWrittenPageByPageReadsBackAsInsertedRowsAndPassesIntegrityCheck(
    pageSize: Int, autoVacuum: Int
  ) throws {
    let directory = try TemporaryDirectory()
    let rows = Self.randomRows(
      count: pageSize >= 4096 ? 3000 : 1500, seed: UInt64(pageSize + autoVacuum))
    let reference = try Self.makeDatabase(
      directory.path("reference.sqlite").path, pageSize: pageSize, autoVacuum: autoVacuum)
    let insert = try reference.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    for (rowid, values) in rows {
      try insert.bind([.integer(rowid)] + values.dropFirst().map(\.sqlite))
      try insert.run()
    }

    let path = directory.path("written.sqlite").path
    let root = try {
      let db = try Self.makeDatabase(path, pageSize: pageSize, autoVacuum: autoVacuum)
      return try Self.rootPage(of: "t", in: db)
    }()
    let file = try PageFile(path: path)
    let writer = TableTreeWriter(file: file, root: root)
    var record = RowRecord(
      affinities: Self.columns.map { ColumnAffinity(declaredType: $0.1) }, rowidColumn: 0)
    for (rowid, values) in rows {
      var kept: [[UInt8]] = []
      record.clear()
      record.setInteger(rowid, at: 0)
      for (column, value) in values.enumerated().dropFirst() {
        #expect(value.set(into: &record, at: column, keeping: &kept))
      }
      record.encode()
      try record.bytes.withUnsafeBytes { try writer.append(rowid: record.rowid, record: $0) }
    }
    try writer.finish()
    try file.finish()

    let written = try Database(path: path)
    #expect(try Self.integrity(written) == [.text("ok")])
    #expect(try Self.dump(written) == Self.dump(reference))
    #expect(try written.prepare("SELECT length(b) FROM other").allRows() == [[.integer(3000)]])
    // SQLite goes on changing the tree as its own: rows in the middle, at the end, gone.
    try written.execute(
      "INSERT INTO t (id, s) SELECT id + 1, 'later' FROM t WHERE id % 7 = 0 AND id + 1 NOT IN (SELECT id FROM t)"
    )
    try written.execute("INSERT INTO t (id, b) VALUES (9000000, zeroblob(20000))")
    try written.execute("DELETE FROM t WHERE id % 5 = 0")
    try written.execute("UPDATE t SET s = 'x' WHERE id % 3 = 0")
    try written.execute("CREATE INDEX t_n ON t (n)")
    #expect(try Self.integrity(written) == [.text("ok")])
    if autoVacuum == 1 {
      try written.execute("DELETE FROM t")
      #expect(try Self.integrity(written) == [.text("ok")])
    }
  }

  @Test func aTableWithNoRowAppendedKeepsItsEmptyRootAndOneRowStaysInTheRoot() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("one.sqlite").path
    let root = try {
      let db = try Self.makeDatabase(path, pageSize: 4096, autoVacuum: 2)
      try db.execute("CREATE TABLE u (id INTEGER PRIMARY KEY, v)")
      return try Self.rootPage(of: "u", in: db)
    }()
    let file = try PageFile(path: path)
    let empty = TableTreeWriter(
      file: file, root: try Self.rootPage(of: "t", in: Database(path: path)))
    try empty.finish()
    let one = TableTreeWriter(file: file, root: root)
    var record = RowRecord(affinities: [.integer, .blob], rowidColumn: 0)
    record.setInteger(42, at: 0)
    let payload = [UInt8](repeating: 7, count: 100_000)
    payload.withUnsafeBytes { record.setBlob($0, at: 1) }
    record.encode()
    try record.bytes.withUnsafeBytes { try one.append(rowid: 42, record: $0) }
    try one.finish()
    try file.finish()
    let db = try Database(path: path)
    #expect(try Self.integrity(db) == [.text("ok")])
    #expect(try db.prepare("SELECT count(*) FROM t").scalar() == .integer(0))
    #expect(try db.prepare("SELECT id, v FROM u").allRows() == [[.integer(42), .blob(payload)]])
  }

  /// Each kind of value in each affinity: what the writer stores reads back as what an insert
  /// stores, and what it declines is what SQLite would turn into or out of text.
  @Test func valuesAreConvertedByTheirColumnsAffinityAsAnInsertConvertsThem() throws {
    let values: [Value] = [
      .null, .integer(0), .integer(1), .integer(-1), .integer(127), .integer(128), .integer(-129),
      .integer(140_737_488_355_327), .integer(140_737_488_355_328), .integer(-140_737_488_355_328),
      .integer(-140_737_488_355_329), .integer(.max), .integer(.min), .real(0), .real(-0.0),
      .real(1), .real(2.5), .real(-7), .real(1e15), .real(1e300), .real(9_223_372_036_854_775_807),
      .real(-9_223_372_036_854_775_808), .real(.infinity), .real(.nan), .real(140_737_488_355_328),
      .text(""), .text("12"), .text("abc"), .blob([]), .blob([0x31]),
    ]
    let directory = try TemporaryDirectory()
    let path = directory.path("affinity.sqlite").path
    let db = try Database(path: path, mode: .readWriteCreate)
    try Self.createTable(in: db)
    let root = try Self.rootPage(of: "t", in: db)
    try Self.createTable(in: db, "reference")
    let affinities = Self.columns.map { ColumnAffinity(declaredType: $0.1) }
    var declined: [String] = []
    var rows: [(Int64, [UInt8])] = []
    var rowid: Int64 = 0
    for value in values {
      for column in 1..<Self.columns.count {
        rowid += 1
        var record = RowRecord(affinities: affinities, rowidColumn: 0)
        record.setInteger(rowid, at: 0)
        var kept: [[UInt8]] = []
        guard value.set(into: &record, at: column, keeping: &kept) else {
          declined.append("\(Self.columns[column].1) \(value)")
          continue
        }
        record.encode()
        rows.append((rowid, record.bytes))
        let insert = try db.prepare(
          "INSERT INTO reference (id, \(Self.columns[column].0)) VALUES (?, ?)")
        try insert.bind([.integer(rowid), value.sqlite])
        try insert.run()
      }
    }
    let file = try PageFile(path: path)
    let writer = TableTreeWriter(file: file, root: root)
    for (rowid, bytes) in rows {
      try bytes.withUnsafeBytes { try writer.append(rowid: rowid, record: $0) }
    }
    try writer.finish()
    try file.finish()
    let reopened = try Database(path: path)
    #expect(try Self.integrity(reopened) == [.text("ok")])
    #expect(try Self.dump(reopened) == Self.dump(reopened, "reference"))
    // Declined: numbers in the text column, texts in the numeric ones.
    let numbers = values.filter {
      if case .integer = $0 { return true }
      if case .real(let v) = $0 { return !v.isNaN }
      return false
    }
    let texts = values.filter { if case .text = $0 { return true } else { return false } }
    #expect(declined.count == numbers.count + texts.count * 4)
    #expect(declined.filter { $0.hasPrefix("VARCHAR") }.count == numbers.count)
  }

  @Test func pagesAreNumberedPastPointerMapsAndTheLockBytePage() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("numbers.sqlite").path
    _ = try Self.makeDatabase(path, pageSize: 65536, autoVacuum: 1)
    let file = try PageFile(path: path)
    let first = file.pageCount
    var pages: [UInt32] = []
    for _ in 0..<30_000 { pages.append(file.allocate()) }
    // The file format's rule, spelled independently: a pointer-map page every
    // usable / 5 + 1 pages from page 2, none on the page holding byte 2^30 (page 16385 at
    // 64 KiB pages), which is never used.
    let span = 65536 / 5 + 1
    let lockByte: UInt32 = 1_073_741_824 / 65536 + 1
    var expected: [UInt32] = []
    var page = first + 1
    while expected.count < 30_000 {
      let isMap = (Int(page) - 2) % span == 0
      if !isMap && page != lockByte { expected.append(page) }
      page += 1
    }
    #expect(pages == expected)
    #expect(!pages.contains(lockByte))
    #expect(file.isPointerMap(2) && file.isPointerMap(UInt32(2 + span)))
  }
}
