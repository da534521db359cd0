import Foundation
import SQLite
import TestSupport
import Testing

@Suite("Indexes written page by page without SQLite")
struct IndexTreeWriterTests {
  /// Writes a table `t (id INTEGER PRIMARY KEY, n INTEGER)` of `rows` and its index `t_n` on
  /// `n`, both page by page, into a new database at `path`; returns it opened by SQLite.
  static func write(
    _ rows: [(id: Int64, n: Int64?)], at path: String, pageSize: Int, autoVacuum: Int
  ) throws -> Database {
    let (tableRoot, indexRoot) = try {
      let db = try Database(path: path, mode: .readWriteCreate)
      try db.execute("PRAGMA page_size = \(pageSize)")
      try db.execute("PRAGMA auto_vacuum = \(autoVacuum)")
      try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")
      try db.execute("CREATE INDEX t_n ON t (n)")
      return (
        try TableTreeWriterTests.rootPage(of: "t", in: db),
        try TableTreeWriterTests.rootPage(of: "t_n", in: db)
      )
    }()
    let file = try PageFile(path: path)
    let table = TableTreeWriter(file: file, root: tableRoot)
    var record = RowRecord(affinities: [.integer, .integer], rowidColumn: 0)
    for row in rows.sorted(by: { $0.id < $1.id }) {
      record.clear()
      record.setInteger(row.id, at: 0)
      if let n = row.n { record.setInteger(n, at: 1) }
      record.encode()
      try record.bytes.withUnsafeBytes { try table.append(rowid: row.id, record: $0) }
    }
    try table.finish()
    // The index's order: NULLs first, then by value, then by rowid.
    let ordered = rows.sorted {
      switch ($0.n, $1.n) {
      case (nil, nil): $0.id < $1.id
      case (nil, _): true
      case (_, nil): false
      case (let a?, let b?): a == b ? $0.id < $1.id : a < b
      }
    }
    var index = IndexTreeWriter(file: file, root: indexRoot)
    for row in ordered {
      var key: [UInt8] = []
      RowRecord.appendIndexKey(row.n, rowid: row.id, to: &key)
      try index.append(key)
    }
    try index.finish()
    try file.finish()
    return try Database(path: path)
  }

  /// What SQLite reads through the index, and without it.
  static func expectIndexAgrees(_ db: Database, probes: [Int64]) throws {
    #expect(try TableTreeWriterTests.integrity(db) == [.text("ok")])
    let indexed = try db.prepare("SELECT n, id FROM t INDEXED BY t_n ORDER BY n, id").allRows()
    let scanned = try db.prepare("SELECT n, id FROM t NOT INDEXED ORDER BY n, id").allRows()
    #expect(indexed == scanned)
    for probe in probes {
      let statement = try db.prepare("SELECT id FROM t INDEXED BY t_n WHERE n = ? ORDER BY id")
      try statement.bind(.integer(probe), at: 1)
      let plain = try db.prepare("SELECT id FROM t NOT INDEXED WHERE n = ? ORDER BY id")
      try plain.bind(.integer(probe), at: 1)
      #expect(try statement.allRows() == plain.allRows())
    }
  }

  @Test func everyNumberOfKeysMakesATreeThatSQLiteReadsAndChecksAsItsOwn() throws {
    // Small pages hold a few dozen keys: these counts end a leaf full, one key past full and
    // in between, at one and two levels; from 2,367 keys the leaves' parent is full when the
    // last leaf's divider comes, at three levels.
    let directory = try TemporaryDirectory()
    for count in Array(0...130) + Array(2_360...2_372) + [3_000] {
      let rows = (0..<count).map { (id: Int64($0 + 1), n: Int64?(Int64($0 % 7))) }
      let db = try Self.write(
        rows, at: directory.path("keys-\(count).sqlite").path, pageSize: 512, autoVacuum: 0)
      #expect(try TableTreeWriterTests.integrity(db) == [.text("ok")], "\(count) keys")
      #expect(
        try db.prepare("SELECT count(*) FROM t INDEXED BY t_n WHERE n >= 0").scalar()
          == .integer(Int64(count)))
    }
  }

  @Test(arguments: [(512, 0), (1024, 2), (4096, 2), (65536, 1)])
  func anIndexOfNullsAndIntegersOfEveryWidthAgreesWithTheTableAndTakesSQLiteChanges(
    pageSize: Int, autoVacuum: Int
  ) throws {
    let directory = try TemporaryDirectory()
    var generator = SeededRandom(seed: UInt64(pageSize + autoVacuum))
    let widths: [Int64] = [1, 127, 32767, 8_388_607, 2_147_483_647, 140_737_488_355_327, .max]
    var id: Int64 = -3
    var rows: [(id: Int64, n: Int64?)] = []
    for _ in 0..<(pageSize >= 4096 ? 60_000 : 20_000) {
      id += Int64.random(in: 1...4, using: &generator)
      let width = widths.randomElement(using: &generator)!
      let n: Int64? =
        Int.random(in: 0..<6, using: &generator) == 0
        ? nil
        : Bool.random(using: &generator)
          ? Int64.random(in: -3...3, using: &generator)
          : Int64.random(in: -width...width, using: &generator)
      rows.append((id, n))
    }
    rows.append((id + 1, .min))
    rows.append((id + 2, .max))
    let db = try Self.write(
      rows, at: directory.path("index.sqlite").path, pageSize: pageSize, autoVacuum: autoVacuum)
    try Self.expectIndexAgrees(db, probes: [0, 1, -1, 3, .min, .max, 12345])
    // SQLite goes on changing the index as its own.
    try db.execute("INSERT INTO t (n) SELECT n + 1 FROM t WHERE id % 11 = 0 AND n < 1000")
    try db.execute("DELETE FROM t WHERE id % 5 = 0")
    try db.execute("UPDATE t SET n = NULL WHERE id % 13 = 0")
    try Self.expectIndexAgrees(db, probes: [0, 1, 2, 4])
  }

  @Test func anIndexGivenNoKeyKeepsItsEmptyRoot() throws {
    let directory = try TemporaryDirectory()
    let db = try Self.write(
      [], at: directory.path("empty.sqlite").path, pageSize: 4096, autoVacuum: 2)
    try Self.expectIndexAgrees(db, probes: [0])
    #expect(try db.prepare("SELECT count(*) FROM t INDEXED BY t_n").scalar() == .integer(0))
  }
}
