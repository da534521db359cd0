import SQLite
import TestSupport
import Testing

@Suite("A row loaded once")
struct RowColumnsTests {
  /// Every storage class, empty and long texts and blobs, text that is not ASCII or holds a
  /// zero byte, and values another accessor converts (numbers as text, text as numbers).
  static let rows: [[SQLiteValue]] = [
    [.null, .integer(0), .real(0), .text(""), .blob([])],
    [.integer(.min), .integer(.max), .real(-0.5), .text("héllo ✓"), .blob([0, 255, 1])],
    [.text("12abc"), .text("3.75"), .blob(Array("42".utf8)), .real(1e300), .integer(-7)],
    [.real(2.5), .integer(1), .text("a\0b"), .blob(Array(repeating: 9, count: 5_000)), .null],
    [
      .text(String(repeating: "x", count: 3_000)), .real(-.infinity), .null, .integer(3),
      .text("1"),
    ],
  ]

  @Test("every accessor answers as the statement's does for the same row, conversions included")
  func everyAccessorAnswersAsTheStatements() throws {
    let directory = try TemporaryDirectory()
    let db = try Database(path: directory.path("row.sqlite").path, mode: .readWriteCreate)
    try db.execute("CREATE TABLE t (a, b, c, d, e)")
    let insert = try db.prepare("INSERT INTO t VALUES (?, ?, ?, ?, ?)")
    for row in Self.rows {
      try insert.bind(row)
      try insert.run()
    }
    // Two statements on the same rows: one read through the row loaded once, one directly
    // (so that no conversion done by one can change what the other sees).
    let loadedFrom = try db.prepare("SELECT * FROM t ORDER BY rowid")
    let direct = try db.prepare("SELECT * FROM t ORDER BY rowid")
    let row = RowColumns(of: loadedFrom)
    var rows = 0
    while try loadedFrom.step() {
      #expect(try direct.step())
      row.load()
      rows += 1
      for index in 0..<5 {
        let label = "row \(rows), column \(index)"
        #expect(row.storageType(at: index) == direct.storageType(at: index), "\(label)")
        #expect(row.isNull(at: index) == direct.isNull(at: index), "\(label)")
        // The bytes first: a conversion SQLite makes of a blob to text may move them.
        #expect(row.withBlob(at: index) { Array($0) } == direct.blob(at: index), "\(label)")
        #expect(row.text(at: index) == direct.text(at: index), "\(label)")
        #expect(row.int64(at: index) == direct.int64(at: index), "\(label)")
        let (mine, theirs) = (row.double(at: index), direct.double(at: index))
        #expect(mine == theirs || (mine.isNaN && theirs.isNaN), "\(label)")
      }
    }
    #expect(rows == Self.rows.count)
  }
}
