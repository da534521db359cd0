import Foundation
import TestSupport
import Testing

@Suite("graphvault restore --model (migration)")
struct MigrateCommandTests {
  static let fixtures = SharedFixtures.packageRoot.appendingPathComponent("Fixtures")
  static let model = fixtures.appendingPathComponent("Library.xcdatamodeld").path
  static let archive = fixtures.appendingPathComponent("Archives/Library-1.gvault").path

  @Test func aDryRunPrintsHopsChangesAndCountsAndWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("library.sqlite").path
    let result = try BuiltTool.run([
      "restore", Self.archive, "--to", store, "--model", Self.model, "--dry-run",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    for line in [
      "migrate Library → Library 3, 2 hop(s)", "hop Library → Library 2",
      "  entity Novelist renamed Author", "hop Library 2 → Library 3",
      "  Shelf: 3 dropped", "  Book.tags: to-one → to-many",
    ] {
      #expect(result.stdout.contains(line + "\n"), "\(line) missing from:\n\(result.stdout)")
    }
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
  }

  @Test func aMigratedRestorePrintsTheStoreAndItsVersionInJSON() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("library.sqlite").path
    let result = try BuiltTool.run([
      "restore", Self.archive, "--to", store, "--model", Self.model, "--json",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let json = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
    #expect(json?["modelVersion"] as? String == "Library 3")
    #expect(json?["dryRun"] as? Bool == false)
    let migration = json?["migration"] as? [String: Any]
    #expect((migration?["hops"] as? [Any])?.count == 2)
    #expect(FileManager.default.fileExists(atPath: store))
  }

  @Test func noMigrationPathExitsSeventyEightNamingBothVersions() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("library.sqlite").path
    let newer = Self.fixtures.appendingPathComponent("Archives/Library-2.gvault").path
    let result = try BuiltTool.run([
      "restore", newer, "--to", store, "--model", Self.model, "--model-version", "Library",
    ])
    #expect(result.status == 78)
    #expect(result.stderr.contains("version Library 2, newer than the target version Library"))
    #expect(!FileManager.default.fileExists(atPath: store))
  }

  @Test func aBadMappingFileExitsSeventyEightAndWritesNothing() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("library.sqlite").path
    let mapping = directory.path("mapping.json")
    try Data(
      #"{"format": 1, "hops": [{"from": "Library", "to": "Library 2", "entities": {"Book": {"attributes": {"title": {"from": "nom"}}}}}]}"#
        .utf8
    ).write(to: mapping)
    let result = try BuiltTool.run([
      "restore", Self.archive, "--to", store, "--model", Self.model, "--mapping", mapping.path,
    ])
    #expect(result.status == 78)
    #expect(result.stderr.contains("takes Book.title from nom, which is not an attribute of Book"))
    #expect(!FileManager.default.fileExists(atPath: store))
  }

  @Test func aMappingFileWithoutATargetModelIsAUsageError() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("library.sqlite").path
    let result = try BuiltTool.run([
      "restore", Self.archive, "--to", store, "--mapping", directory.path("m.json").path,
    ])
    #expect(result.status == 64)
    #expect(result.stderr.contains("need --model"))
    #expect(!FileManager.default.fileExists(atPath: store))
  }
}
