import Foundation
import SQLite
import TestSupport
import Testing

@Suite("Index keys sorted byte by byte")
struct IndexSortKeyTests {
  /// A value of an indexed column: NULL, an integer, a text or a blob.
  enum Value: Equatable {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])

    var sqlite: SQLiteValue {
      switch self {
      case .null: .null
      case .integer(let value): .integer(value)
      case .text(let value): .text(value)
      case .blob(let value): .blob(value)
      }
    }
  }

  /// Values that try the order's edges: integers of every width and sign, texts and blobs
  /// that begin one another, hold zero bytes or end in them, empty ones, equal bytes as a text
  /// and as a blob.
  static func randomValue(using generator: inout SeededRandom) -> Value {
    let pieces: [[UInt8]] = [
      [], [0], [0, 0], [0, 0xFF], [0xFF], [1], [0x61], [0x61, 0], [0x61, 0x62],
    ]
    var bytes: [UInt8] = []
    for _ in 0..<Int.random(in: 0...3, using: &generator) {
      bytes += pieces.randomElement(using: &generator)!
    }
    switch Int.random(in: 0..<8, using: &generator) {
    case 0: return .null
    case 1:
      return .integer(
        [.min, .max, -1, 0, 1, 127, 128, -129, 40_000, 1 << 40].randomElement(using: &generator)!)
    case 2: return .integer(Int64.random(in: -300...300, using: &generator))
    case 3, 4:
      // A text of the bytes that are valid UTF-8 (zero bytes and letters); 0xFF is not.
      return .text(String(decoding: bytes.filter { $0 != 0xFF }, as: UTF8.self))
    default: return .blob(bytes)
    }
  }

  /// Runs `body` with a record of a row with `values` in columns 1... and `rowid` (column 0),
  /// its texts and blobs valid meanwhile.
  static func withRecord<Result>(
    _ values: [Value], rowid: Int64, _ body: (inout RowRecord) -> Result
  ) -> Result {
    let affinities = [ColumnAffinity](repeating: .blob, count: values.count + 1)
    var record = RowRecord(affinities: affinities, rowidColumn: 0)
    record.setInteger(rowid, at: 0)
    // The record holds texts and blobs by pointer until it is used.
    let buffers = values.map { value -> UnsafeMutableRawBufferPointer? in
      let bytes: [UInt8]
      switch value {
      case .text(let text): bytes = Array(text.utf8)
      case .blob(let blob): bytes = blob
      case .null, .integer: return nil
      }
      let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
      buffer.copyBytes(from: bytes)
      return buffer
    }
    defer { for buffer in buffers { buffer?.deallocate() } }
    for (offset, value) in values.enumerated() {
      switch value {
      case .null: record.setNull(at: offset + 1)
      case .integer(let integer): record.setInteger(integer, at: offset + 1)
      case .text: record.setText(UnsafeRawBufferPointer(buffers[offset]!), at: offset + 1)
      case .blob: record.setBlob(UnsafeRawBufferPointer(buffers[offset]!), at: offset + 1)
      }
    }
    return body(&record)
  }

  /// The sort key of a row with `values` in columns 1... and `rowid`, made by ``RowRecord``.
  static func key(_ values: [Value], rowid: Int64) -> [UInt8] {
    withRecord(values, rowid: rowid) { record in
      var key: [UInt8] = []
      #expect(record.appendIndexSortKey(of: Array(1...values.count), to: &key))
      return key
    }
  }

  @Test(arguments: [1, 2])
  func keysSortedByTheirBytesComeInTheOrderSQLiteKeepsTheIndexIn(columns: Int) throws {
    var generator = SeededRandom(seed: UInt64(columns))
    let rows = (0..<600).map { index in
      (
        rowid: Int64(index * 7 % 600) - 300,
        values: (0..<columns).map { _ in
          Self.randomValue(using: &generator)
        }
      )
    }
    // SQLite's own order of the index's records, as `ORDER BY` on a table without affinity.
    let db = try Database(path: ":memory:", mode: .readWriteCreate)
    let names = (0..<columns).map { "c\($0)" }
    try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, \(names.joined(separator: ", ")))")
    let insert = try db.prepare(
      "INSERT INTO t VALUES (?, \(names.map { _ in "?" }.joined(separator: ", ")))")
    for row in rows {
      try insert.bind([.integer(row.rowid)] + row.values.map(\.sqlite))
      _ = try insert.step()
      try insert.reset()
    }
    let expected = try db.prepare(
      "SELECT id FROM t ORDER BY \(names.joined(separator: ", ")), id"
    ).allRows().map { $0[0] }
    let keyed = rows.map { (key: Self.key($0.values, rowid: $0.rowid), rowid: $0.rowid) }
    let sorted = keyed.sorted { $0.key.lexicographicallyPrecedes($1.key) }
    #expect(sorted.map { SQLiteValue.integer($0.rowid) } == expected)
    // Two keys have the same values exactly when SQLite finds the rows' values equal.
    for (a, b) in zip(keyed, keyed.dropFirst()) {
      let same = a.key.withUnsafeBytes { first in
        b.key.withUnsafeBytes {
          IndexSortKey.values(of: first).elementsEqual(IndexSortKey.values(of: $0))
        }
      }
      let compare = try db.prepare(
        "SELECT \(names.map { "a.\($0) IS b.\($0)" }.joined(separator: " AND ")) FROM t a, t b WHERE a.id = ? AND b.id = ?"
      )
      try compare.bind([.integer(a.rowid), .integer(b.rowid)])
      #expect(try compare.scalar() == .integer(same ? 1 : 0))
    }
  }

  /// A table `t (id INTEGER PRIMARY KEY, a, b)` and its index `t_ab` on `(a, b)`, both written
  /// page by page, the index's records made from the rows' sort keys in their order, SQLite
  /// checks as its own: every row's record in the index, in order.
  @Test func recordsMadeFromSortedKeysMakeAnIndexSQLiteChecksAsItsOwn() throws {
    var generator = SeededRandom(seed: 7)
    let directory = try TemporaryDirectory()
    let path = directory.path("keys.sqlite").path
    let (tableRoot, indexRoot) = try {
      let db = try Database(path: path, mode: .readWriteCreate)
      try db.execute("PRAGMA page_size = 512")
      try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, a, b)")
      try db.execute("CREATE INDEX t_ab ON t (a, b)")
      return (
        try TableTreeWriterTests.rootPage(of: "t", in: db),
        try TableTreeWriterTests.rootPage(of: "t_ab", in: db)
      )
    }()
    let file = try PageFile(path: path)
    let table = TableTreeWriter(file: file, root: tableRoot)
    var keys: [[UInt8]] = []
    var nulls = 0
    for index in 0..<2_000 {
      let values = [Self.randomValue(using: &generator), Self.randomValue(using: &generator)]
      let rowid = Int64(index) * 1_000_003 - 200_000_000
      let bytes = Self.withRecord(values, rowid: rowid) { record in
        record.encode()
        return record.bytes
      }
      try bytes.withUnsafeBytes { try table.append(rowid: rowid, record: $0) }
      keys.append(Self.key(values, rowid: rowid))
      if values.contains(.null) { nulls += 1 }
    }
    try table.finish()
    var writer = IndexTreeWriter(file: file, root: indexRoot)
    var withNull = 0
    for key in keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
      var record: [UInt8] = []
      if key.withUnsafeBytes({ IndexSortKey.appendRecord(of: $0, to: &record) }) { withNull += 1 }
      try writer.append(record)
    }
    try writer.finish()
    try file.finish()
    #expect(withNull == nulls)
    let db = try Database(path: path)
    #expect(try TableTreeWriterTests.integrity(db) == [.text("ok")])
    let indexed = try db.prepare("SELECT a, b, id FROM t INDEXED BY t_ab ORDER BY a, b, id")
      .allRows()
    let scanned = try db.prepare("SELECT a, b, id FROM t NOT INDEXED ORDER BY a, b, id").allRows()
    #expect(indexed == scanned)
    #expect(indexed.count == 2_000)
  }
}
