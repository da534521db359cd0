import Foundation
import ObjectModel
import TestSupport
import Testing

/// Core Data's entity version hashes computed from models, against the values Apple's tools
/// wrote: the metadata of every fixture store (read here by Python's `sqlite3` and `plistlib`
/// from a copy of the store) and every `.momd`'s `VersionInfo.plist`.
@Suite(
  "Core Data's version hashes, computed",
  .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote),
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
struct VersionHashTests {
  /// A store's metadata hashes (hex by entity), digest and checksum, read by Python.
  static func metadata(of store: String) throws -> (
    hashes: [String: String], digest: String?, checksum: String?, framework: Int
  ) {
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(store, into: directory.url)
    let script = """
      import sqlite3, plistlib, sys, json
      c = sqlite3.connect(sys.argv[1])
      m = plistlib.loads(c.execute('SELECT Z_PLIST FROM Z_METADATA').fetchone()[0])
      print(json.dumps({
          'hashes': {k: v.hex() for k, v in m.get('NSStoreModelVersionHashes', {}).items()},
          'digest': m.get('NSStoreModelVersionHashesDigest'),
          'checksum': m.get('NSStoreModelVersionChecksumKey'),
          'framework': m.get('NSPersistenceFrameworkVersion')}))
      """
    let result = try Subprocess.python(script, [copy.path])
    #expect(result.status == 0, "\(result.stderr)")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    return (
      object["hashes"] as? [String: String] ?? [:], object["digest"] as? String,
      object["checksum"] as? String, object["framework"] as? Int ?? 0
    )
  }

  static func hex(_ hashes: [String: [UInt8]]) -> [String: String] {
    hashes.mapValues { $0.map { String(format: "%02x", $0) }.joined() }
  }

  @Test(arguments: FixtureStore.withModelSet)
  func hashesComputedFromTheXcodeModelEqualTheStores(fixture: FixtureStore) throws {
    let (setPath, version) = (try #require(fixture.modelSet), try #require(fixture.version))
    let set = try ModelVersionSet.load(path: SharedFixtures.file(setPath).path)
    let model = try #require(set.version(named: version))
    let stored = try Self.metadata(of: fixture.store)
    #expect(!stored.hashes.isEmpty)
    #expect(Self.hex(model.computedVersionHashes) == stored.hashes)
    if let digest = stored.digest {
      #expect(ObjectModel.versionHashesDigest(of: model.computedVersionHashes) == digest)
    }
    if let checksum = stored.checksum {
      #expect(ObjectModel.versionChecksum(of: model.computedVersionHashes) == checksum)
    }
  }

  @Test(arguments: FixtureStore.withModelCache)
  func hashesComputedFromAStoresModelCacheEqualItsMetadata(fixture: FixtureStore) throws {
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(fixture.store, into: directory.url)
    let cache = try Subprocess.python(
      """
      import sqlite3, sys
      c = sqlite3.connect(sys.argv[1])
      sys.stdout.buffer.write(c.execute('SELECT Z_CONTENT FROM Z_MODELCACHE').fetchone()[0])
      """, [copy.path])
    let model = try CompiledModelLoader.load(modelCache: cache.stdoutBytes, name: "Cached")
    let stored = try Self.metadata(of: fixture.store)
    let computed = Self.hex(model.computedVersionHashes)
    #expect(Set(computed.keys) == Set(stored.hashes.keys))
    // Every hash equal but those said not to be reproduced, which indeed differ.
    let unreproduced = model.unreproducedVersionHashes
    for (entity, hash) in stored.hashes {
      #expect((computed[entity] == hash) == (unreproduced[entity] == nil), "\(entity)")
    }
  }

  @Test func onlyTheEntitiesWithADerivedAttributeAreNotReproduced() throws {
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: directory.url)
    let cache = try Subprocess.python(
      """
      import sqlite3, sys
      c = sqlite3.connect(sys.argv[1])
      sys.stdout.buffer.write(c.execute('SELECT Z_CONTENT FROM Z_MODELCACHE').fetchone()[0])
      """, [copy.path])
    let model = try CompiledModelLoader.load(modelCache: cache.stdoutBytes, name: "SampleModel2")
    #expect(Set(model.unreproducedVersionHashes.keys) == ["Book", "GraphicNovel"])
    // Author's unbounded to-many was built in code: its maximum is kept as Core Data wrote it.
    #expect(model.entity(named: "Author")?.relationship(named: "books")?.maxCount == -1)
    #expect(model.entity(named: "Author")?.relationship(named: "books")?.isToMany == true)
  }

  @Test func hashesComputedFromEveryCompiledModelEqualItsVersionInfo() throws {
    var checked = 0
    for info in SharedFixtures.files(endingWith: "VersionInfo.plist") {
      let folder = info.deletingLastPathComponent()
      let result = try Subprocess.python(
        """
        import plistlib, sys, json
        v = plistlib.load(open(sys.argv[1], 'rb'))
        print(json.dumps({name: {k: h.hex() for k, h in hashes.items()}
            for name, hashes in v['NSManagedObjectModel_VersionHashes'].items()}))
        """, [info.path])
      let versions = try #require(
        try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
          as? [String: [String: String]])
      for (version, hashes) in versions {
        let model = try CompiledModelLoader.load(
          path: folder.appendingPathComponent("\(version).mom").path)
        #expect(
          Self.hex(model.computedVersionHashes) == hashes, "\(folder.lastPathComponent) \(version)")
        checked += 1
      }
    }
    #expect(checked == 6)
  }
}
