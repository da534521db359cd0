import Foundation
import ObjectModel
import ObjectStore
import SQLite
import TestSupport
import Testing

@Suite(
  "Reading real Core Data stores", .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote)
)
struct StoreReadingTests {
  /// The model of a fixture store: its own model cache, else its version in its model set.
  static func model(for store: CoreDataStore, entry: FixtureStore) throws -> ObjectModel {
    if let cached = try store.cachedModel() { return cached }
    let set = try ModelVersionSet.load(path: SharedFixtures.file(try #require(entry.modelSet)).path)
    return try VersionDetector.detect(store: store, in: set)
  }

  @Test(arguments: FixtureStore.all)
  func everyObjectIsReadAndEveryReferenceResolves(entry: FixtureStore) throws {
    let storePath = entry.store
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(storePath, into: directory.url)
    let before = [copy.path, copy.path + "-wal"].map {
      try? Data(contentsOf: URL(fileURLWithPath: $0))
    }
    do {
      let store = try CoreDataStore(path: copy.path)
      let model = try Self.model(for: store, entry: entry)
      let layout = try store.layout(for: model)
      try store.read { store in
        var references = Set<ObjectReference>()
        var pointers: [(ObjectReference, String, ObjectReference)] = []
        for table in layout.tables {
          var read = 0
          try store.forEachObject(in: table, layout: layout) { record in
            read += 1
            references.insert(record.reference)
            for (name, target) in record.toOne { pointers.append((record.reference, name, target)) }
          }
          #expect(read == (try store.count(table: table.name)), "\(storePath): \(table.name)")
        }
        for (source, name, target) in pointers {
          #expect(
            references.contains(target),
            "\(storePath): \(source).\(name) → \(target) does not resolve")
        }
        for join in layout.joins {
          let owner = join.entity
          try store.forEachPair(in: join) { source, destination, _ in
            #expect(
              references.contains {
                $0.primaryKey == source
                  && model.lineage(of: $0.entity).contains { $0.name == owner }
              })
            #expect(references.contains { $0.primaryKey == destination })
          }
        }
      }
    }
    let after = [copy.path, copy.path + "-wal"].map {
      try? Data(contentsOf: URL(fileURLWithPath: $0))
    }
    #expect(after[0] == before[0], "\(storePath): reading changed the main file")
    if before[1] != nil {
      #expect(after[1] == before[1], "\(storePath): reading changed the -wal")
    } else {
      // A WAL-mode store without a -wal: SQLite's read-only connection creates an empty one
      // (it cannot be avoided without reading unlocked, and deleting it could race a live app).
      #expect(after[1]?.isEmpty ?? true, "\(storePath): reading wrote into a new -wal")
    }
  }

  @Test func valuesAreTypedByTheirAttributeTypes() throws {
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: directory.url)
    let store = try CoreDataStore(path: copy.path)
    let model = try #require(try store.cachedModel())
    let layout = try store.layout(for: model)
    var books: [ObjectRecord] = []
    var pages: [ObjectRecord] = []
    try store.read { store in
      try store.forEachObject(in: #require(layout.table(for: "Book")), layout: layout) {
        books.append($0)
      }
      try store.forEachObject(in: #require(layout.table(for: "Page")), layout: layout) {
        pages.append($0)
      }
    }
    #expect(books.count == 52)
    #expect(Set(books.map(\.entity)) == ["Book", "GraphicNovel"])
    let book = try #require(books.first)
    if case .uuid(let bytes)? = book.attributes["uniqueID"] {
      #expect(bytes.count == 16)
    } else {
      Issue.record("uniqueID is \(String(describing: book.attributes["uniqueID"]))")
    }
    if case .decimal(let text)? = book.attributes["price"] {
      #expect(Double(text) != nil)
    } else {
      Issue.record("price is \(String(describing: book.attributes["price"]))")
    }
    if case .date(let seconds)? = book.attributes["publishedAt"] {
      #expect(seconds > 0)
    } else {
      Issue.record("publishedAt is \(String(describing: book.attributes["publishedAt"]))")
    }
    #expect(books.contains { $0.attributes["isBlackAndWhite"] != nil })
    #expect(
      books.filter { $0.entity == "Book" }.allSatisfy { $0.attributes["isBlackAndWhite"] == nil })
    // Page.book points into a hierarchy: the Z1_BOOK column names the concrete entity.
    #expect(Set(pages.compactMap { $0.toOne["book"]?.entity }) == ["Book", "GraphicNovel"])
    #expect(pages.count == 4970)
  }

  @Test(arguments: FixtureStore.withModelSet)
  func versionDetectionPicksTheStoresVersion(entry: FixtureStore) throws {
    let storePath = entry.store
    let directory = try TemporaryDirectory()
    let store = try CoreDataStore(
      path: SharedFixtures.copyStore(storePath, into: directory.url).path)
    let set = try ModelVersionSet.load(path: SharedFixtures.file(try #require(entry.modelSet)).path)
    #expect(try VersionDetector.detect(store: store, in: set).versionName == entry.version)
  }

  @Test func versionDetectionUsesApplesHashesWithACompiledModel() throws {
    let directory = try TemporaryDirectory()
    let set = try ModelVersionSet.load(
      path: SharedFixtures.file("CoreDataPlus/SampleModel/Fixtures/SampleModel.momd").path)
    for (store, version) in [
      ("SampleModel_V1.sqlite", "SampleModel"), ("SampleModel_V2.sqlite", "SampleModel2"),
    ] {
      let copy = try SharedFixtures.copyStore(
        "CoreDataPlus/SampleModel/Fixtures/\(store)", into: directory.url)
      #expect(
        try VersionDetector.detect(store: CoreDataStore(path: copy.path), in: set).versionName
          == version)
    }
  }

  @Test func aStoreOfAnotherModelMatchesNoVersionAndTheMessageListsThem() throws {
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(
      "CoreDataStack/Stores/TestModel.sqlite", into: directory.url)
    let set = try ModelVersionSet.load(
      path: SharedFixtures.file("BookMigration/Model.xcdatamodeld").path)
    do {
      _ = try VersionDetector.detect(store: CoreDataStore(path: copy.path), in: set)
      Issue.record("detected a version")
    } catch {
      #expect(error.kind == .modelMismatch)
      #expect(error.description.contains("Model1, Model2, Model3"))
    }
  }

  @Test func aModelThatDoesNotDescribeTheStoreIsAMismatchNamingWhat() throws {
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(
      "CoreDataStack/Stores/TestModel.sqlite", into: directory.url)
    let other = try ModelVersionSet.load(
      path: SharedFixtures.file("BookMigration/Model.xcdatamodeld").path
    ).current
    do {
      _ = try CoreDataStore(path: copy.path).layout(for: other)
      Issue.record("a foreign model mapped")
    } catch {
      #expect(error.kind == .modelMismatch)
      #expect(error.description.contains("TestModel.sqlite"))
    }
  }
}

@Suite("Opening files that are not Core Data stores")
struct BadStoreTests {
  @Test func aMissingFileIsMissing() throws {
    let directory = try TemporaryDirectory()
    #expect(throws: StoreError.self) { try CoreDataStore(path: directory.path("nope.sqlite").path) }
    do { _ = try CoreDataStore(path: directory.path("nope.sqlite").path) } catch {
      #expect(error.kind == .missing)
    }
  }

  @Test func aTextFileIsNotADatabase() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("notes.sqlite")
    try Data(String(repeating: "plain text, not SQLite\n", count: 200).utf8).write(to: path)
    do {
      _ = try CoreDataStore(path: path.path)
      Issue.record("opened")
    } catch {
      #expect(error.kind == .notADatabase)
      #expect(error.description.contains("notes.sqlite"))
    }
  }

  @Test func anSQLiteFileWithoutCoreDatasTablesIsNotACoreDataStore() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("plain.sqlite").path
    try Database(path: path, mode: .readWriteCreate).execute("CREATE TABLE t (x)")
    do {
      _ = try CoreDataStore(path: path)
      Issue.record("opened")
    } catch {
      #expect(error.kind == .notACoreDataStore)
      #expect(error.description.contains("Z_PRIMARYKEY"))
    }
  }
}
