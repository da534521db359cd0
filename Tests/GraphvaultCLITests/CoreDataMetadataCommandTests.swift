import Foundation
import TestSupport
import Testing

/// The metadata Core Data checks when it opens a store (`NSStoreModelVersionHashes`, their
/// digest and checksum), in the stores the built binary writes: compared with what Core Data
/// wrote into the fixture stores, read by Python's `sqlite3` and `plistlib`, digests worked out
/// with Python's `hashlib`.
@Suite(
  "Core Data's metadata in the stores graphvault writes",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
struct CoreDataMetadataCommandTests {
  struct Metadata: Equatable {
    var hashes: [String: String]
    var digest: String?
    var checksum: String?
    var identifiers: [String]
    /// The digest and checksum Python computes from the hashes.
    var expectedDigest: String
    var expectedChecksum: String
  }

  /// The metadata of the store at `path` (opened read-only through a copy's URI is not needed:
  /// these are the tests' own stores or copies).
  static func metadata(_ path: String) throws -> Metadata {
    let script = """
      import sqlite3, plistlib, sys, json, hashlib, base64
      c = sqlite3.connect(sys.argv[1])
      m = plistlib.loads(c.execute('SELECT Z_PLIST FROM Z_METADATA').fetchone()[0])
      h = m.get('NSStoreModelVersionHashes', {})
      names = sorted(h, key=lambda n: n.encode())
      print(json.dumps({
          'hashes': {k: v.hex() for k, v in h.items()},
          'digest': m.get('NSStoreModelVersionHashesDigest'),
          'checksum': m.get('NSStoreModelVersionChecksumKey'),
          'identifiers': m.get('NSStoreModelVersionIdentifiers', []),
          'expectedDigest': base64.b64encode(hashlib.sha512(
              b''.join(n.encode() + h[n] for n in names)).digest()).decode(),
          'expectedChecksum': base64.b64encode(hashlib.sha256(
              b''.join(h[n] for n in names)).digest()).decode()}))
      """
    let result = try Subprocess.python(script, [path])
    #expect(result.status == 0, "\(result.stderr)")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    return Metadata(
      hashes: object["hashes"] as? [String: String] ?? [:], digest: object["digest"] as? String,
      checksum: object["checksum"] as? String,
      identifiers: object["identifiers"] as? [String] ?? [],
      expectedDigest: object["expectedDigest"] as? String ?? "",
      expectedChecksum: object["expectedChecksum"] as? String ?? "")
  }

  /// Expects `path`'s metadata to hold `hashes` with their digest and checksum.
  static func expectComplete(_ path: String, hashes: [String: String]? = nil) throws {
    let written = try metadata(path)
    #expect(!written.hashes.isEmpty, "\(path)")
    if let hashes { #expect(written.hashes == hashes, "\(path)") }
    #expect(written.digest == written.expectedDigest, "\(path)")
    #expect(written.checksum == written.expectedChecksum, "\(path)")
  }

  @Test(
    .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote),
    arguments: FixtureStore.all)
  func aStoreCreatedFromAFixturesModelVersionCarriesTheHashesCoreDataWrote(
    fixture: FixtureStore
  ) throws {
    let directory = try TemporaryDirectory()
    let source = try SharedFixtures.copyStore(fixture.store, into: directory.url)
    let modelPath = fixture.modelSet.map { SharedFixtures.file($0).path } ?? source.path
    let created = directory.path("created.sqlite").path
    var arguments = ["create", created, "--model", modelPath, "-q"]
    if let version = fixture.version { arguments += ["--model-version", version] }
    let result = try BuiltTool.run(arguments)
    #expect(result.status == 0, "\(result.stderr)")
    let original = try Self.metadata(source.path)
    try Self.expectComplete(created, hashes: original.hashes)
    #expect(try Self.metadata(created).identifiers == original.identifiers)
    if let digest = original.digest { #expect(try Self.metadata(created).digest == digest) }
  }

  @Test(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func aMigratingRestoreWritesTheHashesCoreDataWroteWhenItMigratedTheStore() throws {
    // SampleModel_V2.sqlite is SampleModel_V1.sqlite migrated by Core Data itself.
    let directory = try TemporaryDirectory()
    let v1 = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite", into: directory.url)
    let v2 = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite", into: directory.url)
    let set = SharedFixtures.file("CoreDataPlus/SampleModel/SampleModel.xcdatamodeld").path
    let archive = directory.path("v1.gvault").path
    #expect(try BuiltTool.run(["backup", v1.path, "--output", archive, "-q"]).status == 0)
    let restored = directory.path("restored.sqlite").path
    let result = try BuiltTool.run([
      "restore", archive, "--to", restored, "--model", set, "--model-version", "SampleModel2",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.stderr.contains("not Core Data's"), "\(result.stderr)")
    let expected = try Self.metadata(v2.path)
    let written = try Self.metadata(restored)
    #expect(written.hashes == expected.hashes)
    #expect(written.digest == expected.digest)
    #expect(written.identifiers == expected.identifiers)
  }

  @Test func everyStoreGraphvaultMakesCarriesItsModelsHashes() throws {
    let directory = try TemporaryDirectory()
    let model = SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Library.xcdatamodeld")
      .path
    let sample = directory.path("sample.sqlite").path
    #expect(try BuiltTool.run(["sample", sample, "--objects", "300", "-q"]).status == 0)
    try Self.expectComplete(sample)
    let created = directory.path("created.sqlite").path
    #expect(try BuiltTool.run(["create", created, "--model", model, "-q"]).status == 0)
    let expected = try Self.metadata(created).hashes
    try Self.expectComplete(created)
    // The model's hashes as `model --json` shows them.
    let shown = try #require(
      try JSONSerialization.jsonObject(
        with: Data(try BuiltTool.run(["model", model, "--json"]).stdoutBytes)) as? [String: Any])
    let current = (shown["versions"] as? [[String: Any]])?.first { $0["current"] as? Bool == true }
    let entities = current?["entities"] as? [[String: Any]]
    var hashes: [String: String] = [:]
    for entity in entities ?? [] {
      hashes[entity["name"] as? String ?? "?"] = entity["versionHash"] as? String
    }
    #expect(hashes == expected)
    let exported = directory.path("sample.json").path
    #expect(try BuiltTool.run(["export", sample, "--output", exported, "-q"]).status == 0)
    let imported = directory.path("imported.sqlite").path
    let importing = try BuiltTool.run(["import", exported, "--to", imported, "-q"])
    #expect(importing.status == 0, "\(importing.stderr)")
    try Self.expectComplete(imported, hashes: try Self.metadata(sample).hashes)
    let fixture = directory.path("fixture.gvault").path
    let cutting = try BuiltTool.run([
      "fixture", sample, "--entity", "Book", "--where", "title BEGINSWITH 'Book 1'", "--output",
      fixture, "-q",
    ])
    #expect(cutting.status == 0, "\(cutting.stderr)")
    let loaded = directory.path("fixture.sqlite").path
    #expect(try BuiltTool.run(["restore", fixture, "--to", loaded, "-q"]).status == 0)
    try Self.expectComplete(loaded, hashes: try Self.metadata(sample).hashes)
    let archive = directory.path("sample.gvault").path
    #expect(try BuiltTool.run(["backup", sample, "--output", archive, "-q"]).status == 0)
    let restored = directory.path("restored.sqlite").path
    #expect(try BuiltTool.run(["restore", archive, "--to", restored, "-q"]).status == 0)
    try Self.expectComplete(restored, hashes: try Self.metadata(sample).hashes)
  }

  @Test func aStoreIsFoundToBeOfTheVersionWhoseHashesItCarriesWhenSchemasAreAlike() throws {
    // Two versions whose stores have the same tables (optionality is not in the schema) but
    // whose hashes differ, as Core Data tells them apart.
    let directory = try TemporaryDirectory()
    let set = directory.path("Notes.xcdatamodeld")
    func version(_ name: String, optional: Bool) throws {
      try XcodeModelFile.write(
        """
            <entity name="Note" representedClassName="Note" syncable="YES">
                <attribute name="title" \(optional ? "optional=\"YES\" " : "")attributeType="String"/>
            </entity>
        """, at: set.appendingPathComponent("\(name).xcdatamodel"))
    }
    try version("Notes", optional: true)
    try version("Notes 2", optional: false)
    try Data(
      """
      <?xml version="1.0" encoding="UTF-8"?>
      <plist version="1.0"><dict><key>_XCCurrentVersionName</key>\
      <string>Notes 2.xcdatamodel</string></dict></plist>
      """.utf8
    ).write(to: set.appendingPathComponent(".xccurrentversion"))
    for name in ["Notes", "Notes 2"] {
      let store = directory.path("\(name).sqlite").path
      let created = try BuiltTool.run([
        "create", store, "--model", set.path, "--model-version", name, "-q",
      ])
      #expect(created.status == 0, "\(created.stderr)")
      let archive = directory.path("\(name).gvault").path
      let backup = try BuiltTool.run([
        "backup", store, "--model", set.path, "--output", archive, "-q",
      ])
      #expect(backup.status == 0, "\(backup.stderr)")
      let listed = try BuiltTool.run(["list", archive])
      #expect(listed.stdout.contains("version \(name)\n"), "\(listed.stdout)")
    }
  }
}
