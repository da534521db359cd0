import Foundation
import GraphVault
import GraphVaultTesting
import ObjectModel
import ObjectStore
import PropertyList
import TestSupport
import Testing

@Suite("Loading fixtures in a test", .serialized)
struct TemporaryStoreTests {
  let directory: TemporaryDirectory
  let library: String

  init() throws {
    directory = try TemporaryDirectory()
    library = directory.path("library.sqlite").path
    try SampleLibrary.generate(at: library, objects: 400, seed: 7)
  }

  /// What the README shows: a fixture cut with `graphvault fixture`, loaded in one call.
  @Test func aFixtureArchiveLoadsIntoAStoreThatGoesAwayWithTheValue() throws {
    let fixture = directory.path("books.gvault").path
    var options = FixtureService.Options(
      selection: .init(entity: "Book", predicate: "title CONTAINS 'lantern'", limit: 5),
      output: Location(path: fixture))
    options.scrubs = [ScrubRule(argument: "Writer.alias=fake")!]
    _ = try FixtureService.cut(source: Location(path: library), options: options)

    var folder: String?
    do {
      let store = try TemporaryStore(loading: fixture)
      folder = URL(fileURLWithPath: store.path).deletingLastPathComponent().path
      let books = try store.context.fetch(
        FetchRequest(entity: "Book", sortDescriptors: [SortDescriptor("title")]))
      #expect(books.count == 5)
      for book in books {
        guard case .string(let title) = try book.value(for: "title") else {
          Issue.record("\(book) has no title")
          continue
        }
        #expect(title.contains("lantern"))
        // Whole: the author each book points at came along, scrubbed.
        let author = try #require(try book.object(for: "author"))
        guard case .string(let alias) = try author.value(for: "alias") else {
          Issue.record("\(author) has no alias")
          continue
        }
        #expect(alias.hasPrefix("Writer.alias-"))
      }
      // The context saves into the temporary store, never the fixture.
      let tag = try store.context.insert("Tag")
      try tag.setValue(.string("added in a test"), for: "name")
      try store.context.save()
    }
    #expect(folder.map { FileManager.default.fileExists(atPath: $0) } == false)
  }

  @Test func aFixtureCutUnderAnOlderModelLoadsIntoTheNewerOneBuiltInCode() throws {
    let fixture = directory.path("older.gvault").path
    _ = try FixtureService.cut(
      source: Location(path: library),
      options: FixtureService.Options(
        selection: .init(entity: "Book", predicate: "title CONTAINS 'lantern'", limit: 4),
        output: Location(path: fixture)))
    // The app's model grew: books have a subtitle, with a default.
    let builder = ModelBuilder(model: try SampleLibrary.model(), versionName: "Library next")
    try builder.modifyEntity("Book") { book in
      book.attributes.append(
        AttributeDescription(name: "subtitle", type: .string, defaultValue: .string("none")))
    }
    let newer = try builder.build()
    let store = try TemporaryStore(loading: fixture, model: newer)
    let books = try store.context.fetch(FetchRequest(entity: "Book"))
    #expect(books.count == 4)
    for book in books {
      #expect(try book.value(for: "subtitle") == .string("none"))
      guard case .string(let title) = try book.value(for: "title") else {
        Issue.record("\(book) lost its title")
        continue
      }
      #expect(title.contains("lantern"))
    }
    try books[0].setValue(.string("a tale"), for: "subtitle")
    try store.context.save()
    #expect(try CoreDataStore(path: store.path).cachedModel()?.versionName == "Library next")
  }

  /// The README's example, word for word but for where the fixture comes from.
  @Test func theReadmeExampleRuns() throws {
    let fixture = directory.path("books.gvault").path
    var options = FixtureService.Options(
      selection: .init(entity: "Book", predicate: "title CONTAINS 'lantern'", limit: 5),
      output: Location(path: fixture))
    options.scrubs = [ScrubRule(argument: "Writer.alias")!]
    _ = try FixtureService.cut(source: Location(path: library), options: options)

    // A fresh store in a temporary folder, removed when `store` goes away.
    let store = try TemporaryStore(loading: fixture)
    let books = try store.context.fetch(
      FetchRequest(entity: "Book", predicate: "title CONTAINS 'lantern'"))
    #expect(books.count == 5)
    for book in books {
      let author = try #require(try book.object(for: "author"))
      #expect(try author.value(for: "alias") != nil)
    }
    // Objects as class-tagged dictionaries, and back: references are entity and key.
    let tag = try store.context.insert(json: #"{"class": "Tag", "name": "test"}"#)
    try tag.populate(
      json: #"{"class": "Tag", "books": [{"class": "Book", "pk": \#(books[0].primaryKey)}]}"#)
    try store.context.save()  // into the temporary store, never the fixture
    #expect(try books[0].objects(for: "tags").contains { $0 === tag })
  }

  @Test func aHandWrittenJSONFixtureLoadsWithNaturalKeysAndFreshKeys() throws {
    // The model as `graphvault export` carries it, then objects as a person writes them.
    let exported = directory.path("export.json").path
    var export = ExportService.Options()
    export.entities = ["Tag"]
    export.output = exported
    _ = try ExportService.export(source: Location(path: library), options: export)
    let text = try String(contentsOfFile: exported, encoding: .utf8)
    let model = try #require(text.range(of: "\"objects\": [")).lowerBound
    let fixture = directory.path("fixture.json").path
    try
      (String(text[..<model])
        + """
        "objects": [
            {"class": "Author", "alias": "ann", "age": 41},
            {"class": "Book", "title": "Dune", "uniqueID": "0F4E7C8A-0000-4000-8000-000000000001",
             "author": {"class": "Writer", "alias": "ann"}, "publishedAt": "1965-08-01T00:00:00Z",
             "price": "9.99", "tags": [{"class": "Tag", "name": "classic"}]},
            {"class": "Tag", "pk": 7, "name": "classic"}
          ]
        }
        """).write(toFile: fixture, atomically: false, encoding: .utf8)

    let store = try TemporaryStore(loading: fixture)
    let dune = try #require(try store.context.fetch(FetchRequest(entity: "Book")).first)
    #expect(try dune.object(for: "author")?.value(for: "alias") == .string("ann"))
    #expect(try dune.objects(for: "tags").map(\.primaryKey) == [7])
    #expect(try dune.value(for: "price") == .decimal("9.99"))
    // As Python's datetime says.
    #expect(try dune.value(for: "publishedAt") == .date(-1_117_756_800))
    #expect(try dune.value(for: "edition") == .integer(1))  // the model's default
  }

  @Test func objectsConvertToAndFromJSONText() throws {
    let store = try TemporaryStore(loading: try jsonFixture())
    let context = store.context
    let tag = try context.insert(json: #"{"class": "Tag", "pk": 90, "name": "new"}"#)
    #expect(
      try tag.json() == """
        {
          "class": "Tag",
          "pk": 90,
          "books": [],
          "name": "new"
        }
        """)
    let book = try context.insert(
      json: #"""
        {"class": "Book", "title": "Emma", "author": {"class": "Author", "alias": "ann"},
         "tags": [{"class": "Tag", "pk": 90}], "rating": "NaN", "weight": 0.5}
        """#)
    #expect(try book.value(for: "weight") == .double(0.5))
    let written = try book.json()
    #expect(written.contains(#""author": {"class": "Author", "pk": "#))
    #expect(written.contains(#""rating": "NaN""#))
    try book.populate(json: #"{"class": "Book", "rating": 4.5, "tags": []}"#)
    #expect(try book.value(for: "rating") == .double(4.5))
    #expect(try book.objects(for: "tags").isEmpty)
    #expect(throws: VaultError.self) {
      try context.insert(json: #"{"class": "Book", "title": 12}"#)
    }
    try context.save()
  }

  @Test func extendedAttributesTravelThroughJSONAsKeysOfTheirOwn() throws {
    let model = try ObjectModel(
      name: "Notes", versionIdentifiers: ["1"],
      entities: [
        EntityDescription(
          name: "Note", userInfo: [ExtendedAttributes.bucketKey: "bucket"],
          attributes: [
            AttributeDescription(name: "title", type: .string),
            AttributeDescription(name: "bucket", type: .binaryData),
          ])
      ])
    let store = directory.path("notes.sqlite").path
    try StoreCreator.create(at: store, model: model)
    do {
      let context = try ObjectContext(storePath: store, model: model)
      let note = try context.insert("Note")
      try note.setValue(.string("n"), for: "title")
      try note.setValue(.array([.string("a"), .integer(2)]), forExtendedKey: "tags")
      try note.setValue(
        .date(PropertyListDate(secondsSinceReferenceDate: 0.5)), forExtendedKey: "seen")
      try context.save()
    }
    var export = ExportService.Options()
    export.output = directory.path("notes.json").path
    _ = try ExportService.export(source: Location(path: store), options: export)
    let text = try String(contentsOfFile: export.output, encoding: .utf8)
    #expect(text.contains(#""extended.seen": {"$date": "2001-01-01T00:00:00.5Z"}"#))
    #expect(text.contains(#""extended.tags": ["a", 2]"#))
    #expect(!text.contains(#""bucket": {"base64""#))
    let loaded = try TemporaryStore(loading: export.output)
    let note = try #require(try loaded.context.fetch(FetchRequest(entity: "Note")).first)
    #expect(try note.value(forExtendedKey: "tags") == .array([.string("a"), .integer(2)]))
    var again = ExportService.Options()
    again.output = directory.path("again.json").path
    _ = try ExportService.export(source: Location(path: loaded.path), options: again)
    #expect(try String(contentsOfFile: again.output, encoding: .utf8) == text)
  }

  /// A JSON fixture of one author, written by `export` from a store made here.
  private func jsonFixture() throws -> String {
    let store = directory.path("one.sqlite").path
    try StoreCreator.create(at: store, model: try SampleLibrary.model())
    let context = try ObjectContext(storePath: store, model: try SampleLibrary.model())
    let author = try context.insert("Author")
    try author.setValue(.string("ann"), for: "alias")
    try context.save()
    var export = ExportService.Options()
    export.output = directory.path("one.json").path
    _ = try ExportService.export(source: Location(path: store), options: export)
    return export.output
  }
}
