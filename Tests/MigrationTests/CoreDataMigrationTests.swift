import Foundation
import GraphVault
import Migration
import SQLite
import TestSupport
import Testing

/// Migrations checked against Core Data itself: stores Core Data migrated, and the schemas it
/// gives each version.
@Suite(
  "Migrating real Core Data archives",
  .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote),
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 for storediff.py"))
struct CoreDataMigrationTests {
  static let mappings = SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Mappings")

  /// Backs up a copy of a fixture store into `directory`: the archive and the copy.
  static func archive(_ store: String, model: String? = nil, in directory: TemporaryDirectory)
    throws -> (archive: String, copy: String)
  {
    let copy = try SharedFixtures.copyStore(store, into: directory.url)
    var options = BackupService.Options()
    options.modelPath = model.map { SharedFixtures.file($0).path }
    options.output = Location(path: directory.path("source.gvault").path)
    return (try BackupService.backup(storePath: copy.path, options: options).archive, copy.path)
  }

  static func restore(
    _ archive: String, to store: String, model: String, version: String,
    mapping: String? = nil
  ) throws -> RestoreResult {
    var options = RestoreOptions()
    options.modelPath = model
    options.modelVersion = version
    options.mappingPaths = mapping.map { [mappings.appendingPathComponent($0).path] } ?? []
    return try RestoreService.restore(archive: Location(path: archive), to: store, options: options)
  }

  static func rows(_ store: String, _ sql: String) throws -> [[SQLiteValue]] {
    try Database(path: store, mode: .readOnly).prepare(sql).allRows()
  }

  /// Core Data migrated `SampleModel_V1` in place to `SampleModel2`: entity `ExpensiveSportCar`
  /// renamed `LuxuryCar` by renaming identifier, `Car.color` and `Person.id` dropped, a fetch
  /// index added. Restoring its archive into `SampleModel2` must give the same entity tables.
  ///
  /// Ignored, and why:
  /// - `Z_METADATA` keys `NSStoreModelVersionHashes` and `NSStoreModelVersionHashesDigest`:
  ///   Apple's entity version hashes cannot be computed from an `.xcdatamodeld` (the second
  ///   test restores with the compiled `.momd` and compares them too);
  /// - `Z_MODELCACHE`: the bytes of graphvault's keyed archive are not Apple's (see docs/DEVELOPMENT.md);
  ///   the model it holds is checked by the CLI tests;
  /// - `Z_PRIMARYKEY`, compared apart below: Core Data's in-place migration kept the old name
  ///   `ExpensiveSportCar` in `Z_NAME`; a fresh store has the entity's name, `LuxuryCar`.
  @Test func aV1ArchiveRestoredAtV2EqualsTheStoreCoreDataMigrated() throws {
    let directory = try TemporaryDirectory()
    let (archive, _) = try Self.archive(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite", in: directory)
    let restored = directory.path("v2.sqlite").path
    let result = try Self.restore(
      archive, to: restored,
      model: SharedFixtures.file("CoreDataPlus/SampleModel/SampleModel.xcdatamodeld").path,
      version: "SampleModel2")
    #expect(result.migration?.hops.map(\.to) == ["SampleModel2"])
    let expected = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite", into: directory.url)
    let diff = try SharedFixtures.storediff([
      "--ignore-metadata-key", "NSStoreModelVersionHashes",
      "--ignore-metadata-key", "NSStoreModelVersionHashesDigest",
      "--ignore-table", "Z_MODELCACHE", "--ignore-table", "Z_PRIMARYKEY", restored, expected.path,
    ])
    #expect(diff.status == 0, "\(diff.stdout)\(diff.stderr)")
    let keys = "SELECT Z_ENT, Z_SUPER, Z_MAX, Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT"
    let ours = try Self.rows(restored, keys)
    let theirs = try Self.rows(expected.path, keys)
    #expect(ours.map { Array($0.prefix(3)) } == theirs.map { Array($0.prefix(3)) })
    #expect(ours.map { $0[3].textValue } == ["Car", "SportCar", "LuxuryCar", "Person"])
    #expect(theirs.map { $0[3].textValue } == ["Car", "SportCar", "ExpensiveSportCar", "Person"])
  }

  @Test func withTheCompiledModelTheMetadataCarriesApplesHashesToo() throws {
    let directory = try TemporaryDirectory()
    let (archive, _) = try Self.archive(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite", in: directory)
    let restored = directory.path("v2.sqlite").path
    _ = try Self.restore(
      archive, to: restored,
      model: SharedFixtures.file("CoreDataPlus/SampleModel/Fixtures/SampleModel.momd").path,
      version: "SampleModel2")
    let expected = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite", into: directory.url)
    let diff = try SharedFixtures.storediff([
      "--ignore-table", "Z_MODELCACHE", "--ignore-table", "Z_PRIMARYKEY", restored, expected.path,
    ])
    #expect(diff.status == 0, "\(diff.stdout)\(diff.stderr)")
  }

  /// `CoreDataMigration-Example`: `color` renamed `hexColor` without a renaming identifier
  /// (mapping), then `hexColor` moved into one new `Color` per post with a generated `colorID`
  /// (mapping), then `hide` added with a default (inferred).
  @Test(arguments: [2, 3, 4])
  func everyPostSurvivesToEachLaterVersion(version: Int) throws {
    let directory = try TemporaryDirectory()
    let model = "CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld"
    let (archive, source) = try Self.archive(
      "CoreDataMigration-Example/Stores/CoreDataMigration_Example_1.sqlite", model: model,
      in: directory)
    let restored = directory.path("v\(version).sqlite").path
    _ = try Self.restore(
      archive, to: restored, model: SharedFixtures.file(model).path,
      version: "CoreDataMigration_Example \(version)", mapping: "CoreDataMigration_Example.json")
    let expected = try SharedFixtures.copyStore(
      "CoreDataMigration-Example/Stores/"
        + (version == 4
          ? "CoreDataMigration_Example_WAL.sqlite" : "CoreDataMigration_Example_\(version).sqlite"),
      into: directory.url)
    let schema = try SharedFixtures.storediff(["--schema-only", restored, expected.path])
    #expect(schema.status == 0, "\(schema.stdout)\(schema.stderr)")

    let before = try Self.rows(
      source, "SELECT Z_PK, ZDATE, ZPOSTID, ZCOLOR FROM ZPOST ORDER BY Z_PK")
    let after = try Self.rows(
      restored,
      version == 2
        ? "SELECT Z_PK, ZDATE, ZPOSTID, ZHEXCOLOR FROM ZPOST ORDER BY Z_PK"
        : "SELECT p.Z_PK, p.ZDATE, p.ZPOSTID, c.ZHEX FROM ZPOST p JOIN ZCOLOR c ON c.Z_PK = p.ZCOLOR AND c.ZPOST = p.Z_PK ORDER BY p.Z_PK"
    )
    #expect(before.count == 1001)
    #expect(after == before)
    if version >= 3 {
      let ids = try Self.rows(restored, "SELECT COUNT(DISTINCT ZCOLORID), COUNT(*) FROM ZCOLOR")
      #expect(ids.first == [.integer(1001), .integer(1001)])
      let keys = try Self.rows(restored, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT")
      #expect(keys == [[.text("Color"), .integer(1001)], [.text("Post"), .integer(1001)]])
    }
    if version == 4 {
      #expect(try Self.rows(restored, "SELECT DISTINCT ZHIDE FROM ZPOST") == [[.integer(0)]])
    }
  }

  /// `BookMigration`: `authorName` becomes one `Author` per distinct name, linked many-to-many;
  /// the to-one `user` becomes the to-many `users` (a rename, in the mapping); then each book's
  /// `fileURL` moves into a `File` linked to the book and to each of its users.
  @Test func booksUsersAndValuesSurviveBothHops() throws {
    let directory = try TemporaryDirectory()
    let model = "BookMigration/Model.xcdatamodeld"
    let (archive, source) = try Self.archive(
      "BookMigration/Stores/Model1.sqlite", model: model, in: directory)
    let v2 = directory.path("v2.sqlite").path
    let v3 = directory.path("v3.sqlite").path
    let second = try Self.restore(
      archive, to: v2, model: SharedFixtures.file(model).path, version: "Model2",
      mapping: "BookMigration.json")
    #expect(second.migration?.hops.last?.objects["Author"]?.created == 3)
    _ = try Self.restore(
      archive, to: v3, model: SharedFixtures.file(model).path, version: "Model3",
      mapping: "BookMigration.json")
    let books = try Self.rows(
      source, "SELECT Z_PK, ZTITLE, ZAUTHORNAME, ZUSER, ZFILEURL FROM ZBOOK ORDER BY Z_PK")
    #expect(books.count == 4)
    // Model2: authors by name, users many-to-many.
    let authored = try Self.rows(
      v2,
      """
      SELECT b.Z_PK, b.ZTITLE, a.ZNAME, u.Z_3USERS, b.ZFILEURL FROM ZBOOK b
      JOIN Z_1BOOKS j ON j.Z_2BOOKS = b.Z_PK JOIN ZAUTHOR a ON a.Z_PK = j.Z_1AUTHORS
      JOIN Z_2USERS u ON u.Z_2BOOKS = b.Z_PK ORDER BY b.Z_PK
      """)
    #expect(authored == books)
    #expect(try Self.rows(v2, "SELECT COUNT(*) FROM ZAUTHOR") == [[.integer(3)]])
    // Model3: one File per book and user, carrying the URL.
    let filed = try Self.rows(
      v3,
      """
      SELECT b.Z_PK, b.ZTITLE, a.ZNAME, f.ZUSER, f.ZFILEURL FROM ZBOOK b
      JOIN Z_1BOOKS j ON j.Z_2BOOKS = b.Z_PK JOIN ZAUTHOR a ON a.Z_PK = j.Z_1AUTHORS
      JOIN ZFILE f ON f.ZBOOK = b.Z_PK ORDER BY b.Z_PK
      """)
    #expect(filed == books)
    let users = try Self.rows(source, "SELECT Z_PK, Z_OPT, ZUSERID FROM ZUSER ORDER BY Z_PK")
    #expect(try Self.rows(v3, "SELECT Z_PK, Z_OPT, ZUSERID FROM ZUSER ORDER BY Z_PK") == users)
    #expect(
      try Self.rows(v3, "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'")
        == [[.text("Book"), .integer(12)]])
  }
}
