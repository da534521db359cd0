import Foundation
import TestSupport
import Testing

@Suite("graphvault model and create")
struct ModelAndCreateCommandTests {
  static let sampleModel = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Library.xcdatamodeld"
  ).path

  @Test func modelPrintsEntitiesAttributesAndRelationships() throws {
    let result = try BuiltTool.run(["model", Self.sampleModel])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("entity GraphicNovel : Book Z_ENT 2 in ZBOOK"))
    #expect(result.stdout.contains("entity Writer (abstract) Z_ENT 5 in ZWRITER"))
    #expect(result.stdout.contains("pages → Page to-many, ordered, inverse book, Cascade"))
    #expect(result.stdout.contains("uniqueID: UUID [optional]"))
    // A transformable attribute names the transformer a context needs to read its value.
    #expect(
      result.stdout.contains(
        "color: Transformable [optional, transformer NSSecureUnarchiveFromDataTransformer]"
      ), "\(result.stdout)")
    let json = try BuiltTool.run(["model", Self.sampleModel, "--json"])
    #expect(json.stdout.contains("\"valueTransformer\" : \"NSSecureUnarchiveFromDataTransformer\""))
    #expect(json.stdout.contains("\"valueClass\" : \"NSColor\""))
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
  func modelJsonIsOneDocumentOnStandardOutput() throws {
    let result = try BuiltTool.run(["model", Self.sampleModel, "--json"])
    #expect(result.status == 0)
    let check = try Subprocess.python(
      "import json,sys; d=json.load(sys.stdin); print(d['name'], [e['name'] for e in d['versions'][-1]['entities']])",
      input: result.stdoutBytes)
    #expect(
      check.stdout.contains("Library ['Book', 'GraphicNovel', 'Page', 'Tag', 'Writer', 'Author']"),
      "\(check.stderr)")
  }

  @Test func createMakesAnEmptyStoreWhoseModelReadsBack() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("Library.sqlite").path
    let created = try BuiltTool.run(["create", store, "--model", Self.sampleModel])
    #expect(created.status == 0, "\(created.stderr)")
    #expect(created.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == store)
    let described = try BuiltTool.run(["model", store])
    #expect(described.status == 0, "\(described.stderr)")
    #expect(described.stdout.contains("model cache: yes"))
    #expect(described.stdout.contains("version identifiers [3]"))
    // Only the finished store is left: no temporary file beside it.
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
      $0.hasPrefix(".")
    }
    #expect(leftovers.isEmpty)
  }

  @Test func createRefusesAnExistingStoreUnlessForced() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("Library.sqlite").path
    try Data("precious".utf8).write(to: URL(fileURLWithPath: store))
    let refused = try BuiltTool.run(["create", store, "--model", Self.sampleModel])
    #expect(refused.status == 73)
    #expect(refused.stderr.contains("exists"))
    #expect(try String(contentsOfFile: store, encoding: .utf8) == "precious")
    #expect(
      try BuiltTool.run(["create", store, "--model", Self.sampleModel, "--force"]).status == 0)
  }

  @Test func badInputGetsAClearMessageAndTheDocumentedStatus() throws {
    let directory = try TemporaryDirectory()
    let text = directory.path("notes.sqlite")
    try Data(String(repeating: "not a database\n", count: 100).utf8).write(to: text)
    let plain = directory.path("plain.sqlite").path
    _ = try Subprocess.run(
      "python3",
      [
        "-c", "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('create table t (x)')",
        plain,
      ])
    let cases: [([String], Int32, String)] = [
      (["model", directory.path("missing.sqlite").path], 66, "no store"),
      (["model", text.path], 65, "not an SQLite database"),
      (["model", plain], 65, "not a Core Data store"),
      (["model", directory.path("Nothing.xcdatamodeld").path], 66, "no model"),
      (
        [
          "create", directory.path("a.sqlite").path, "--model", Self.sampleModel, "--model-version",
          "Library9",
        ], 78, "no version Library9"
      ),
      (["create", directory.path("b.sqlite").path], 64, "--model"),
    ]
    for (arguments, status, message) in cases {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == status, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
      #expect(result.stdout.isEmpty)
    }
  }

  @Test(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func modelReadsAStoresMetadataAndModelCache() throws {
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: directory.url)
    let result = try BuiltTool.run(["model", copy.path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("uuid C9CB0B35-ED6A-4042-BE5C-1B911AC00B2A"))
    #expect(result.stdout.contains("pagesCount: Integer 64 [optional, derived]"))
    #expect(result.stdout.contains("hash 01e4ee17"))
  }

  @Test(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func aStoreWithoutAModelCacheSaysToPassTheModel() throws {
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(
      "BookMigration/Stores/Model1.sqlite", into: directory.url)
    let result = try BuiltTool.run([
      "create", directory.path("x.sqlite").path, "--model", copy.path,
    ])
    #expect(result.status == 78)
    #expect(result.stderr.contains("no Z_MODELCACHE"))
  }

  /// Every fixture store's model version, created by the built binary, has Core Data's schema.
  /// BookMigration's store is from 2013, before Core Data kept Z_MODELCACHE: that table alone is
  /// left out of its comparison.
  @Test(
    .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote),
    .enabled(if: Subprocess.isInstalled("python3"), "needs python3 for storediff.py"))
  func createReproducesEveryFixtureStoresSchema() throws {
    let directory = try TemporaryDirectory()
    for (index, entry) in FixtureStore.all.enumerated() {
      let source = try SharedFixtures.copyStore(entry.store, into: directory.url)
      // The stores whose model lives only in their model cache also track persistent history.
      let modelPath = entry.modelSet.map { SharedFixtures.file($0).path } ?? source.path
      let created = directory.path("created-\(index).sqlite").path
      var arguments = ["create", created, "--model", modelPath]
      if let version = entry.version { arguments += ["--model-version", version] }
      if entry.modelSet == nil { arguments.append("--persistent-history") }
      let result = try BuiltTool.run(arguments)
      #expect(result.status == 0, "\(entry.store): \(result.stderr)")
      var diffArguments = [
        SharedFixtures.sharedRoot.appendingPathComponent("tools/storediff.py").path,
        "--schema-only",
      ]
      if entry.store.hasPrefix("BookMigration") {
        diffArguments += ["--ignore-table", "Z_MODELCACHE"]
      }
      let diff = try Subprocess.run("python3", diffArguments + [source.path, created])
      #expect(diff.status == 0, "\(entry.store):\n\(diff.stdout)\(diff.stderr)")
    }
  }
}
