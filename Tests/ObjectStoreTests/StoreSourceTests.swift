import Foundation
import ObjectModel
import PropertyList
import SQLite
import TestSupport
import Testing

@testable import ObjectStore

/// A store read as an object stream (``StoreSource``): its head, each entity's objects as
/// chunks of columns in key order (what a store reads object by object, with the join rows
/// SQL holds), the other tables' rows, all in one snapshot.
@Suite("Store source")
struct StoreSourceTests {
  /// A sink keeping what it is given.
  final class Keeping: ObjectSink {
    var head: StoreHead?
    var chunks: [(ObjectChunk, String)] = []
    var rows: [String: [[String: AttributeValue]]] = [:]
    var finished = false
    var afterFirstChunk: (() throws -> Void)?

    func begin(_ head: StoreHead) throws { self.head = head }

    func take(_ chunk: ObjectChunk, from place: String) throws {
      chunks.append((chunk, place))
      if chunks.count == 1 { try afterFirstChunk?() }
    }

    func take(rows: [[String: AttributeValue]], of table: String, from place: String) throws {
      self.rows[table, default: []] += rows
    }

    func finish() throws { finished = true }
  }

  /// A WAL store of `LibraryModel` with authors, tags, 25,000 books (a chunk and a part), a
  /// few pages and a table an app added.
  static func store(in directory: TemporaryDirectory) throws -> String {
    let path = directory.path("Library.sqlite").path
    let loader = try StoreLoaderTests.loader(at: path)
    let model = try LibraryModel.make()
    let schema = try StoreSchema(model: model)
    try loader.writeBookkeeping(
      entityRows: schema.entityRows(maxima: ["Writer": 3, "Book": 25_000, "Tag": 4, "Page": 3]),
      uuid: "SOURCE-UUID", metadata: Self.metadata(model), modelCache: nil)
    try loader.insert(StoreLoaderTests.books(25_000))
    for key in 1...3 {
      try loader.insert(
        ObjectRecord(
          entity: "Page", primaryKey: Int64(key), attributes: ["number": .integer(Int64(key))],
          toOne: ["book": .init(entity: "Book", primaryKey: 7)]))
    }
    try loader.finish(indexesAndTriggers: schema.schemaObjects, journalMode: "wal")
    let database = try Database(path: path)
    try database.execute("CREATE TABLE APPNOTES (ID INTEGER PRIMARY KEY, TEXT VARCHAR)")
    try database.execute("INSERT INTO APPNOTES (TEXT) VALUES ('one'), ('two')")
    return path
  }

  static func metadata(_ model: ObjectModel) -> [UInt8] {
    PropertyListValue.dictionary(StoreMetadata.make(for: model)).binaryPropertyList()
  }

  @Test func eachEntitysObjectsComeInKeyOrderAsTheStoreReadsThemObjectByObject() throws {
    let directory = try TemporaryDirectory()
    let path = try Self.store(in: directory)
    let store = try CoreDataStore(path: path)
    let model = try LibraryModel.make()
    let sink = Keeping()
    try ObjectPipeline(source: try StoreSource(store: store, model: model), sink: sink).run()
    #expect(sink.finished)
    let head = try #require(sink.head)
    #expect(head.uuid == "SOURCE-UUID" && head.metadata == Self.metadata(model))
    #expect(head.comesInKeyOrder)
    #expect(head.entityRows.first { $0.name == "Book" }?.maxPrimaryKey == 25_000)
    #expect(head.expectedObjects == 3 + 4 + 25_000 + 3)
    #expect(head.schemaObjects.contains { $0.name == "APPNOTES" })
    #expect(head.journalMode == "wal")

    let books = sink.chunks.filter { $0.0.entity == "Book" }
    #expect(
      books.map(\.0.count) == [StoreSource.objectsPerChunk, 25_000 - StoreSource.objectsPerChunk])
    let layout = try store.layout(for: model)
    for entity in ["Author", "Tag", "Book", "Page"] {
      var expected: [ObjectRecord] = []
      try store.forEachObject(of: entity, layout: layout) { expected.append($0) }
      let streamed = sink.chunks.filter { $0.0.entity == entity }.flatMap {
        $0.0.storedRecords ?? []
      }
      #expect(streamed.map(\.0) == expected, "\(entity)")
    }
    let joinRows = try Database(path: path).prepare(
      "SELECT count(*) FROM Z_1TAGS"
    ).scalar().integerValue
    let streamedJoins = sink.chunks.flatMap { $0.0.storedRecords ?? [] }
      .map { $0.1["tags"]?.count ?? 0 }.reduce(0, +)
    #expect(streamedJoins == Int(joinRows ?? -1) && streamedJoins > 0)
    #expect(sink.rows["APPNOTES"]?.map { $0["TEXT"] } == [.string("one"), .string("two")])
  }

  @Test func theStreamIsOneSnapshotWhateverIsCommittedWhileItRuns() throws {
    let directory = try TemporaryDirectory()
    let path = try Self.store(in: directory)
    let store = try CoreDataStore(path: path)
    let sink = Keeping()
    sink.afterFirstChunk = {
      let writer = try Database(path: path)
      try writer.execute("INSERT INTO APPNOTES (TEXT) VALUES ('three')")
      try writer.execute("DELETE FROM ZBOOK WHERE Z_PK > 24000")
    }
    try ObjectPipeline(
      source: try StoreSource(store: store, model: try LibraryModel.make()), sink: sink
    ).run()
    #expect(sink.rows["APPNOTES"]?.count == 2)
    #expect(sink.chunks.filter { $0.0.entity == "Book" }.map(\.0.count).reduce(0, +) == 25_000)
    #expect(!store.database.isInTransaction)
  }
}
