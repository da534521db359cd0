import Foundation
import PropertyList
import SQLite
import TestSupport
import Testing
import Zlib

/// Real Core Data data: every `Z_METADATA` plist, every `Z_MODELCACHE` (raw DEFLATE of a keyed
/// archive), every compiled `.mom` and `VersionInfo.plist` under `../shared/fixtures/coredata`.
@Suite("Core Data fixtures", .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
struct CoreDataFixtureTests {
  static var storePaths: [String] {
    SharedFixtures.files(endingWith: ".sqlite").map {
      String($0.path.dropFirst(SharedFixtures.coreDataRoot.path.count + 1))
    }
  }

  /// Opens a copy of a fixture store (never the original) read-only.
  static func openCopy(_ relativePath: String, in directory: TemporaryDirectory) throws -> Database
  {
    let copy = try SharedFixtures.copyStore(relativePath, into: directory.url)
    return try Database(path: copy.path, mode: .readOnly)
  }

  /// The user entities of a store, from `Z_PRIMARYKEY` (system entities start at 16000).
  static func primaryKeyEntities(_ db: Database) throws -> Set<String> {
    let rows = try db.prepare("SELECT Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT < 16000").allRows()
    return Set(rows.compactMap { $0[0].textValue })
  }

  /// The store's model from its `Z_MODELCACHE`, or `nil` when it has none (stores written before
  /// about 2014).
  static func modelCache(_ db: Database) throws -> KeyedArchiveObject? {
    let hasCache =
      try db.prepare(
        "SELECT count(*) FROM sqlite_master WHERE name = 'Z_MODELCACHE'"
      ).scalar() == .integer(1)
    guard hasCache else { return nil }
    let compressed = try #require(
      try db.prepare("SELECT Z_CONTENT FROM Z_MODELCACHE").scalar().blobValue)
    return try KeyedArchive(bytes: RawDeflate.decompress(compressed, limit: 64 << 20)).rootObject()
  }

  /// Checks that `Z_PRIMARYKEY` names the model's entities. Core Data's in-place migration keeps
  /// an entity's old name in `Z_PRIMARYKEY` after a rename by renaming identifier (seen in
  /// SampleModel_V2: `ExpensiveSportCar` stays, the model says `LuxuryCar` with
  /// `elementID="ExpensiveSportCar"`), so a stale name is accepted when it is the renaming
  /// identifier of the entity that replaced it.
  static func expectPrimaryKeyNamesMatch(
    _ db: Database, model entities: [KeyedArchiveObject], _ path: String
  ) throws {
    let names = Set(try entities.map { try #require(try $0.string(forKey: "NSEntityName")) })
    let renamedFrom = Set(try entities.compactMap { try $0.string(forKey: "NSRenamingIdentifier") })
    let stored = try primaryKeyEntities(db)
    #expect(
      stored.count == names.count,
      "\(path): Z_PRIMARYKEY \(stored.sorted()) vs model \(names.sorted())")
    for name in stored.subtracting(names) {
      #expect(
        renamedFrom.contains(name), "\(path): Z_PRIMARYKEY names \(name), unknown to the model")
    }
  }

  /// The entity descriptions of a keyed-archived `NSManagedObjectModel`. A `.mom` keeps them in
  /// an `NSDictionary`; a `Z_MODELCACHE` in an `NSKnownKeysDictionary1` (a `values` array).
  static func entities(of model: KeyedArchiveObject) throws -> [KeyedArchiveObject] {
    #expect(model.className == "NSManagedObjectModel")
    let container = try model.value(forKey: "NSEntities")
    if let entries = container.dictionaryEntries {
      return entries.compactMap { $0.value.objectValue }
    }
    let known = try #require(container.objectValue, "NSEntities is \(container.kindName)")
    return try #require(try known.value(forKey: "values").arrayValue).compactMap(\.objectValue)
  }

  /// Each entity's name, superentity name and stored (non-transient) property names.
  static func describe(_ entity: KeyedArchiveObject) throws -> (
    name: String, parent: String?, stored: [String]
  ) {
    let name = try #require(try entity.string(forKey: "NSEntityName"))
    let parent = try entity.object(forKey: "NSSuperentity")?.string(forKey: "NSEntityName")
    var stored: [String] = []
    for (key, value) in try #require(try entity.value(forKey: "NSProperties").dictionaryEntries) {
      let property = try #require(value.objectValue)
      let transient = try property.value(forKey: "NSIsTransient").boolValue ?? false
      #expect(try property.string(forKey: "NSPropertyName") == key.stringValue)
      if !transient && property.className != "NSFetchedPropertyDescription" {
        stored.append(try #require(key.stringValue))
      }
    }
    return (name, parent, stored)
  }

  @Test func everyStoresMetadataPlistDecodes() throws {
    let directory = try TemporaryDirectory()
    #expect(Self.storePaths.count >= 9)
    for path in Self.storePaths {
      let db = try Self.openCopy(path, in: directory)
      let row = try db.prepare("SELECT Z_UUID, Z_PLIST FROM Z_METADATA").allRows()
      let bytes = try #require(row.first?[1].blobValue, "\(path) has no Z_PLIST")
      let metadata = try PropertyListValue(binaryPropertyList: bytes)
      #expect(metadata["NSStoreType"] == "SQLite", "\(path)")
      #expect(metadata["NSPersistenceFrameworkVersion"]?.integerValue ?? 0 >= 241, "\(path)")
      let hashes = try #require(metadata["NSStoreModelVersionHashes"]?.dictionaryValue, "\(path)")
      if let model = try Self.modelCache(db) {
        let entities = try Self.entities(of: model)
        #expect(
          Set(hashes.keys) == Set(try entities.map { try $0.string(forKey: "NSEntityName") }),
          "\(path)")
        try Self.expectPrimaryKeyNamesMatch(db, model: entities, path)
      } else {
        #expect(Set(hashes.keys) == (try Self.primaryKeyEntities(db)), "\(path)")
      }
      for (entity, hash) in hashes {
        #expect(hash.dataValue?.count == 32, "\(path): \(entity)'s hash")
      }
    }
  }

  @Test func everyModelCacheInflatesToAKeyedModelMatchingItsStore() throws {
    let directory = try TemporaryDirectory()
    var checked = 0
    for path in Self.storePaths {
      let db = try Self.openCopy(path, in: directory)
      guard let model = try Self.modelCache(db) else { continue }
      let entities = try Self.entities(of: model)
      let described = try entities.map(Self.describe)
      try Self.expectPrimaryKeyNamesMatch(db, model: entities, path)

      // Every column of every entity table is a stored property of that hierarchy.
      let parents = Dictionary(uniqueKeysWithValues: described.map { ($0.name, $0.parent) })
      func root(_ name: String) -> String { parents[name].flatMap { $0 }.map(root) ?? name }
      for rootName in Set(described.map { root($0.name) }) {
        let columns = try db.prepare(
          "SELECT name FROM pragma_table_info('Z\(rootName.uppercased())')"
        )
        .allRows().compactMap { $0[0].textValue }
        #expect(!columns.isEmpty, "\(path): no table for \(rootName)")
        let known = Set(
          described.filter { root($0.name) == rootName }.flatMap(\.stored).map {
            "Z" + $0.uppercased()
          })
        for column in columns where !["Z_PK", "Z_ENT", "Z_OPT"].contains(column) {
          let isDestinationEntityColumn =
            column.range(of: #"^Z\d+_"#, options: .regularExpression) != nil
          let base = column.replacingOccurrences(
            of: #"\d+$"#, with: "", options: .regularExpression)
          #expect(
            isDestinationEntityColumn || column.hasPrefix("Z_FOK_") || known.contains(column)
              || known.contains(base), "\(path): column \(column) of Z\(rootName.uppercased())")
        }
      }
      checked += 1
    }
    #expect(checked >= 7, "stores with a Z_MODELCACHE checked: \(checked)")
  }

  @Test func everyCompiledModelMatchesItsVersionInfo() throws {
    let versionInfos = SharedFixtures.files(endingWith: "VersionInfo.plist")
    #expect(versionInfos.count >= 2)
    var models = 0
    for infoURL in versionInfos {
      let info = try PropertyListValue(propertyList: [UInt8](Data(contentsOf: infoURL)))
      let versions = try #require(info["NSManagedObjectModel_VersionHashes"]?.dictionaryValue)
      #expect(
        info["NSManagedObjectModel_CurrentVersionName"]?.stringValue.map { versions[$0] != nil }
          == true)
      for (version, hashes) in versions {
        let momURL = infoURL.deletingLastPathComponent().appendingPathComponent("\(version).mom")
        let archive = try KeyedArchive(bytes: [UInt8](Data(contentsOf: momURL)))
        let names = Set(
          try Self.entities(of: archive.rootObject()).map { try Self.describe($0).name })
        #expect(
          names == Set(try #require(hashes.dictionaryValue).keys), "\(momURL.lastPathComponent)")
        models += 1
      }
    }
    #expect(models >= 6)
  }

  @Test func aStoresHashesEqualItsCompiledModelVersionHashes() throws {
    let directory = try TemporaryDirectory()
    let db = try Self.openCopy(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite", in: directory)
    let metadata = try PropertyListValue(
      binaryPropertyList: #require(
        try db.prepare("SELECT Z_PLIST FROM Z_METADATA").scalar().blobValue))
    let info = try PropertyListValue(
      propertyList: [UInt8](
        Data(
          contentsOf: SharedFixtures.file(
            "CoreDataPlus/SampleModel/Fixtures/SampleModel.momd/VersionInfo.plist"))))
    #expect(
      metadata["NSStoreModelVersionHashes"]
        == info["NSManagedObjectModel_VersionHashes"]?["SampleModel"])
  }
}
