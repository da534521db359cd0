import Foundation
import ObjectModel
import SQLite
import TestSupport
import Testing

@testable import ObjectStore

@Suite("Store loader")
struct StoreLoaderTests {
  @Test func theSorterMayUseEveryOtherCoreWhenTheIndexesAreBuilt() throws {
    let directory = try TemporaryDirectory()
    let loader = try StoreLoader(path: directory.path("new.sqlite").path)
    let others = ProcessInfo.processInfo.activeProcessorCount - 1
    #expect(loader.sorterThreads == min(others, 3))
  }

  /// A loader of `LibraryModel`'s store at `path`, with its tables and its authors and tags.
  static func loader(at path: String) throws -> StoreLoader {
    let model = try LibraryModel.make()
    let schema = try StoreSchema(model: model)
    let loader = try StoreLoader(path: path)
    try loader.createTables(schema.schemaObjects)
    try loader.prepare(model: model, entityRows: schema.entityRows(maxima: [:]))
    for key in 1...3 {
      try loader.insert(
        ObjectRecord(
          entity: "Author", primaryKey: Int64(key), attributes: ["alias": .string("a\(key)")]))
    }
    for key in 1...4 {
      try loader.insert(
        ObjectRecord(
          entity: "Tag", primaryKey: Int64(key), attributes: ["name": .string("t\(key)")]))
    }
    return loader
  }

  /// `count` books with values missing here and there (titles, prices as decimal text,
  /// ratings, authors) and up to four tags each, a tag given twice to some, with the keys
  /// `keys` gives.
  static func books(
    _ count: Int, entity: String = "Book", keys: (Int) -> Int64 = { Int64($0 + 1) },
    price: (Int) -> String = { "\($0).99" }
  ) -> ObjectBatch {
    var batch = ObjectBatch(
      entity: entity, primaryKeys: (0..<count).map(keys),
      versions: (0..<count).map { Int64($0 % 3 + 1) })
    let titled = (0..<count).filter { $0 % 5 != 2 }
    let priced = (0..<count).filter { $0 % 4 == 0 }
    let rated = (0..<count).filter { $0 % 3 == 1 }
    let authored = (0..<count).filter { $0 % 7 != 0 }
    batch.attributes = [
      ObjectBatch.Attribute(
        name: "title", type: .string, records: titled,
        values: .texts(Self.texts(titled.map { "Book \($0) ✓" }))),
      ObjectBatch.Attribute(
        name: "price", type: .decimal, records: priced,
        values: .texts(Self.texts(priced.map(price)))),
      ObjectBatch.Attribute(
        name: "rating", type: .double, records: rated, values: .reals(rated.map { Double($0) / 8 })),
    ]
    batch.toOne = [
      ObjectBatch.ToOne(
        name: "author", records: authored, keys: authored.map { Int64($0 % 3 + 1) },
        entities: authored.map { _ in "Author" })
    ]
    let tagged = (0..<count).filter { $0 % 6 != 5 }
    batch.toMany = [
      ObjectBatch.ToMany(
        name: "tags", records: tagged,
        rows: tagged.map { record in
          (0...(record % 4)).map { (Int64(($0 + record) % 4 + 1), nil) }
            + (record % 4 == 0 ? [(Int64(record % 4 + 1), nil)] : [])
        })
    ]
    return batch
  }

  /// `strings` back to back, as a batch holds texts.
  static func texts(_ strings: [String]) -> ObjectBatch.Bytes {
    var bytes: [UInt8] = []
    var ranges: [Range<Int>] = []
    for string in strings {
      let start = bytes.count
      bytes += Array(string.utf8)
      ranges.append(start..<bytes.count)
    }
    return ObjectBatch.Bytes(copying: bytes, ranges: ranges)
  }

  /// Every row of every table of `database`, in rowid order where the table has one.
  static func rows(_ database: Database) throws -> [String: [[SQLiteValue]]] {
    var rows: [String: [[SQLiteValue]]] = [:]
    let tables = try database.prepare(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).allRows()
    for case .text(let table) in tables.map({ $0[0] }) {
      rows[table] = try database.prepare("SELECT rowid, * FROM \(table) ORDER BY rowid").allRows()
    }
    return rows
  }

  @Test func aBatchGoesInSeveralRowsAStatementAsTheSameRowsAsOneObjectAtATime() throws {
    let directory = try TemporaryDirectory()
    // Six statements' worth of books and a few more; over two of many-to-many rows.
    let batch = Self.books(100)
    let byBatch = try Self.loader(at: directory.path("batch.sqlite").path)
    try byBatch.insert(batch)
    let oneByOne = try Self.loader(at: directory.path("records.sqlite").path)
    for (record, links) in batch.records { try oneByOne.insert(record, manyToMany: links) }
    let inserted = try Self.rows(byBatch.database)
    #expect(inserted["ZBOOK"]?.count == 100)
    let joinRows = inserted.first { $0.key.hasPrefix("Z_") && $0.key.hasSuffix("TAGS") }?.value
    #expect((joinRows?.count ?? 0) > 2 * 64)
    #expect(inserted == (try Self.rows(oneByOne.database)))
  }

  @Test func aRowThatCannotGoInIsNamedWithTheRowsBeforeItInsertedAndNoneAfter() throws {
    let directory = try TemporaryDirectory()
    // The twentieth book (in the second statement's worth) has the key of the eighteenth.
    let batch = Self.books(40) { $0 == 19 ? 18 : Int64($0 + 1) }
    let loader = try Self.loader(at: directory.path("batch.sqlite").path)
    let error = try #require(throws: StoreError.self) { try loader.insert(batch) }
    #expect(error.description.contains("cannot insert Book/p18"))
    let keys = try loader.database.prepare("SELECT Z_PK FROM ZBOOK ORDER BY Z_PK").allRows()
    #expect(keys.map { $0[0] } == (1...19).map { SQLiteValue.integer(Int64($0)) })
  }
}
