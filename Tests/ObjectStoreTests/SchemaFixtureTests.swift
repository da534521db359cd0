import Foundation
import ObjectModel
import ObjectStore
import PropertyList
import SQLite
import TestSupport
import Testing

/// A store graphvault creates from a model must have the schema Core Data gave the same model:
/// the fixture stores are the test, compared by `storediff.py --schema-only`.
@Suite(
  "Created stores match Core Data's schema",
  .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote),
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 for storediff.py"))
struct SchemaFixtureTests {
  @Test(arguments: FixtureStore.all)
  func aStoreCreatedFromTheModelHasCoreDatasSchema(entry: FixtureStore) throws {
    let store = entry.store
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(store, into: directory.url)
    let source = try Database(path: copy.path, mode: .readOnly)
    let tables = Set(
      try source.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").allRows().compactMap
      { $0[0].textValue })
    let model: ObjectModel
    if let setPath = entry.modelSet, let version = entry.version {
      model = try #require(
        try ModelVersionSet.load(path: SharedFixtures.file(setPath).path).version(named: version))
    } else {
      let cache = try #require(
        try source.prepare("SELECT Z_CONTENT FROM Z_MODELCACHE").scalar().blobValue)
      model = try CompiledModelLoader.load(modelCache: cache, name: "SampleModel2")
    }
    var options = StoreCreator.Options()
    options.persistentHistory = tables.contains("ACHANGE")
    options.hasModelCacheTable = tables.contains("Z_MODELCACHE")
    let created = directory.path("created.sqlite").path
    try StoreCreator.create(at: created, model: model, options: options)
    let diff = try SharedFixtures.storediff(["--schema-only", copy.path, created])
    #expect(diff.status == 0, "\(store):\n\(diff.stdout)\(diff.stderr)")
  }

  @Test func theDigestAndChecksumFormulasReproduceCoreDatasKeys() throws {
    let directory = try TemporaryDirectory()
    var checked = 0
    for store in FixtureStore.all.map(\.store) {
      let copy = try SharedFixtures.copyStore(store, into: directory.url)
      let db = try Database(path: copy.path, mode: .readOnly)
      let bytes = try #require(try db.prepare("SELECT Z_PLIST FROM Z_METADATA").scalar().blobValue)
      let metadata = try PropertyListValue(binaryPropertyList: bytes)
      var hashes: [String: [UInt8]] = [:]
      for (name, hash) in metadata["NSStoreModelVersionHashes"]?.dictionaryValue ?? [:] {
        hashes[name] = hash.dataValue
      }
      if let digest = metadata["NSStoreModelVersionHashesDigest"]?.stringValue {
        #expect(ObjectModel.versionHashesDigest(of: hashes) == digest, "\(store)")
        checked += 1
      }
      if let checksum = metadata["NSStoreModelVersionChecksumKey"]?.stringValue {
        #expect(ObjectModel.versionChecksum(of: hashes) == checksum, "\(store)")
      }
    }
    #expect(checked >= 5)
  }
}
