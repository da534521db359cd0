import Foundation
import ObjectModel
import SQLite
import TestSupport
import Testing

@testable import ObjectStore

/// What a row's columns mean in the object stream's terms (``StoredShape``), and the values it
/// reads written back by the store's sink (``ObjectValueWriter``): the same rows as the records
/// inserted as they are.
@Suite("Stored shapes")
struct StoredShapeTests {
  /// `model`'s layout on the schema graphvault creates for it.
  static func layout(_ model: ObjectModel) throws -> StoreLayout {
    let schema = try StoreSchema(model: model)
    return try StoreLayout(
      model: model, snapshot: try SchemaSnapshot(of: schema),
      entityNumbers: CoreDataStore.entityNumbers(
        for: model, rows: schema.entityRows(maxima: [:])))
  }

  /// A model whose sibling entities share a table and each have an attribute `code`.
  static func siblings() throws -> ObjectModel {
    try ObjectModel(
      name: "Shop",
      entities: [
        EntityDescription(
          name: "Item", attributes: [AttributeDescription(name: "name", type: .string)]),
        EntityDescription(
          name: "Lamp", parent: "Item",
          attributes: [AttributeDescription(name: "code", type: .integer32)]),
        EntityDescription(
          name: "Rug", parent: "Item",
          attributes: [AttributeDescription(name: "code", type: .string)]),
      ])
  }

  @Test func aRecordBecomesAValueWithItsLinksAndPlacesAndItsOddValuesApart() throws {
    let layout = try Self.layout(try LibraryModel.make())
    let page = StoredShape(entity: "Page", layout: layout)
    let place = try #require(page.column(for: .order("book")))
    let number = try #require(page.column(for: .attribute("number")))
    var record = ObjectRecord(
      entity: "Page", primaryKey: 4, version: 2,
      toOne: ["book": .init(entity: "Book", primaryKey: 9)])
    record.extraColumns = [place: .integer(3), number: .string("iv"), "ZLEGACY": .double(1.5)]
    let value = page.value(of: record, manyToMany: [:])
    #expect(
      value.relationships == [
        "book": [ObjectLink(target: .init(entity: "Book", primaryKey: 9), order: 3)]
      ])
    #expect(value.storedAsIs == ["number": .string("iv")])
    #expect(value.unmodelled == ["ZLEGACY": .double(1.5)])
    #expect(value.version == 2 && value.attributes.isEmpty)

    let book = StoredShape(entity: "GraphicNovel", layout: layout)
    let novel = book.value(
      of: ObjectRecord(entity: "GraphicNovel", primaryKey: 9),
      manyToMany: ["tags": [(5, nil), (6, nil)]])
    #expect(
      novel.relationships["tags"]?.map(\.target) == [
        ObjectReference(entity: "Tag", primaryKey: 5),
        ObjectReference(entity: "Tag", primaryKey: 6),
      ])
  }

  @Test func theOwnerOfAToManyWithoutInverseIsReadFromTheMembersRow() throws {
    let layout = try Self.layout(try SwiftDataShapeContextTests.model())
    let step = StoredShape(entity: "Step", layout: layout)
    let owner = try #require(step.column(for: .owner("Cocktail", "steps")))
    let place = try #require(step.column(for: .ownerOrder("Cocktail", "steps")))
    var record = ObjectRecord(entity: "Step", primaryKey: 2, attributes: ["text": .string("stir")])
    record.extraColumns = [owner: .integer(7), place: .integer(1)]
    let value = step.value(of: record, manyToMany: [:])
    #expect(
      value.owners == [
        ObjectValue.OwnerLink(
          owner: .init(entity: "Cocktail", primaryKey: 7), relationship: "steps", order: 1)
      ])
    #expect(value.unmodelled.isEmpty && value.storedAsIs.isEmpty)
  }

  @Test func everyColumnWithAMeaningIsTheColumnOfThatMeaning() throws {
    for model in [try LibraryModel.make(), try SwiftDataShapeContextTests.model()] {
      let layout = try Self.layout(model)
      for entity in model.entities where !entity.isAbstract {
        let shape = StoredShape(entity: entity.name, layout: layout)
        let table = try #require(layout.table(for: entity.name))
        var meanings = 0
        for column in table.unmappedColumns + table.attributes.values.flatMap({ $0.map(\.column) })
        {
          guard let meaning = shape.meaning(ofColumn: column) else { continue }
          meanings += 1
          #expect(shape.column(for: meaning) == column, "\(entity.name) \(meaning)")
        }
        #expect(meanings > 0 || entity.attributes.isEmpty, "\(entity.name)")
      }
    }
  }

  @Test func siblingsSharingATableEachFindTheirOwnColumnOfOneAttributeName() throws {
    let layout = try Self.layout(try Self.siblings())
    let lamp = StoredShape(entity: "Lamp", layout: layout)
    let rug = StoredShape(entity: "Rug", layout: layout)
    let lampCode = try #require(lamp.column(for: .attribute("code")))
    let rugCode = try #require(rug.column(for: .attribute("code")))
    #expect(lampCode != rugCode)
    #expect(lampCode == layout.column(ofAttribute: "code", in: "Lamp"))
    #expect(rugCode == layout.column(ofAttribute: "code", in: "Rug"))
    // A rug's value in the lamp's column is not a rug's code.
    #expect(rug.meaning(ofColumn: lampCode) == nil)
    #expect(rug.meaning(ofColumn: rugCode) == .attribute("code"))
    #expect(lamp.column(for: .attribute("name")) == rug.column(for: .attribute("name")))
  }

  @Test func valuesReadFromRecordsAreWrittenBackAsTheSameRows() throws {
    let directory = try TemporaryDirectory()
    let model = try LibraryModel.make()
    let layout = try Self.layout(model)
    var books = StoreLoaderTests.books(60)
    let edition = try #require(layout.column(ofAttribute: "edition", in: "Book"))
    books.storedColumns = [
      ObjectBatch.StoredColumn(
        name: edition, records: [3, 8], values: .texts(StoreLoaderTests.texts(["first", "second"])))
    ]
    let place = try #require(
      StoredShape(entity: "Page", layout: layout).column(for: .order("book")))
    let pages = (1...30).map { key -> (ObjectRecord, [String: [(Int64, Int64?)]]) in
      var page = ObjectRecord(
        entity: "Page", primaryKey: Int64(key), attributes: ["number": .integer(Int64(key))],
        toOne: ["book": .init(entity: "Book", primaryKey: Int64(key % 7 + 1))])
      page.extraColumns[place] = .integer(Int64(31 - key))
      return (page, [:])
    }
    let records = StoreLoaderTests.self
    let asRecords = try records.loader(at: directory.path("records.sqlite").path)
    try asRecords.insert(books)
    for (record, links) in pages { try asRecords.insert(record, manyToMany: links) }
    try asRecords.finish(indexesAndTriggers: [], journalMode: "delete")

    let asValues = try records.loader(at: directory.path("values.sqlite").path)
    let writer = try ObjectValueWriter(loader: asValues)
    for (record, links) in books.records + pages {
      try writer.write(
        StoredShape(entity: record.entity, layout: layout).value(of: record, manyToMany: links))
    }
    try asValues.finish(indexesAndTriggers: [], journalMode: "delete")

    let expected = try StoreLoaderTests.rows(
      try Database(path: directory.path("records.sqlite").path))
    let written = try StoreLoaderTests.rows(
      try Database(path: directory.path("values.sqlite").path))
    #expect(expected["ZBOOK"]?.count == 60 && expected["ZPAGE"]?.count == 30)
    #expect(written == expected)
  }

  @Test func ownersReadFromMembersRowsAreWrittenBackWhereTheyWere() throws {
    let directory = try TemporaryDirectory()
    let model = try SwiftDataShapeContextTests.model()
    let layout = try Self.layout(model)
    let schema = try StoreSchema(model: model)
    let step = StoredShape(entity: "Step", layout: layout)
    let owner = try #require(step.column(for: .owner("Cocktail", "steps")))
    let place = try #require(step.column(for: .ownerOrder("Cocktail", "steps")))
    let cocktails = (1...2).map {
      ObjectRecord(
        entity: "Cocktail", primaryKey: Int64($0), attributes: ["name": .string("c\($0)")])
    }
    let steps = (1...5).map { key -> ObjectRecord in
      var record = ObjectRecord(
        entity: "Step", primaryKey: Int64(key), attributes: ["text": .string("s\(key)")])
      if key != 3 {
        record.extraColumns = [
          owner: .integer(Int64(key % 2 + 1)), place: .integer(Int64(6 - key)),
        ]
      }
      return record
    }
    var stores: [[String: [[SQLiteValue]]]] = []
    for (name, asValues) in [("records", false), ("values", true)] {
      let path = directory.path("\(name).sqlite").path
      let loader = try StoreLoader(path: path)
      try loader.createTables(schema.schemaObjects)
      try loader.prepare(model: model, entityRows: schema.entityRows(maxima: [:]))
      let writer = try ObjectValueWriter(loader: loader)
      for record in cocktails + steps {
        if asValues {
          try writer.write(
            StoredShape(entity: record.entity, layout: layout).value(of: record, manyToMany: [:]))
        } else {
          try loader.insert(record)
        }
      }
      try loader.finish(indexesAndTriggers: [], journalMode: "delete")
      stores.append(try StoreLoaderTests.rows(try Database(path: path)))
    }
    #expect(stores[0]["ZSTEP"]?.count == 5)
    #expect(stores[1] == stores[0])
  }
}
