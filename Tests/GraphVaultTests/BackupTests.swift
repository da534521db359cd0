import Crypto
import Foundation
import GraphVault
import LibArchive
import ObjectStore
import PropertyList
import SQLite
import TestSupport
import Testing

@Suite("Backups of real stores", .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
struct BackupTests {
  static func backUp(
    _ fixture: FixtureStore, format: Int64 = 2, in directory: TemporaryDirectory
  ) throws -> (store: URL, result: BackupResult) {
    let store = try SharedFixtures.copyStore(fixture.store, into: directory.url)
    var options = BackupService.Options()
    options.formatVersion = format
    options.output = Location(path: directory.url.path)
    if fixture.store.hasPrefix("BookMigration") {
      options.modelPath = SharedFixtures.file(fixture.modelSet!).path
    }
    return (store, try BackupService.backup(storePath: store.path, options: options))
  }

  @Test(arguments: FixtureStore.all)
  func everyStoreBacksUpCompletelyWithoutBeingChanged(fixture: FixtureStore) throws {
    let directory = try TemporaryDirectory()
    let store = try SharedFixtures.copyStore(fixture.store, into: directory.url)
    let before = [
      try Data(contentsOf: store), try? Data(contentsOf: URL(fileURLWithPath: store.path + "-wal")),
    ]
    var options = BackupService.Options()
    options.output = Location(path: directory.url.path)
    if fixture.store.hasPrefix("BookMigration") {
      options.modelPath = SharedFixtures.file(fixture.modelSet!).path
    }
    let result = try BackupService.backup(storePath: store.path, options: options)
    #expect(try Data(contentsOf: store) == before[0], "\(fixture.store): the store changed")
    if let wal = before[1] {
      #expect(try Data(contentsOf: URL(fileURLWithPath: store.path + "-wal")) == wal)
    }

    let archive = try members(of: result.archive)
    #expect(archive.first?.path == "graphvault.plist")
    #expect(archive.last?.path == "index.plist")
    let index = try PropertyListValue(binaryPropertyList: archive.last!.bytes)
    let listed = try #require(index["members"]?.arrayValue)
    #expect(listed.count == archive.count - 1)
    for (member, entry) in zip(archive, listed) {
      #expect(entry["path"]?.stringValue == member.path)
      #expect(entry["size"]?.integerValue == Int64(member.bytes.count))
      let digest = SHA256.hash(data: member.bytes).map { String(format: "%02x", $0) }.joined()
      #expect(entry["sha256"]?.stringValue == digest, "\(member.path)")
    }
    // Object counts agree with the store, entity by entity.
    let db = try Database(path: store.path, mode: .readOnly)
    let pk = try db.prepare("SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY").allRows()
    for (entity, count) in result.objects {
      let number = pk.first { $0[1].textValue == entity }?[0].integerValue
      if let number, let table = tableName(entity, in: archive) {
        let stored = try db.prepare("SELECT count(*) FROM \(table) WHERE Z_ENT = \(number)")
          .scalar()
        #expect(stored == .integer(Int64(count)), "\(fixture.store): \(entity)")
      }
    }
    var recordCount = 0
    for member in archive where member.path.hasPrefix("objects/") {
      // Format 2: one class-tagged dictionary of columns per chunk.
      let chunk = try PropertyListValue(binaryPropertyList: member.bytes)
      recordCount += Int(try #require(chunk["count"]?.integerValue))
      #expect(chunk["class"]?.stringValue == member.path.split(separator: "/")[1].description)
      #expect(chunk["pk"]?.dataValue != nil && chunk["columns"]?.arrayValue != nil)
    }
    #expect(recordCount == result.objects.values.reduce(0, +))
  }

  @Test(
    .enabled(if: Subprocess.isInstalled("python3"), "needs python3 for storediff.py"),
    arguments: FixtureStore.all, [1, 2] as [Int64])
  func everyStoreRestoresEqualToItsSourceFromEitherFormat(fixture: FixtureStore, format: Int64)
    throws
  {
    let directory = try TemporaryDirectory()
    let (store, backup) = try Self.backUp(fixture, format: format, in: directory)
    let restored = directory.path("restored.sqlite").path
    let result = try RestoreService.restore(archive: Location(path: backup.archive), to: restored)
    #expect(result.objects == backup.objects.filter { $0.value > 0 })
    let diff = try SharedFixtures.storediff([store.path, restored])
    #expect(diff.status == 0, "\(fixture.store):\n\(diff.stdout)\(diff.stderr)")
  }

  /// The entity's table, from the archived model descriptor's root.
  func tableName(_ entity: String, in archive: [(path: String, bytes: [UInt8])]) -> String? {
    guard let descriptor = archive.first(where: { $0.path == "model/descriptor.plist" }),
      let value = try? PropertyListValue(binaryPropertyList: descriptor.bytes),
      let entities = value["entities"]?.arrayValue
    else { return nil }
    var parents: [String: String] = [:]
    for e in entities {
      if let name = e["name"]?.stringValue, let parent = e["parent"]?.stringValue {
        parents[name] = parent
      }
    }
    var root = entity
    while let parent = parents[root] { root = parent }
    return "Z" + root.uppercased()
  }

  @Test(
    .enabled(
      if: Subprocess.isInstalled("bsdtar") && Subprocess.isInstalled("python3"),
      "needs bsdtar and python3"))
  func bsdtarListsTheArchiveAndPlistlibReadsEveryMember() throws {
    let directory = try TemporaryDirectory()
    let fixture = FixtureStore.all.first { $0.store.contains("SampleModel2_V1") }!
    let (_, result) = try Self.backUp(fixture, in: directory)
    let listing = try Subprocess.run("bsdtar", ["-tf", result.archive])
    #expect(listing.status == 0)
    #expect(listing.stdout.contains("objects/Page/000001.plist"))
    #expect(listing.stdout.contains("tables/ACHANGE/000001.plist"))
    let extracted = directory.path("extracted")
    try FileManager.default.createDirectory(at: extracted, withIntermediateDirectories: true)
    #expect(
      try Subprocess.run("bsdtar", ["-xf", result.archive, "-C", extracted.path]).status == 0)
    let script = """
      import plistlib, pathlib, sys
      root = pathlib.Path(sys.argv[1]); objects = 0
      for p in sorted(root.rglob('*.plist')):
          value = plistlib.loads(p.read_bytes())
          if p.parts[len(root.parts)] == 'objects':
              assert value['class'] == p.parent.name and len(value['columns']) > 0, p
              objects += value['count']
      print(objects)
      """
    let check = try Subprocess.python(script, [extracted.path])
    #expect(check.status == 0, "\(check.stderr)")
    #expect(
      Int(check.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        == result.objects.values.reduce(0, +))
  }
}
