import Foundation
import ObjectModel
import SQLite
import TestSupport
import Testing

@testable import ObjectStore

@Suite("Entity tables written page by page")
struct DirectLoadTests {
  /// Loads `batches` into a new store at `path` (its tables written directly when `direct`),
  /// finishes it with its indexes and triggers, and returns its rows and whether the pages
  /// were still being written when the last batch was in.
  static func load(_ batches: [ObjectBatch], at path: String, direct: Bool) throws -> (
    rows: [String: [[SQLiteValue]]], stillDirect: Bool, indexes: [[SQLiteValue]],
    indexesBuilt: Set<String>
  ) {
    let loader = try StoreLoaderTests.loader(at: path)
    let schema = try StoreSchema(model: LibraryModel.make()).schemaObjects
    if direct { try loader.writeTablesDirectly(indexes: schema) }
    for batch in batches { try loader.insert(batch) }
    let stillDirect = loader.direct != nil
    let built = loader.indexesMade
    try loader.finish(indexesAndTriggers: schema, journalMode: "delete")
    let database = try Database(path: path)
    // The check reads every index against its table's rows.
    let check = try database.prepare("PRAGMA integrity_check").allRows()
    #expect(check == [[.text("ok")]])
    let indexes = try database.prepare(
      "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' ORDER BY name"
    ).allRows()
    return (try StoreLoaderTests.rows(database), stillDirect, indexes, built)
  }

  /// The same batches loaded directly and through SQL: the same rows in every table.
  static func expectSameRows(_ batches: [ObjectBatch], stillDirect: Bool) throws {
    let directory = try TemporaryDirectory()
    let written = try load(batches, at: directory.path("direct.sqlite").path, direct: true)
    let inserted = try load(batches, at: directory.path("sql.sqlite").path, direct: false)
    #expect(written.stillDirect == stillDirect)
    #expect(!inserted.stillDirect)
    #expect(written.rows == inserted.rows)
    // The same indexes, those on the foreign keys and Z_ENT of the tables written directly
    // built with their pages.
    #expect(written.indexes == inserted.indexes)
    #expect(written.indexesBuilt.contains("ZBOOK_ZAUTHOR_INDEX"))
    #expect(written.indexesBuilt.contains("ZBOOK_Z_ENT_INDEX"))
    #expect(inserted.indexesBuilt.isEmpty)
    let books = batches.filter { $0.entity == "Book" || $0.entity == "GraphicNovel" }
      .map(\.count).reduce(0, +)
    #expect((written.rows["ZBOOK"]?.count ?? 0) == books)
    #expect((written.rows["ZTAG"]?.count ?? 0) >= 4)
  }

  @Test func rowsWrittenPageByPageAreTheRowsSQLInserts() throws {
    // Books and graphic novels share a table, their keys interleaved; the books come in two
    // batches, the novels after them, with their many-to-many rows.
    try Self.expectSameRows(
      [
        StoreLoaderTests.books(300) { Int64(2 * $0 + 1) },
        StoreLoaderTests.books(200) { Int64(2 * $0 + 601) },
        StoreLoaderTests.books(400, entity: "GraphicNovel") { Int64(2 * $0 + 2) },
      ], stillDirect: true)
  }

  /// Pages numbered 1 to `count` with keys from `first`.
  static func pages(_ count: Int, first: Int64) -> ObjectBatch {
    var pages = ObjectBatch(
      entity: "Page", primaryKeys: (0..<count).map { first + Int64($0) },
      versions: Array(repeating: 1, count: count))
    pages.attributes = [
      ObjectBatch.Attribute(
        name: "number", type: .integer32, records: Array(0..<count),
        values: .integers((0..<count).map { Int64($0 + 1) }))
    ]
    return pages
  }

  @Test func aSharedTableIsWrittenOnceAnotherTablesRowsBeginAndLateRowsGoThroughSQL() throws {
    let books = StoreLoaderTests.books(100) { Int64(2 * $0 + 1) }
    let novels = StoreLoaderTests.books(100, entity: "GraphicNovel") { Int64(2 * $0 + 2) }
    try Self.expectSameRows([books, novels, Self.pages(50, first: 1)], stillDirect: true)
    // A book after the pages: its table is written already.
    try Self.expectSameRows(
      [books, novels, Self.pages(50, first: 1), StoreLoaderTests.books(10) { Int64($0 + 1000) }],
      stillDirect: false)
  }

  @Test func aTableHoldingRowsAlreadyKeepsThemAndTakesTheRestThroughSQL() throws {
    // The loader's tags went in before the direct writes began: more tags go after them.
    var tags = ObjectBatch(entity: "Tag", primaryKeys: [5, 6, 7], versions: [1, 1, 1])
    tags.attributes = [
      ObjectBatch.Attribute(
        name: "name", type: .string, records: [0, 1, 2],
        values: .texts(StoreLoaderTests.texts(["t5", "t6", "t7"])))
    ]
    try Self.expectSameRows([StoreLoaderTests.books(10), tags], stillDirect: false)
  }

  @Test func aKeyOutOfOrderSendsItsRowAndTheRestThroughSQL() throws {
    // The second batch of books starts below where the first ended.
    try Self.expectSameRows(
      [
        StoreLoaderTests.books(100) { Int64($0 + 101) },
        StoreLoaderTests.books(100) { Int64($0 + 1) },
        StoreLoaderTests.books(50, entity: "GraphicNovel") { Int64($0 + 201) },
      ], stillDirect: false)
  }

  @Test func aValueSQLiteWouldKeepAsTextSendsItsRowAndTheRestThroughSQL() throws {
    // A price that is no number stays text in its DECIMAL column, as SQLite stores it.
    try Self.expectSameRows(
      [StoreLoaderTests.books(100, price: { $0 == 48 ? "n/a" : "\($0).5" })], stillDirect: false)
  }

  /// Only the entities before a shared table's last wait in a spool: the last one's rows are
  /// merged with theirs as they come.
  @Test func theLastEntityOfASharedTableIsWrittenAsItComesNotSpooled() throws {
    let directory = try TemporaryDirectory()
    let loader = try StoreLoaderTests.loader(at: directory.path("merged.sqlite").path)
    try loader.writeTablesDirectly()
    try loader.insert(StoreLoaderTests.books(300) { Int64(3 * $0 + 1) })
    #expect(loader.direct?.spooledEntities(of: "ZBOOK") == ["Book"])
    try loader.insert(StoreLoaderTests.books(200, entity: "GraphicNovel") { Int64(3 * $0 + 2) })
    try loader.insert(StoreLoaderTests.books(100, entity: "GraphicNovel") { Int64($0 + 2000) })
    #expect(loader.direct?.spooledEntities(of: "ZBOOK") == ["Book"])
    #expect(loader.direct != nil)
  }

  /// Novels whose keys come before, between and after the books', then more books after the
  /// novels began: those go through SQL, and every row is where SQL would put it.
  @Test func rowsOfAnEarlierEntityAfterTheLastBeganGoThroughSQL() throws {
    try Self.expectSameRows(
      [
        StoreLoaderTests.books(300) { Int64(2 * $0 + 100) },
        StoreLoaderTests.books(500, entity: "GraphicNovel") { Int64(2 * $0 + 1) },
        StoreLoaderTests.books(100, entity: "GraphicNovel") { Int64($0 + 5000) },
      ], stillDirect: true)
    try Self.expectSameRows(
      [
        StoreLoaderTests.books(300) { Int64(2 * $0 + 100) },
        StoreLoaderTests.books(500, entity: "GraphicNovel") { Int64(2 * $0 + 1) },
        StoreLoaderTests.books(10) { Int64($0 + 9000) },
      ], stillDirect: false)
  }

  /// Two objects of one table with one key (the novels' first key `first` is a book's, met
  /// as the novels' rows come): refused, naming the later entity's.
  @Test(arguments: [Int64(10), 5, 1])
  func twoObjectsOfOneTableWithOneKeyAreRefusedNamingTheLater(first: Int64) throws {
    let directory = try TemporaryDirectory()
    let loader = try StoreLoaderTests.loader(at: directory.path("twice.sqlite").path)
    try loader.writeTablesDirectly()
    try loader.insert(StoreLoaderTests.books(10) { Int64($0 + 1) })
    let error = try #require(throws: StoreError.self) {
      try loader.insert(
        StoreLoaderTests.books(10, entity: "GraphicNovel") { first + Int64($0) })
      try loader.finish(indexesAndTriggers: [], journalMode: "delete")
    }
    #expect(error.description.contains("cannot insert GraphicNovel/p\(first)"))
    #expect(error.description.contains("UNIQUE constraint failed: ZBOOK.Z_PK"))
  }
}
