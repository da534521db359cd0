import Foundation
import ObjectModel
import TestSupport
import Testing

@Suite(
  "Models from Xcode files, compiled models and model caches",
  .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
struct FixtureModelTests {
  static var modelSets: [URL] { SharedFixtures.files(endingWith: ".xcdatamodeld") }

  @Test func everyXcodeModelInTheFixturesLoads() throws {
    #expect(Self.modelSets.count == 5)
    var versions = 0
    for url in Self.modelSets {
      let set = try ModelVersionSet.load(path: url.path)
      versions += set.versions.count
      #expect(set.versions.contains { $0.versionName == set.currentVersionName })
    }
    #expect(versions == 15)
  }

  @Test func versionsAreInTheOrderOfTheirIdentifiersElseOfTheirNames() throws {
    let set = try ModelVersionSet.load(
      path: SharedFixtures.file("CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld")
        .path)
    #expect(
      set.versions.compactMap(\.versionName) == [
        "CoreDataMigration_Example", "CoreDataMigration_Example 2", "CoreDataMigration_Example 3",
        "CoreDataMigration_Example 4",
      ])
    #expect(set.currentVersionName == "CoreDataMigration_Example 4")
    let stack = try ModelVersionSet.load(
      path: SharedFixtures.file("CoreDataStack/Sample.xcdatamodeld").path)
    #expect(stack.current.versionName == "TestModel 2")
    let numbered = try ModelVersionSet.load(
      path: SharedFixtures.file("CoreDataPlus/SampleModel/SampleModel.xcdatamodeld").path)
    #expect(
      numbered.versions.compactMap(\.versionName) == [
        "SampleModel", "SampleModel2", "SampleModel3",
      ])
  }

  @Test func xmlDetailsAreRead() throws {
    let set = try ModelVersionSet.load(
      path: SharedFixtures.file("CoreDataPlus/SampleModel/SampleModel.xcdatamodeld").path)
    let v1 = try #require(set.version(named: "SampleModel"))
    #expect(v1.versionIdentifiers == ["1"])
    #expect(v1.hierarchy(from: "Car").map(\.name) == ["Car", "SportCar", "ExpensiveSportCar"])
    #expect(v1.entityNumbers == ["Car": 1, "SportCar": 2, "ExpensiveSportCar": 3, "Person": 4])
    #expect(v1.entity(named: "Car")?.uniquenessConstraints == [["numberPlate"]])
    let color = try #require(v1.entity(named: "Car")?.attribute(named: "color"))
    #expect(color.type == .transformable)
    #expect(
      v1.entity(named: "Person")?.attribute(named: "id")?.preservesValueInHistoryOnDeletion == true)
    #expect(v1.entity(named: "Car")?.attribute(named: "currentDrivingSpeed")?.isTransient == true)
    let v2 = try #require(set.version(named: "SampleModel2"))
    #expect(v2.entity(named: "LuxuryCar")?.renamingIdentifier == "ExpensiveSportCar")
    #expect(v2.entities.contains { !$0.fetchIndexes.isEmpty })
  }

  @Test func compiledModelsCarryApplesVersionHashes() throws {
    let set = try ModelVersionSet.load(
      path: SharedFixtures.file("CoreDataPlus/SampleModel/Fixtures/SampleModel.momd").path)
    #expect(
      set.versions.compactMap(\.versionName) == ["SampleModel", "SampleModel2", "SampleModel3"])
    // The current version is the oldest: it is the default target, not the end of the order.
    #expect(set.current.versionName == "SampleModel")
    for version in set.versions {
      #expect(
        version.entities.allSatisfy { $0.versionHash?.count == 32 }, "\(version.versionName ?? "")")
    }
  }

  /// What a compiled model or a model cache cannot say that the Xcode file does (or says
  /// differently), cleared on both sides before comparing:
  /// - Apple's version hashes exist only in compiled models and stores;
  /// - names and version names come from file names, which differ;
  /// - external binary storage is not recognised in compiled models (no fixture shows its flag);
  /// - a transformable's value class and the user info are written by Xcode only when set, and
  ///   compiled models add a default class name;
  /// - attribute defaults and derivations: Xcode keeps text, compiled models typed values and
  ///   expression trees (checked separately);
  /// - class names, only when `withoutClassNames`: the model cache of a store Core Data migrated
  ///   in place holds none (`$null`; SampleModel_V2, CoreDataMigration_Example_3).
  static func comparable(_ model: ObjectModel, withoutClassNames: Bool = false) throws
    -> [EntityDescription]
  {
    model.entities.map { entity in
      var entity = entity
      entity.versionHash = nil
      if withoutClassNames { entity.className = nil }
      entity.attributes = entity.attributes.map { attribute in
        var attribute = attribute
        attribute.allowsExternalBinaryDataStorage = false
        attribute.valueClassName = nil
        attribute.defaultValue = nil
        attribute.derivationExpression = nil
        return attribute
      }
      return entity
    }
  }

  @Test func compiledModelsEqualTheirXcodeSource() throws {
    let source = try ModelVersionSet.load(
      path: SharedFixtures.file("CoreDataPlus/SampleModel/SampleModel.xcdatamodeld").path)
    let compiled = try ModelVersionSet.load(
      path: SharedFixtures.file("CoreDataPlus/SampleModel/Fixtures/SampleModel.momd").path)
    for version in source.versions {
      let mom = try #require(compiled.version(named: version.versionName ?? ""))
      #expect(try Self.comparable(mom) == Self.comparable(version), "\(version.versionName ?? "")")
      #expect(mom.versionIdentifiers == version.versionIdentifiers)
    }
  }

  /// The stores that have both a model cache and an Xcode model version to compare it with.
  static let storeVersions = FixtureStore.withModelSet.filter { store in
    FixtureStore.withModelCache.contains { $0.store == store.store }
  }

  /// Reads `Z_MODELCACHE` with sqlite3 from a copy (the store layer comes later).
  static func modelCache(_ store: String) throws -> [UInt8] {
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(store, into: directory.url)
    let result = try Subprocess.python(
      "import sqlite3,sys; sys.stdout.buffer.write(sqlite3.connect(sys.argv[1]).execute('select Z_CONTENT from Z_MODELCACHE').fetchone()[0])",
      [copy.path])
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdoutBytes
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
  func everyModelCacheEqualsItsXcodeVersion() throws {
    for fixture in Self.storeVersions {
      let (store, setPath, versionName) = (fixture.store, fixture.modelSet!, fixture.version!)
      let cached = try CompiledModelLoader.load(modelCache: Self.modelCache(store), name: "cache")
      let set = try ModelVersionSet.load(path: SharedFixtures.file(setPath).path)
      let version = try #require(set.version(named: versionName))
      let noClassNames = cached.entities.allSatisfy { $0.className == nil }
      #expect(
        try Self.comparable(cached) == Self.comparable(version, withoutClassNames: noClassNames),
        "\(store) vs \(versionName)")
    }
    // The comparison can tell versions apart: the V1 cache is not version 2.
    let v1Cache = try CompiledModelLoader.load(
      modelCache: Self.modelCache(Self.storeVersions[0].store), name: "cache")
    let set = try ModelVersionSet.load(
      path: SharedFixtures.file(Self.storeVersions[0].modelSet!).path)
    #expect(
      try Self.comparable(v1Cache) != Self.comparable(#require(set.version(named: "SampleModel2"))))
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
  func theCodeBuiltModelInAModelCacheLoadsWithDerivedAttributesAndBoundedCounts() throws {
    let model = try CompiledModelLoader.load(
      modelCache: Self.modelCache("CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite"),
      name: "SampleModel2")
    #expect(model.versionIdentifiers == [])
    #expect(
      model.entityNumbers == [
        "Book": 1, "GraphicNovel": 2, "Feedback": 3, "Page": 4, "Writer": 5, "Author": 6,
      ])
    let pagesCount = try #require(model.entity(named: "Book")?.attribute(named: "pagesCount"))
    #expect(pagesCount.isDerived)
    #expect(pagesCount.derivationExpression == "pages.@count")
    let pages = try #require(model.entity(named: "Book")?.relationship(named: "pages"))
    #expect(pages.minCount == 1 && pages.maxCount == 10_000)
    #expect(model.entity(named: "Writer")?.isAbstract == true)
    #expect(model.entity(named: "GraphicNovel")?.attributes.map(\.name) == ["isBlackAndWhite"])
  }
}

@Suite("Model files that cannot be loaded")
struct BrokenModelFileTests {
  @Test func aMissingOrBrokenModelFileIsAClearError() throws {
    let directory = try TemporaryDirectory()
    #expect(throws: ModelError.self) {
      try ModelVersionSet.load(path: directory.path("None.xcdatamodeld").path)
    }
    let broken = directory.path("Broken.xcdatamodel")
    try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
    try Data(
      "<model><entity name=\"A\"><attribute name=\"x\" attributeType=\"Nonsense\"/></entity></model>"
        .utf8
    )
    .write(to: broken.appendingPathComponent("contents"))
    do {
      _ = try XcodeModelLoader.load(path: broken.path)
      Issue.record("loaded")
    } catch {
      #expect(error.description.contains("A.x"))
      #expect(error.description.contains("Nonsense"))
      #expect(error.path?.hasSuffix("contents") == true)
    }
  }
}
