import Foundation
import GraphVault
import Migration
import ObjectModel
import ObjectStore
import SQLite
import TestSupport
import Testing

/// Migrations of the sample model's frozen archives (`Fixtures/Archives`), whose three versions
/// exercise every inferred rule, and the ways a migration is refused.
@Suite("Migrating the sample library")
struct LibraryMigrationTests {
  static let fixtures = SharedFixtures.packageRoot.appendingPathComponent("Fixtures")
  static let modelSet = fixtures.appendingPathComponent("Library.xcdatamodeld").path

  static func archive(_ version: Int, format: Int = 1) -> String {
    fixtures.appendingPathComponent(
      "Archives/Library-\(version)\(format == 1 ? "" : "-format\(format)").gvault"
    ).path
  }

  static func restore(
    _ archive: String, to store: String, model: String = modelSet, version: String? = nil,
    mapping: String? = nil, dryRun: Bool = false, stages: [MigrationStage] = []
  ) throws(VaultError) -> RestoreResult {
    var options = RestoreOptions()
    options.modelPath = model
    options.modelVersion = version
    options.mappingPaths = mapping.map { [$0] } ?? []
    options.dryRun = dryRun
    options.stages = stages
    return try RestoreService.restore(archive: Location(path: archive), to: store, options: options)
  }

  static func rows(_ store: String, _ sql: String) throws -> [[SQLiteValue]] {
    try Database(path: store, mode: .readOnly).prepare(sql).allRows()
  }

  static func count(_ store: String, _ table: String) throws -> Int64 {
    try rows(store, "SELECT COUNT(*) FROM \(table)").first?.first?.integerValue ?? -1
  }

  /// A copy of the sample model set whose current version's XML was edited by `edit`.
  static func editedModelSet(in directory: TemporaryDirectory, _ edit: (String) -> String) throws
    -> String
  {
    let copy = directory.path("Library.xcdatamodeld")
    try FileManager.default.copyItem(atPath: modelSet, toPath: copy.path)
    let contents = copy.appendingPathComponent("Library 3.xcdatamodel/contents")
    let text = try String(contentsOf: contents, encoding: .utf8)
    try edit(text).write(to: contents, atomically: false, encoding: .utf8)
    return copy.path
  }

  static func writeMapping(_ json: String, in directory: TemporaryDirectory) throws -> String {
    let path = directory.path("mapping.json")
    try json.write(to: path, atomically: false, encoding: .utf8)
    return path.path
  }

  @Test func theVersionOneArchiveRestoresIntoTheCurrentVersionWithEveryObjectAccountedFor() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("library.sqlite").path
    let result = try Self.restore(Self.archive(1), to: store)
    #expect(result.modelVersion == "Library 3")
    #expect(result.migration?.hops.map(\.to) == ["Library 2", "Library 3"])
    #expect(
      result.objects == ["Book": 20, "GraphicNovel": 10, "Novelist": 6, "Page": 60, "Shelf": 3])
    #expect(result.migration?.hops.first?.objects["Shelf"]?.dropped == 3)

    // Novelist → Author under the new abstract Writer, alias moved up into Writer.
    #expect(try Self.count(store, "ZWRITER WHERE Z_ENT = 6") == 6)
    #expect(
      try Self.rows(store, "SELECT ZALIAS, ZAGE FROM ZWRITER WHERE Z_PK = 2") == [
        [.text("novelist-2"), .integer(32)]
      ])
    // name → title by renaming identifier; edition widened; weight added with its default.
    let books = try Self.rows(
      store,
      "SELECT Z_PK, Z_ENT, ZTITLE, ZEDITION, ZWEIGHT, ZAUTHOR, Z5_AUTHOR FROM ZBOOK ORDER BY Z_PK")
    #expect(books.count == 30)
    for book in books {
      let pk = book[0].integerValue!
      #expect(book[1].integerValue == (pk % 3 == 0 ? 2 : 1))
      #expect(book[2].textValue == "Book \(pk)")
      #expect(book[3].integerValue == pk % 5 + 1)
      #expect(book[4] == .real(0))
      // The many-to-many novelists became the to-one author (each book had one).
      #expect(book[5].integerValue == pk % 6 + 1)
      #expect(book[6].integerValue == 6)
    }
    // isBlackAndWhite moved down to GraphicNovel: plain books lost their values.
    #expect(try Self.count(store, "ZBOOK WHERE Z_ENT = 1 AND ZISBLACKANDWHITE IS NOT NULL") == 0)
    #expect(try Self.count(store, "ZBOOK WHERE Z_ENT = 2 AND ZISBLACKANDWHITE IS NOT NULL") == 10)
    // Pages keep their book and their place in the ordered relationship.
    #expect(
      try Self.rows(store, "SELECT ZNUMBER, ZBOOK, Z1_BOOK, Z_FOK_BOOK FROM ZPAGE WHERE Z_PK = 6")
        == [[.integer(2), .integer(3), .integer(2), .integer(2048)]])
    let keys = try Self.rows(
      store, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_SUPER = 0 ORDER BY Z_ENT")
    #expect(
      keys == [
        [.text("Book"), .integer(30)], [.text("Page"), .integer(60)], [.text("Tag"), .integer(0)],
        [.text("Writer"), .integer(6)],
      ])

    // The migrated store backs up and restores like any other store of the current version.
    var options = BackupService.Options()
    options.modelPath = Self.modelSet
    options.output = Location(path: directory.path("migrated.gvault").path)
    let again = try BackupService.backup(storePath: store, options: options)
    #expect(again.modelVersion == "Library 3")
    let copy = directory.path("copy.sqlite").path
    _ = try RestoreService.restore(archive: Location(path: again.archive), to: copy)
    #expect(try storeRows(copy) == storeRows(store))

    // The object layer reads the migrated graph.
    let context = try ObjectContext(storePath: store, model: try SampleLibrary.model())
    let book = try context.object(with: ObjectReference(entity: "GraphicNovel", primaryKey: 3))
    #expect(try book.object(for: "author")?.value(for: "alias") == .string("novelist-4"))
    #expect(
      try book.objects(for: "pages").map { try $0.value(for: "text") } == [
        .string("page 5"), .string("page 6"),
      ])
  }

  /// The same store frozen in archive formats 1 and 2.
  @Test(arguments: [1, 2])
  func theVersionTwoArchiveRestoresIntoTheCurrentVersionWithEveryObjectAccountedFor(format: Int)
    throws
  {
    let directory = try TemporaryDirectory()
    let store = directory.path("library.sqlite").path
    let result = try Self.restore(Self.archive(2, format: format), to: store)
    #expect(result.migration?.hops.map(\.to) == ["Library 3"])
    // Tag names: numbers became strings; the missing one got the new default.
    #expect(
      try Self.rows(store, "SELECT ZNAME FROM ZTAG ORDER BY Z_PK").map { $0[0].textValue }
        == ["101", "102", "103", "untagged"])
    // The to-one tag became the many-to-many tags: one join row per tagged book.
    #expect(try Self.count(store, "Z_1TAGS") == 20)
    #expect(
      try Self.rows(store, "SELECT Z_4TAGS FROM Z_1TAGS WHERE Z_1BOOKS = 5") == [[.integer(2)]])
    #expect(try Self.count(store, "ZBOOK") == 24)
    #expect(try Self.count(store, "ZPAGE") == 48)
    #expect(try Self.count(store, "ZWRITER") == 5)
  }

  @Test func theSameStoreFrozenInEitherFormatRestoresToTheSameRows() throws {
    let directory = try TemporaryDirectory()
    var tables: [[String: [[SQLiteValue]]]] = []
    for format in [1, 2] {
      let store = directory.path("format\(format).sqlite").path
      _ = try Self.restore(Self.archive(2, format: format), to: store, version: "Library 2")
      // The two archives' stores were made by `graphvault create` two days apart: their UUIDs
      // differ, and only the newer one keeps its model (Z_MODELCACHE).
      let names = try Self.rows(
        store,
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('Z_METADATA', 'Z_MODELCACHE')"
      ).compactMap(\.[0].textValue)
      var rows: [String: [[SQLiteValue]]] = [:]
      for name in names { rows[name] = try Self.rows(store, "SELECT * FROM \(name) ORDER BY 1") }
      tables.append(rows)
    }
    #expect(tables[0].count == 5)  // Z_PRIMARYKEY, ZBOOK, ZPAGE, ZTAG, ZWRITER
    #expect(tables[0] == tables[1])
  }

  @Test func aDryRunPrintsThePlanAndWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("library.sqlite").path
    let planned = try Self.restore(Self.archive(1), to: store, dryRun: true)
    #expect(!FileManager.default.fileExists(atPath: store))
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    #expect(planned.dryRun)
    let changes = planned.migration?.hops.flatMap(\.changes) ?? []
    for expected in [
      "entity Novelist renamed Author", "Book.title: renamed from name",
      "Book.author: to-many → to-one", "Book.tags: to-one → to-many",
      "Writer.alias: moved from Novelist", "Tag.name: Integer 32 → String",
      "entity Shelf removed: its objects are dropped",
    ] {
      #expect(changes.contains(expected), "\(expected) is not in \(changes)")
    }
    let done = try Self.restore(Self.archive(1), to: store)
    #expect(done.migration?.hops == planned.migration?.hops)
  }

  @Test func anArchiveNewerThanTheTargetIsRefusedNamingBothVersions() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("library.sqlite").path
    let error = #expect(throws: VaultError.self) {
      try Self.restore(Self.archive(2), to: store, version: "Library")
    }
    #expect(error?.kind == .modelUnavailable)
    #expect(
      error?.detail.contains("version Library 2, newer than the target version Library") == true)
    #expect(!FileManager.default.fileExists(atPath: store))
  }

  @Test(arguments: [
    (
      #"{"format": 1, "hops": [{"from": "Library 2", "to": "Library 3", "entities": {"Shelf": {}}}]}"#,
      "entity Shelf"
    ),
    (
      #"{"format": 1, "hops": [{"from": "Library 2", "to": "Library 3", "entities": {"Book": {"attributes": {"subtitle": {"default": "x"}}}}}]}"#,
      "Book.subtitle"
    ),
    (
      #"{"format": 1, "hops": [{"from": "Library 2", "to": "Library 3", "entities": {"Book": {"attributes": {"title": {"from": "heading"}}}}}]}"#,
      "heading"
    ),
    (
      #"{"format": 1, "hops": [{"from": "Library 2", "to": "Library 3", "entities": {"Book": {"atributes": {}}}}]}"#,
      "unknown key \"atributes\""
    ),
    (
      #"{"format": 1, "hops": [{"from": "Library", "to": "Library 3"}]}"#,
      "does not join consecutive versions"
    ),
    (#"{"format": 2, "hops": []}"#, "format 2"),
  ])
  func aMappingFileThatNamesWhatIsNotThereIsRefusedAndNothingIsWritten(
    mapping: String, named: String
  ) throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("library.sqlite").path
    let error = #expect(throws: VaultError.self) {
      try Self.restore(
        Self.archive(2), to: store, mapping: try Self.writeMapping(mapping, in: directory))
    }
    #expect(error?.kind == .modelUnavailable)
    #expect(error?.detail.contains(named) == true, "\(error?.detail ?? "")")
    #expect(!FileManager.default.fileExists(atPath: store))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["mapping.json"])
  }

  @Test func aRequiredAttributeWithoutValueOrDefaultNamesTheObjectAndWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let model = try Self.editedModelSet(in: directory) {
      $0.replacingOccurrences(of: #" defaultValueString="untagged""#, with: "")
    }
    let store = directory.path("library.sqlite").path
    let error = #expect(throws: VaultError.self) {
      try Self.restore(Self.archive(2), to: store, model: model)
    }
    #expect(error?.kind == .modelUnavailable)
    #expect(
      error?.detail.contains("Tag/p4 has no value for Tag.name") == true, "\(error?.detail ?? "")")
    #expect(!FileManager.default.fileExists(atPath: store))
    // A mapping file's default fills it.
    let mapping = try Self.writeMapping(
      #"{"format": 1, "hops": [{"from": "Library 2", "to": "Library 3", "entities": {"Tag": {"attributes": {"name": {"default": "misc"}}}}}]}"#,
      in: directory)
    _ = try Self.restore(Self.archive(2), to: store, model: model, mapping: mapping)
    #expect(try Self.rows(store, "SELECT ZNAME FROM ZTAG WHERE Z_PK = 4") == [[.text("misc")]])
  }

  @Test func aTypeChangeThatLosesDataIsRefusedUnlessTheMappingSaysWhatToDo() throws {
    let directory = try TemporaryDirectory()
    let model = try Self.editedModelSet(in: directory) {
      $0.replacingOccurrences(
        of: #"<attribute name="number" optional="YES" attributeType="Integer 32""#,
        with: #"<attribute name="number" optional="YES" attributeType="Date""#)
    }
    let store = directory.path("library.sqlite").path
    let error = #expect(throws: VaultError.self) {
      try Self.restore(Self.archive(2), to: store, model: model)
    }
    #expect(error?.kind == .modelUnavailable)
    #expect(
      error?.detail.contains("Page.number changes from Integer 32 to Date") == true,
      "\(error?.detail ?? "")")
    #expect(!FileManager.default.fileExists(atPath: store))
    let mapping = try Self.writeMapping(
      #"{"format": 1, "hops": [{"from": "Library 2", "to": "Library 3", "entities": {"Page": {"attributes": {"number": {"drop": true}}}}}]}"#,
      in: directory)
    _ = try Self.restore(Self.archive(2), to: store, model: model, mapping: mapping)
    // Dropped values leave the attribute as a new one: it gets its default (0).
    #expect(try Self.count(store, "ZPAGE WHERE ZNUMBER = 0") == 48)
  }

  @Test func aToManyThatBecomesToOneRefusesObjectsWithSeveralDestinations() throws {
    let directory = try TemporaryDirectory()
    let model = try ModelSource.model(at: Self.modelSet, versionName: "Library")
    let source = directory.path("v1.sqlite").path
    try StoreCreator.create(at: source, model: model)
    let context = try ObjectContext(storePath: source, model: model)
    let book = try context.insert("Book")
    try book.setValue(.string("Two hands"), for: "name")
    for alias in ["a", "b"] {
      let novelist = try context.insert("Novelist")
      try novelist.setValue(.string(alias), for: "alias")
      try book.add(novelist, to: "novelists")
    }
    try context.save()
    var options = BackupService.Options()
    options.modelPath = Self.modelSet
    options.output = Location(path: directory.path("v1.gvault").path)
    let archive = try BackupService.backup(storePath: source, options: options).archive
    let store = directory.path("library.sqlite").path
    let error = #expect(throws: VaultError.self) {
      try Self.restore(archive, to: store)
    }
    #expect(error?.kind == .modelUnavailable)
    #expect(
      error?.detail.contains("through Book.author, which is to-one") == true,
      "\(error?.detail ?? "")")
    #expect(!FileManager.default.fileExists(atPath: store))
  }

  @Test func customStagesChangeObjectsMakeNewOnesAndFinishOnTheNewStore() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("library.sqlite").path
    let stage = MigrationStage(
      from: "Library 2", to: "Library 3",
      perObject: { object, emitter in
        guard object.entity == "Book" || object.entity == "GraphicNovel" else {
          return object.entity != "Page" || object.primaryKey <= 10
        }
        if case .string(let title)? = object.attributes["title"] {
          object.attributes["title"] = .string(title.uppercased())
        }
        if object.primaryKey == 1 {
          var tag = try emitter.newObject(of: "Tag")
          tag.attributes["name"] = .string("staged")
          emitter.emit(tag)
          object.relationships["tags", default: []].append(MigrationLink(target: tag.reference))
        }
        return true
      },
      after: { context in
        let tags = try context.fetch(
          FetchRequest(entity: "Tag", predicate: .equal("name", .string("staged"))))
        for tag in tags { try tag.setValue(.string("staged and saved"), for: "name") }
      })
    let result = try Self.restore(Self.archive(2), to: store, stages: [stage])
    #expect(
      try Self.rows(store, "SELECT ZTITLE FROM ZBOOK WHERE Z_PK = 2") == [[.text("VOLUME 2")]])
    #expect(try Self.count(store, "ZPAGE") == 10)
    #expect(
      try Self.rows(store, "SELECT Z_PK, ZNAME FROM ZTAG WHERE Z_PK = 5") == [
        [.integer(5), .text("staged and saved")]
      ])
    #expect(try Self.count(store, "Z_1TAGS WHERE Z_1BOOKS = 1") == 2)
    #expect(
      try Self.rows(store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag'") == [[.integer(5)]]
    )
    #expect(result.migration?.hops.first?.objects["Tag"]?.created == 1)
  }
}

extension LibraryMigrationTests {
  @Test func applicationTablesAreCarriedAndHistoryRowsOfTheOldModelAreDropped() throws {
    let directory = try TemporaryDirectory()
    let model = try ModelSource.model(at: Self.modelSet, versionName: "Library 2")
    let source = directory.path("v2.sqlite").path
    var creation = StoreCreator.Options()
    creation.persistentHistory = true
    try StoreCreator.create(at: source, model: model, options: creation)
    let context = try ObjectContext(storePath: source, model: model)
    let tag = try context.insert("Tag")
    try tag.setValue(.integer(7), for: "name")
    try context.save()
    let db = try Database(path: source, mode: .readWrite)
    try db.executeScript(
      """
      CREATE TABLE APPSETTINGS (KEY TEXT PRIMARY KEY, VALUE TEXT);
      CREATE INDEX APPSETTINGS_VALUE ON APPSETTINGS (VALUE);
      INSERT INTO APPSETTINGS VALUES ('theme', 'dark'), ('sync', 'on');
      """)
    // The save recorded its insert in the store's history, as Core Data's would.
    #expect(try Self.count(source, "ACHANGE WHERE ZCHANGETYPE = 0 AND ZENTITYPK = 1") == 1)
    var options = BackupService.Options()
    options.modelPath = Self.modelSet
    options.output = Location(path: directory.path("v2.gvault").path)
    let archive = try BackupService.backup(storePath: source, options: options).archive
    let store = directory.path("library.sqlite").path
    let result = try Self.restore(archive, to: store)
    #expect(
      try Self.rows(store, "SELECT KEY, VALUE FROM APPSETTINGS ORDER BY KEY") == [
        [.text("sync"), .text("on")], [.text("theme"), .text("dark")],
      ])
    #expect(try Self.count(store, "sqlite_master WHERE name = 'APPSETTINGS_VALUE'") == 1)
    #expect(try Self.count(store, "ACHANGE") == 0)
    #expect(try Self.count(store, "sqlite_master WHERE name = 'ATRANSACTION'") == 1)
    #expect(
      result.migration?.notes.contains {
        $0.hasPrefix("ACHANGE: 1 persistent-history rows")
      } == true)
    #expect(try Self.rows(store, "SELECT ZNAME FROM ZTAG") == [[.text("7")]])
  }
}
