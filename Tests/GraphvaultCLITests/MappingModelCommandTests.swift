import Foundation
import TestSupport
import Testing

/// `--mapping` and `--mappings DIR` with the apps' own mapping models, through the built tool.
@Suite(
  "graphvault restore and migrate with the app's mapping models",
  .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
struct MappingModelCommandTests {
  static let model = SharedFixtures.file(
    "CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld"
  ).path
  static let mappings = SharedFixtures.file("CoreDataMigration-Example/Mappings").path

  /// A copy of the example app's first store and its backup.
  static func backup(in directory: TemporaryDirectory) throws -> (store: String, archive: String) {
    let store = try SharedFixtures.copyStore(
      "CoreDataMigration-Example/Stores/CoreDataMigration_Example_1.sqlite", into: directory.url
    ).path
    let archive = directory.path("example.gvault").path
    let result = try BuiltTool.run([
      "backup", store, "--model", Self.model, "--output", archive, "-q",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    return (store, archive)
  }

  @Test func anXcodeMappingModelMigratesARestoreAndItsRenameShowsInTheDryRun() throws {
    let directory = try TemporaryDirectory()
    let (_, archive) = try Self.backup(in: directory)
    let store = directory.path("v2.sqlite").path
    let mapping = "\(Self.mappings)/Migration1to2.xcmappingmodel"
    let arguments = [
      "restore", archive, "--to", store, "--model", Self.model, "--model-version",
      "CoreDataMigration_Example 2", "--mapping", mapping,
    ]
    let plan = try BuiltTool.run(arguments + ["--dry-run"])
    #expect(plan.status == 0, "\(plan.stderr)")
    #expect(plan.stdout.contains("  Post.hexColor: renamed from color\n"), "\(plan.stdout)")
    let result = try BuiltTool.run(arguments + ["-q"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try sqlRows(store, "SELECT COUNT(ZHEXCOLOR) FROM ZPOST") == ["1001"])
  }

  @Test func aFolderWhoseMappingModelNamesAPolicyExitsSeventyEightNamingTheClass() throws {
    let directory = try TemporaryDirectory()
    let (_, archive) = try Self.backup(in: directory)
    let store = directory.path("v3.sqlite").path
    let result = try BuiltTool.run([
      "restore", archive, "--to", store, "--model", Self.model, "--mappings", Self.mappings,
    ])
    #expect(result.status == 78)
    #expect(
      result.stderr.contains("CoreDataMigration_Example.Post2ToPost3MigrationPolicy"),
      "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: store))
  }

  @Test func migrateInPlaceRefusesAPolicyAndLeavesTheStoreAsItWas() throws {
    let directory = try TemporaryDirectory()
    let (store, _) = try Self.backup(in: directory)
    let before = try Data(contentsOf: URL(fileURLWithPath: store))
    let result = try BuiltTool.run([
      "migrate", store, "--model", Self.model, "--mappings", Self.mappings,
    ])
    #expect(result.status == 78)
    #expect(result.stderr.contains("Post2ToPost3MigrationPolicy"), "\(result.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
  }

  /// The JSON file and the app's mapping model say the same rename; before mapping models,
  /// migrate dropped its --mapping and left every `hexColor` empty.
  @Test(arguments: [
    "Fixtures/Mappings/CoreDataMigration_Example.json", "Migration1to2.xcmappingmodel",
  ])
  func migrateInPlaceFollowsItsMapping(mapping: String) throws {
    let directory = try TemporaryDirectory()
    let (store, _) = try Self.backup(in: directory)
    let path =
      mapping.hasPrefix("Fixtures")
      ? SharedFixtures.packageRoot.appendingPathComponent(mapping).path
      : "\(Self.mappings)/\(mapping)"
    let result = try BuiltTool.run([
      "migrate", store, "--model", Self.model, "--model-version", "CoreDataMigration_Example 2",
      "--mapping", path, "-q",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try sqlRows(store, "SELECT COUNT(ZHEXCOLOR) FROM ZPOST") == ["1001"])
  }

  @Test func aMappingModelOfAnotherModelExitsSeventyEightNamingIt() throws {
    let directory = try TemporaryDirectory()
    let (_, archive) = try Self.backup(in: directory)
    let store = directory.path("v2.sqlite").path
    let other = SharedFixtures.file("CoreDataPlus/SampleModel/Fixtures/V2toV3.cdm").path
    let result = try BuiltTool.run([
      "restore", archive, "--to", store, "--model", Self.model, "--mapping", other,
    ])
    #expect(result.status == 78)
    #expect(result.stderr.contains("mapping model \(other)"), "\(result.stderr)")
    #expect(result.stderr.contains("not two consecutive versions"), "\(result.stderr)")
  }

  @Test func aJSONFileAndAMappingModelForOneHopAreRefusedAsAmbiguous() throws {
    let directory = try TemporaryDirectory()
    let (_, archive) = try Self.backup(in: directory)
    let json = SharedFixtures.packageRoot.appendingPathComponent(
      "Fixtures/Mappings/CoreDataMigration_Example.json"
    ).path
    let result = try BuiltTool.run([
      "restore", archive, "--to", directory.path("v2.sqlite").path, "--model", Self.model,
      "--model-version", "CoreDataMigration_Example 2", "--mapping", json, "--mapping",
      "\(Self.mappings)/Migration1to2.xcmappingmodel",
    ])
    #expect(result.status == 78)
    #expect(result.stderr.contains("give one of them"), "\(result.stderr)")
  }

  @Test func mappingOptionsWithoutAModelAreAUsageError() throws {
    let directory = try TemporaryDirectory()
    let result = try BuiltTool.run([
      "restore", directory.path("a.gvault").path, "--to", directory.path("b.sqlite").path,
      "--mappings", Self.mappings,
    ])
    #expect(result.status == 64)
    #expect(result.stderr.contains("--mappings"), "\(result.stderr)")
  }
}
