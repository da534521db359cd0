import Foundation
import ObjectModel
import PropertyList
import SQLite
import TestSupport
import Testing

@testable import ObjectStore

/// The store an object stream ends in: its tables, every shape of chunk, its bookkeeping.
@Suite("Store sink")
struct StoreSinkTests {
  /// The head of a stream of `LibraryModel`'s objects with keys up to 100.
  static func head(_ model: ObjectModel) throws -> StoreHead {
    let schema = try StoreSchema(model: model)
    let metadata = PropertyListValue.dictionary(StoreMetadata.make(for: model))
    return StoreHead(
      model: model, schemaObjects: schema.schemaObjects, snapshot: try SchemaSnapshot(of: schema),
      hasPersistentHistory: false,
      entityRows: schema.entityRows(maxima: ["Writer": 100, "Book": 100, "Page": 100, "Tag": 100]),
      metadata: metadata.binaryPropertyList(), modelCache: nil, uuid: "0A1B-STREAM",
      journalMode: "delete")
  }

  /// Authors and tags, books as columns, pages as values with a link given apart.
  static func stream(into sink: StoreSink, head: StoreHead) throws {
    try sink.begin(head)
    try sink.take(
      .records(
        (1...3).map {
          (
            ObjectRecord(
              entity: "Author", primaryKey: Int64($0), attributes: ["alias": .string("a\($0)")]),
            [:]
          )
        }), from: "authors")
    try sink.take(
      .records(
        (1...4).map {
          (
            ObjectRecord(
              entity: "Tag", primaryKey: Int64($0), attributes: ["name": .string("t\($0)")]), [:]
          )
        }), from: "tags")
    try sink.take(.columns(StoreLoaderTests.books(40)), from: "books")
    let pages = (1...12).map { key in
      ObjectValue(
        entity: "Page", primaryKey: Int64(key), attributes: ["number": .integer(Int64(key))],
        relationships: [
          "book": [ObjectLink(target: .init(entity: "Book", primaryKey: 2), order: Int64(13 - key))]
        ])
    }
    let tag = LooseLink(
      from: .init(entity: "Book", primaryKey: 1), relationship: "tags",
      link: ObjectLink(target: .init(entity: "Tag", primaryKey: 4)))
    try sink.take(.objects(pages, links: [tag]), from: "pages")
    try sink.take(rows: [], of: "ANOTHER", from: "nothing")
    try sink.finish()
  }

  @Test func everyShapeOfChunkLandsAndTheStoreOpensWithItsObjectsAndLinks() throws {
    let directory = try TemporaryDirectory()
    let model = try LibraryModel.make()
    let path = directory.path("Library.sqlite").path
    try Self.stream(into: StoreSink(path: path), head: try Self.head(model))
    let context = try ObjectContext(storePath: path, model: model)
    let book = try context.object(with: ObjectReference(entity: "Book", primaryKey: 2))
    let pages = try book.objects(for: "pages")
    #expect(pages.map(\.reference.primaryKey) == (1...12).reversed().map(Int64.init))
    let first = try context.object(with: ObjectReference(entity: "Book", primaryKey: 1))
    #expect(try first.objects(for: "tags").map(\.reference.primaryKey).contains(4))
    #expect(try context.count(for: FetchRequest(entity: "Book")) == 40)
    let store = try CoreDataStore(path: path)
    #expect(store.entityRows.first { $0.name == "Book" }?.maxPrimaryKey == 100)
    let uuid = try Database(path: path).prepare("SELECT Z_UUID FROM Z_METADATA").allRows()
    #expect(uuid == [[.text("0A1B-STREAM")]])
  }

  @Test func bookkeepingKnownOnlyAtTheEndIsWrittenAtTheEnd() throws {
    let directory = try TemporaryDirectory()
    let model = try LibraryModel.make()
    let path = directory.path("Library.sqlite").path
    var head = try Self.head(model)
    let schema = try StoreSchema(model: model)
    var handedOut: Int64 = 0
    head.finalEntityRows = { schema.entityRows(maxima: ["Book": handedOut]) }
    let sink = StoreSink(path: path)
    try sink.begin(head)
    handedOut = 140
    try sink.finish()
    let store = try CoreDataStore(path: path)
    #expect(store.entityRows.first { $0.name == "Book" }?.maxPrimaryKey == 140)
  }

  @Test func bookkeepingKnownOnlyAtTheEndWaitsForThePagesWrittenDirectly() throws {
    let directory = try TemporaryDirectory()
    let model = try LibraryModel.make()
    var stores: [[String: [[SQLiteValue]]]] = []
    for direct in [false, true] {
      var head = try Self.head(model)
      let schema = try StoreSchema(model: model)
      head.finalEntityRows = { schema.entityRows(maxima: ["Book": 3_000]) }
      // A model cache of several pages: SQLite allocates pages for it.
      head.modelCache = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
      head.comesInKeyOrder = direct
      let path = directory.path("\(direct).sqlite").path
      let sink = StoreSink(path: path)
      try sink.begin(head)
      try sink.take(.columns(StoreLoaderTests.books(3_000)), from: "books")
      try sink.finish()
      let database = try Database(path: path)
      #expect(try database.prepare("PRAGMA integrity_check").allRows() == [[.text("ok")]])
      stores.append(try StoreLoaderTests.rows(database))
    }
    #expect(
      stores[0]["Z_MODELCACHE"]?.first?.last
        == .blob(stores[1]["Z_MODELCACHE"]?.first?.last?.blobValue ?? []))
    #expect(stores[0]["ZBOOK"]?.count == 3_000)
    #expect(stores[1] == stores[0])
  }

  @Test func objectsInKeyOrderWrittenPageByPageReadAsTheRowsSQLInserts() throws {
    let directory = try TemporaryDirectory()
    let model = try LibraryModel.make()
    var head = try Self.head(model)
    var stores: [[String: [[SQLiteValue]]]] = []
    for direct in [false, true] {
      let path = directory.path("\(direct).sqlite").path
      head.comesInKeyOrder = direct
      try Self.stream(into: StoreSink(path: path), head: head)
      let database = try Database(path: path)
      #expect(try database.prepare("PRAGMA integrity_check").allRows() == [[.text("ok")]])
      stores.append(try StoreLoaderTests.rows(database))
    }
    #expect(stores[0]["ZBOOK"]?.count == 40)
    #expect(stores[1] == stores[0])
  }
}
