import Foundation
import ObjectModel
import ObjectStore
import SQLite
import TestSupport
import Testing

/// ``ObjectCursor/compare(_:_:)`` is the order two cursors are merged in; it must be the order
/// SQLite's `ORDER BY` gives them, checked here against SQLite itself.
@Suite("Object cursor key order")
struct ObjectCursorTests {
  /// Values of every storage class, with the cases that differ between orders: numbers of
  /// both kinds that are equal, text that Swift's `<` orders otherwise than its UTF-8 bytes
  /// (composed and decomposed accents, case, an emoji), blobs of different lengths.
  static let values: [SQLiteValue] = [
    .null, .integer(-3), .integer(2), .real(2.5), .real(-3.5), .integer(10), .real(1e20),
    .text("b"), .text("B"), .text("é"), .text("e\u{301}"), .text("z"), .text("🦊"),
    .text(""), .text("a\u{0}b"), .blob([]), .blob([0]), .blob([0, 1]), .blob([255]),
    .integer(Int64.min), .text("éa"), .text("ea"),
  ]

  static func attributeValue(_ value: SQLiteValue) -> AttributeValue? {
    switch value {
    case .null: nil
    case .integer(let number): .integer(number)
    case .real(let number): .double(number)
    case .text(let text): .string(text)
    case .blob(let bytes): .data(bytes)
    }
  }

  @Test func keysCompareAsSQLiteOrdersThem() throws {
    let directory = try TemporaryDirectory()
    let database = try Database(path: directory.path("order.sqlite").path, mode: .readWriteCreate)
    try database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
    let insert = try database.prepare("INSERT INTO t (id, v) VALUES (?, ?)")
    for (index, value) in Self.values.enumerated() {
      try insert.bind([.integer(Int64(index)), value])
      try insert.run()
    }
    let sqliteOrder = try database.prepare("SELECT id FROM t ORDER BY v, id").allRows().map {
      Int($0[0].integerValue ?? -1)
    }
    let ours = Self.values.indices.sorted { left, right in
      let order = ObjectCursor.compare(
        Self.attributeValue(Self.values[left]), Self.attributeValue(Self.values[right]))
      return order == 0 ? left < right : order < 0
    }
    #expect(ours == sqliteOrder)
  }
}
