import Foundation
import ObjectModel
import SQLite
import TestSupport
import Testing

@testable import ObjectStore

/// The unique indexes of Core Data's uniqueness constraints, built with their tables' pages
/// from the keys of the rows written (``SortedKeys``), against the same rows inserted through
/// SQL and the indexes built by `CREATE UNIQUE INDEX` after them.
@Suite("Unique indexes built with their tables' pages")
struct UniqueIndexLoadTests {
  /// Loads two boxes, then `items`, into a new store of the shop model at `path` (its tables
  /// written directly when `direct`) and finishes it.
  static func load(_ items: [ObjectBatch], at path: String, direct: Bool) throws -> (
    rows: [String: [[SQLiteValue]]], indexes: [[SQLiteValue]], built: Set<String>,
    stillDirect: Bool
  ) {
    let model = try UniquenessCheckTests.model()
    let schema = try StoreSchema(model: model).schemaObjects
    let loader = try StoreLoader(path: path)
    try loader.createTables(schema)
    try loader.prepare(model: model, entityRows: StoreSchema(model: model).entityRows(maxima: [:]))
    if direct { try loader.writeTablesDirectly(indexes: schema) }
    for batch in [UniquenessCheckTests.boxes(["one", "two"])] + items { try loader.insert(batch) }
    let stillDirect = loader.direct != nil
    let built = loader.indexesMade
    try loader.finish(indexesAndTriggers: schema, journalMode: "delete")
    let database = try Database(path: path)
    #expect(try database.prepare("PRAGMA integrity_check").allRows() == [[.text("ok")]])
    // Read through each unique index, its rows come in the order of its values.
    for (index, columns) in [
      ("Z_Item_UNIQUE_code", "ZCODE"), ("Z_Item_UNIQUE_box_slot", "ZBOX, ZSLOT"),
    ] {
      let indexed = try database.prepare(
        "SELECT \(columns), Z_PK FROM ZITEM INDEXED BY \(index) ORDER BY \(columns), Z_PK"
      ).allRows()
      let scanned = try database.prepare(
        "SELECT \(columns), Z_PK FROM ZITEM NOT INDEXED ORDER BY \(columns), Z_PK"
      ).allRows()
      #expect(indexed == scanned, "\(index)")
    }
    let indexes = try database.prepare(
      "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name"
    ).allRows()
    return (try StoreLoaderTests.rows(database), indexes, built, stillDirect)
  }

  /// Codes that try the order: missing ones (never equal), an empty one, codes that begin one
  /// another or hold a zero byte, letters beyond ASCII, a long one.
  static let codes: [String?] = [
    "b", nil, "", "a\u{0}b", "a", nil, "ab", "a\u{0}", "é", String(repeating: "z", count: 600),
    "Ab", nil,
  ]

  @Test func uniqueIndexesBuiltWithThePagesAreTheOnesSQLiteBuilds() throws {
    let directory = try TemporaryDirectory()
    // Items in two batches; the second in the other box, its slots those of the first.
    let items = [
      UniquenessCheckTests.items(Self.codes),
      UniquenessCheckTests.items(
        Self.codes.indices.map { "second \($0)" }, first: 100, box: 2, slot: { $0 - 99 }),
    ]
    let written = try Self.load(items, at: directory.path("direct.sqlite").path, direct: true)
    let inserted = try Self.load(items, at: directory.path("sql.sqlite").path, direct: false)
    #expect(written.stillDirect)
    #expect(written.rows == inserted.rows)
    #expect(written.indexes == inserted.indexes)
    #expect(
      written.built.isSuperset(of: [
        "Z_Item_UNIQUE_code", "Z_Item_UNIQUE_box_slot", "Z_Box_UNIQUE_label",
      ]))
    #expect(inserted.built.isEmpty)
  }

  /// A code too long for an index's page sends its row, and the rest, through SQL: the same
  /// store still.
  @Test func aKeyTooLongForAnIndexPageSendsItsRowThroughSQL() throws {
    let directory = try TemporaryDirectory()
    let items = [UniquenessCheckTests.items(["a", String(repeating: "x", count: 5_000), "b"])]
    let written = try Self.load(items, at: directory.path("direct.sqlite").path, direct: true)
    let inserted = try Self.load(items, at: directory.path("sql.sqlite").path, direct: false)
    #expect(!written.stillDirect)
    #expect(written.rows == inserted.rows)
    #expect(written.indexes == inserted.indexes)
  }

  /// Two items with one code, or in one slot of one box: the store is refused as SQLite
  /// refuses the index, whether it was built with the pages or after the rows.
  @Test(arguments: [
    ("Z_Item_UNIQUE_code", "ZITEM.ZCODE", [UniquenessCheckTests.items(["a", nil, "b", "a", nil])]),
    (
      "Z_Item_UNIQUE_box_slot", "ZITEM.ZBOX, ZITEM.ZSLOT",
      [UniquenessCheckTests.items(["a", "b", "c"], slot: { $0 == 3 ? 1 : $0 })]
    ),
  ])
  func keysThatRepeatInAUniqueIndexAreRefusedAsSQLiteRefusesThem(
    index: String, columns: String, items: [ObjectBatch]
  ) throws {
    let directory = try TemporaryDirectory()
    var errors: [StoreError] = []
    for direct in [true, false] {
      let error = try #require(throws: StoreError.self) {
        _ = try Self.load(items, at: directory.path("\(direct).sqlite").path, direct: direct)
      }
      #expect(error.description.contains("cannot create index \(index)"), "\(error)")
      #expect(error.description.contains("UNIQUE constraint failed: \(columns)"), "\(error)")
      errors.append(error)
    }
    let codes = errors.map { ($0.underlying as? SQLiteError)?.code }
    #expect(codes[0] != nil && codes[0] == codes[1])
  }
}
