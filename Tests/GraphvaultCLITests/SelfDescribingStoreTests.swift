import Foundation
import TestSupport
import Testing

/// Every store graphvault writes keeps its model in `Z_MODELCACHE`, as Core Data's do, so no
/// later command needs `--model`.
@Suite("Stores that carry their own model")
struct SelfDescribingStoreTests {
  /// `graphvault model` output without what must differ between two stores: the path, the
  /// UUID and the model's name (taken from the file name).
  static func described(_ store: String, dropping extra: [String] = []) throws -> [String] {
    let result = try BuiltTool.run(["model", store])
    #expect(result.status == 0, "\(store): \(result.stderr)")
    return result.stdout.split(separator: "\n").map(String.init).filter { line in
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      return !(["store ", "uuid ", "model "] + extra).contains { trimmed.hasPrefix($0) }
    }
  }

  @Test func aSampleStoreBacksUpWithoutModelAndRestoresEqual() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("lib.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "400", "-q"]).status == 0)
    let archive = directory.path("lib.gvault").path
    let backup = try BuiltTool.run(["backup", store, "--output", archive])
    #expect(backup.status == 0, "\(backup.stderr)")
    let restored = directory.path("restored.sqlite").path
    let restore = try BuiltTool.run(["restore", archive, "--to", restored])
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(try Self.described(restored) == Self.described(store))
    if Subprocess.isInstalled("python3") && SharedFixtures.isAvailable {
      let diff = try SharedFixtures.storediff([store, restored])
      #expect(diff.status == 0, "\(diff.stdout)\(diff.stderr)")
    }
  }

  @Test(arguments: ["text", "relationships"])
  func aStoreOfEachWorkloadBacksUpWithoutModelAndRestoresEqual(workload: String) throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("\(workload).sqlite").path
    let made = try BuiltTool.run([
      "sample", store, "--objects", "700", "--workload", workload, "-q",
    ])
    #expect(made.status == 0, "\(made.stderr)")
    let archive = directory.path("\(workload).gvault").path
    #expect(try BuiltTool.run(["backup", store, "--output", archive, "-q"]).status == 0)
    let verify = try BuiltTool.run(["verify", archive])
    #expect(verify.stdout.contains("OK, 700 objects"), "\(verify.stdout)\(verify.stderr)")
    let restored = directory.path("restored.sqlite").path
    #expect(try BuiltTool.run(["restore", archive, "--to", restored, "-q"]).status == 0)
    if Subprocess.isInstalled("python3") && SharedFixtures.isAvailable {
      let diff = try SharedFixtures.storediff([store, restored])
      #expect(diff.status == 0, "\(diff.stdout)\(diff.stderr)")
    }
  }

  @Test func aCreatedStoreDescribesItselfAsItsModelDoes() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("Library.sqlite").path
    let model = ModelAndCreateCommandTests.sampleModel
    #expect(try BuiltTool.run(["create", store, "--model", model]).status == 0)
    let fromStore = try BuiltTool.run(["model", store])
    let fromModel = try BuiltTool.run(["model", model])
    #expect(fromStore.stdout.contains("model cache: yes"))
    // The Xcode model's current version, entity by entity, is what the store's cache says.
    let entities = { (text: String) in
      text.split(separator: "\n").drop { !$0.contains("entity ") }.prefix { !$0.hasPrefix("model") }
    }
    let storeEntities = Array(entities(fromStore.stdout))
    let lastVersion = fromModel.stdout.components(separatedBy: "\nmodel ").last ?? ""
    #expect(!storeEntities.isEmpty)
    #expect(
      storeEntities
        == Array(entities("model " + lastVersion)).prefix(storeEntities.count).map { $0 })
    // A store is a model source for create, like an Xcode model.
    let copy = directory.path("Copy.sqlite").path
    #expect(try BuiltTool.run(["create", copy, "--model", store]).status == 0)
    #expect(try Self.described(copy) == Self.described(store))
  }

  /// Each fixture store's model, from its own cache into a store graphvault creates, reads back
  /// as the original describes itself: entities, properties, hashes, identifiers.
  @Test(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func aStoreCreatedFromEachFixturesCacheDescribesItselfAsTheOriginal() throws {
    let directory = try TemporaryDirectory()
    for (index, entry) in FixtureStore.withModelCache.enumerated() {
      let source = try SharedFixtures.copyStore(entry.store, into: directory.url)
      let created = directory.path("cache-\(index).sqlite").path
      var arguments = ["create", created, "--model", source.path]
      if entry.modelSet == nil { arguments.append("--persistent-history") }
      let result = try BuiltTool.run(arguments)
      #expect(result.status == 0, "\(entry.store): \(result.stderr)")
      let (mine, theirs) = (
        try Self.described(created, dropping: ["framework version "]),
        try Self.described(source.path, dropping: ["framework version "])
      )
      #expect(mine == theirs, "\(entry.store): \(Set(mine).symmetricDifference(theirs).sorted())")
    }
  }

  /// Each fixture model version, from its `.xcdatamodeld`, into a created store: the same
  /// entities, properties and identifiers as the store Core Data made from it. Apple's version
  /// hashes cannot be computed from an Xcode model, nor the framework version known, and the
  /// fingerprint covers what Xcode and compiled models say differently.
  @Test(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func aStoreCreatedFromEachFixtureModelVersionDescribesItselfAsCoreDatasStore() throws {
    let directory = try TemporaryDirectory()
    // BookMigration's 2013 store keeps no model to compare with.
    let described = FixtureStore.withModelSet.filter { entry in
      FixtureStore.withModelCache.contains { $0.store == entry.store }
    }
    #expect(described.count == 8)
    for (index, entry) in described.enumerated() {
      let source = try SharedFixtures.copyStore(entry.store, into: directory.url)
      let created = directory.path("xcode-\(index).sqlite").path
      let result = try BuiltTool.run([
        "create", created, "--model", SharedFixtures.file(entry.modelSet!).path,
        "--model-version", entry.version!,
      ])
      #expect(result.status == 0, "\(entry.store): \(result.stderr)")
      let differing = ["hash ", "fingerprint ", "framework version ", "model cache: "]
      let (mine, theirs) = (
        try Self.described(created, dropping: differing),
        try Self.described(source.path, dropping: differing)
      )
      #expect(mine == theirs, "\(entry.store): \(Set(mine).symmetricDifference(theirs).sorted())")
    }
  }

  /// A migrating restore writes the target model's cache: the migrated store backs up without
  /// `--model` and describes itself as the store Core Data migrated in place.
  @Test(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func aMigratedStoreCarriesItsNewModel() throws {
    let directory = try TemporaryDirectory()
    let v1 = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite", into: directory.url)
    let archive = directory.path("v1.gvault").path
    #expect(try BuiltTool.run(["backup", v1.path, "--output", archive]).status == 0)
    let migrated = directory.path("v2.sqlite").path
    let restore = try BuiltTool.run([
      "restore", archive, "--to", migrated, "--model",
      SharedFixtures.file("CoreDataPlus/SampleModel/Fixtures/SampleModel.momd").path,
      "--model-version", "SampleModel2",
    ])
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(!restore.stdout.contains("left empty") && !restore.stderr.contains("left empty"))
    let backup = try BuiltTool.run([
      "backup", migrated, "--output", directory.path("v2.gvault").path,
    ])
    #expect(backup.status == 0, "\(backup.stderr)")
    let coreData = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite", into: directory.url)
    // Core Data's in-place migration kept the framework version it found, and wrote a cache
    // without class names (so its fingerprint differs); graphvault's cache is the .momd's.
    let differing = ["framework version ", "fingerprint "]
    let (mine, theirs) = (
      try Self.described(migrated, dropping: differing),
      try Self.described(coreData.path, dropping: differing)
    )
    let momd = try BuiltTool.run([
      "model", SharedFixtures.file("CoreDataPlus/SampleModel/Fixtures/SampleModel.momd").path,
    ])
    let fingerprint = try #require(
      try Self.described(migrated, dropping: []).first { $0.contains("fingerprint ") })
    #expect(momd.stdout.contains(fingerprint))
    #expect(mine == theirs, "\(Set(mine).symmetricDifference(theirs).sorted())")
  }
}
