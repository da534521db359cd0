import Foundation
import TestSupport
import Testing

/// `graphvault migrate STORE`: a store of the project's Library model at its first version,
/// migrated in place along the model's versions, checked against a migrating restore of the
/// same objects (with `graphvault diff`, and SQLite's own integrity check), killed at random
/// moments, and run against a store another process holds.
@Suite(
  "graphvault migrate (in place)",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct MigrateInPlaceCommandTests {
  static let fixtures = SharedFixtures.packageRoot.appendingPathComponent("Fixtures")
  static let model = fixtures.appendingPathComponent("Library.xcdatamodeld").path
  static let archive = fixtures.appendingPathComponent("Archives/Library-1.gvault").path

  let workspace: TemporaryDirectory
  /// The archive restored at its own version (Library), the unmigrated store.
  let original: String
  /// The archive restored through the migration to the current version (Library 3).
  let migrated: String

  init() throws {
    workspace = try TemporaryDirectory()
    original = workspace.path("original.sqlite").path
    migrated = workspace.path("migrated.sqlite").path
    let plain = try BuiltTool.run(["restore", Self.archive, "--to", original, "-q"])
    #expect(plain.status == 0, "\(plain.stderr)")
    let through = try BuiltTool.run([
      "restore", Self.archive, "--to", migrated, "--model", Self.model, "-q",
    ])
    #expect(through.status == 0, "\(through.stderr)")
  }

  /// A copy of the unmigrated store (main file only: the restore folded its log in).
  func copy(_ name: String, journalMode: String? = nil) throws -> String {
    let path = workspace.path(name).path
    try FileManager.default.copyItem(atPath: original, toPath: path)
    if let journalMode { _ = try sqlRows(path, "PRAGMA journal_mode = \(journalMode)") }
    return path
  }

  /// Whether the store at `path` holds what `reference` holds (`graphvault diff` exits 0; the
  /// archive's store kept no model cache, so the model set is given).
  func holdsTheSame(_ path: String, as reference: String) throws -> Bool {
    let diff = try BuiltTool.run(["diff", reference, path, "-q", "--model", Self.model])
    return diff.status == 0
  }

  /// Whether the store at `path` is at the first version (it still has the Shelf table that
  /// the third version drops).
  func isUnmigrated(_ path: String) throws -> Bool {
    try sqlRows(path, "SELECT count(*) FROM sqlite_master WHERE name = 'ZSHELF'") == ["1"]
  }

  @Test(arguments: ["wal", "delete"])
  func aStoreMigratedInPlaceHoldsWhatAMigratingRestoreWrites(journalMode: String) throws {
    let store = try copy("store.sqlite", journalMode: journalMode)
    let result = try BuiltTool.run(["migrate", store, "--model", Self.model])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.contains("migrated \(store): Library → Library 3, 2 hop(s)"), "\(result.stdout)"
    )
    #expect(try !isUnmigrated(store))
    #expect(try holdsTheSame(store, as: migrated))
    #expect(try sqlRows(store, "PRAGMA integrity_check") == ["ok"])
    #expect(try sqlRows(store, "PRAGMA journal_mode") == [journalMode])
    let metadata = "SELECT hex(Z_PLIST) FROM Z_METADATA"
    #expect(try sqlRows(store, metadata) != sqlRows(original, metadata))
    // Again: at the target version already, nothing to do.
    let again = try BuiltTool.run(["migrate", store, "--model", Self.model])
    #expect(again.status == 0, "\(again.stderr)")
    #expect(again.stdout.contains("at Library 3 already"), "\(again.stdout)")
  }

  @Test func keepOriginalKeepsTheUnmigratedStoreBesideIt() throws {
    let store = try copy("store.sqlite")
    let result = try BuiltTool.run([
      "migrate", store, "--model", Self.model, "--model-version", "Library 2", "--keep-original",
      "--json",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let kept = store + ".orig"
    #expect(result.stdout.contains("\"original\""), "\(result.stdout)")
    #expect(try isUnmigrated(kept))
    #expect(try holdsTheSame(kept, as: original))
    #expect(result.stdout.contains("\"to\" : \"Library 2\""), "\(result.stdout)")
    // A file of the user's under that name is not overwritten.
    let other = try copy("other.sqlite")
    try Data("mine".utf8).write(to: URL(fileURLWithPath: other + ".orig"))
    let refused = try BuiltTool.run(["migrate", other, "--model", Self.model, "--keep-original"])
    #expect(refused.status == 73, "\(refused.stderr)")
    #expect(try String(contentsOfFile: other + ".orig", encoding: .utf8) == "mine")
    #expect(try isUnmigrated(other))
  }

  @Test func aDryRunPrintsThePlanAndWritesNothing() throws {
    let store = try copy("store.sqlite")
    let before = try Data(contentsOf: URL(fileURLWithPath: store))
    // Any reader of a WAL store (an app, sqlite3) makes its empty -wal and -shm: not counted.
    func listing() throws -> [String] {
      try FileManager.default.contentsOfDirectory(atPath: workspace.url.path).filter {
        !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
      }.sorted()
    }
    let files = try listing()
    let result = try BuiltTool.run(["migrate", store, "--model", Self.model, "--dry-run"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("dry run: nothing was written"), "\(result.stdout)")
    #expect(result.stdout.contains("hop Library 2 → Library 3"), "\(result.stdout)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    #expect(try listing() == files)
  }

  @Test func aStoreAnotherProcessIsWritingToGivesSeventyFiveAndStaysAsItWas() throws {
    let store = try copy("store.sqlite")
    let holder = try #require(
      try RunningProcess.holdingWriteLock(on: store, ready: workspace.path("locked").path))
    defer {
      holder.send(SIGKILL)
      _ = holder.wait()
    }
    let result = try BuiltTool.run(["migrate", store, "--model", Self.model, "--wait", "1"])
    #expect(result.status == 75, "\(result.stdout)\(result.stderr)")
    #expect(result.stderr.contains("in use"), "\(result.stderr)")
    holder.send(SIGKILL)
    _ = holder.wait()
    #expect(try isUnmigrated(store))
    #expect(try holdsTheSame(store, as: original))
  }

  @Test func aMigrationKilledAtAnyMomentLeavesTheOldStoreOrTheNewOneWhole() throws {
    var outcomes: [Bool: Int] = [:]
    var generator = SystemRandomNumberGenerator()
    for round in 0..<12 {
      let store = try copy("killed-\(round).sqlite", journalMode: round % 2 == 0 ? "wal" : "delete")
      let running = try BuiltTool.start(["migrate", store, "--model", Self.model, "-q"])
      usleep(UInt32.random(in: 0..<250_000, using: &generator))
      running.send(SIGKILL)
      _ = running.wait()
      let old = try isUnmigrated(store)
      outcomes[old, default: 0] += 1
      #expect(try holdsTheSame(store, as: old ? original : migrated), "round \(round)")
      #expect(try sqlRows(store, "PRAGMA integrity_check") == ["ok"])
      // The next run finishes the job and leaves nothing of the killed one behind.
      let next = try BuiltTool.run(["migrate", store, "--model", Self.model, "-q"])
      #expect(next.status == 0, "\(next.stderr)")
      #expect(try holdsTheSame(store, as: migrated))
      let name = URL(fileURLWithPath: store).lastPathComponent
      let left = try FileManager.default.contentsOfDirectory(atPath: workspace.url.path).filter {
        $0.contains(name) && $0 != name && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
      }
      #expect(left.isEmpty, "round \(round): \(left)")
    }
    print(
      "killed migrations: \(outcomes[true, default: 0]) left the old store, \(outcomes[false, default: 0]) the new one"
    )
  }

  @Test func mistakesHaveTheirDocumentedStatuses() throws {
    let store = try copy("store.sqlite")
    let cases: [([String], Int32, String)] = [
      (["migrate", workspace.path("missing.sqlite").path, "--model", Self.model], 66, "no store"),
      (
        ["migrate", store, "--model", Self.model, "--model-version", "Nope"], 78, "no version Nope"
      ),
      (["migrate", migrated, "--model", Self.model, "--model-version", "Library"], 78, "newer"),
      (["migrate", store, "--model", Self.model, "--wait", "-1"], 64, "--wait"),
    ]
    for (arguments, status, message) in cases {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == status, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
    #expect(try isUnmigrated(store))
  }

  /// A store Core Data wrote (in WAL mode), migrated in place: what a
  /// migrating restore of its backup holds, and the version hashes Core Data wrote when it
  /// migrated the same store itself.
  @Test(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func aCoreDataStoreMigratedInPlaceCarriesWhatCoreDataWroteWhenItMigratedIt() throws {
    let store = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite", into: workspace.url
    ).path
    let coreData = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite", into: workspace.url
    ).path
    let set = SharedFixtures.file("CoreDataPlus/SampleModel/SampleModel.xcdatamodeld").path
    let archive = workspace.path("v1.gvault").path
    #expect(try BuiltTool.run(["backup", store, "--output", archive, "-q"]).status == 0)
    let restored = workspace.path("restored.sqlite").path
    let restore = try BuiltTool.run([
      "restore", archive, "--to", restored, "--model", set, "--model-version", "SampleModel2",
      "-q",
    ])
    #expect(restore.status == 0, "\(restore.stderr)")
    let result = try BuiltTool.run([
      "migrate", store, "--model", set, "--model-version", "SampleModel2",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try BuiltTool.run(["diff", restored, store, "-q"]).status == 0)
    #expect(try sqlRows(store, "PRAGMA journal_mode") == ["wal"])
    let read = """
      import sqlite3, plistlib, sys
      for path in sys.argv[1:]:
          m = plistlib.loads(sqlite3.connect(path).execute('SELECT Z_PLIST FROM Z_METADATA').fetchone()[0])
          print(sorted((k, v.hex()) for k, v in m['NSStoreModelVersionHashes'].items()))
      """
    let compared = try Subprocess.python(read, [store, coreData])
    let lines = compared.stdout.split(separator: "\n")
    #expect(lines.count == 2 && lines[0] == lines[1], "\(compared.stdout)\(compared.stderr)")
  }
}
