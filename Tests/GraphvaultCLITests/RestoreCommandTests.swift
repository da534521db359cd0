import Foundation
import TestSupport
import Testing

@Suite("graphvault restore", .enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
struct RestoreCommandTests {
  static let sampleModel = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Library.xcdatamodeld"
  ).path

  /// Every table's rows and every schema statement, as Python's sqlite3 dumps them, sorted.
  static func dump(_ path: String) throws -> String {
    try Subprocess.python(
      "import sqlite3,sys; print('\\n'.join(sorted(sqlite3.connect(sys.argv[1]).iterdump())))",
      [path]
    ).stdout
  }

  /// A sample store with a few objects, via the tool and Python (no fixtures needed).
  func populatedStore(in directory: TemporaryDirectory) throws -> String {
    let store = directory.path("Library.sqlite").path
    #expect(try BuiltTool.run(["create", store, "--model", Self.sampleModel]).status == 0)
    let fill = """
      import sqlite3, sys
      db = sqlite3.connect(sys.argv[1])
      db.execute("INSERT INTO ZWRITER (Z_PK, Z_ENT, Z_OPT, ZALIAS, ZAGE) VALUES (1, 6, 1, 'frank', 60)")
      db.execute("INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZAUTHOR, Z5_AUTHOR, ZPRICE, ZPUBLISHEDAT, ZUNIQUEID) VALUES (1, 1, 3, 'Dune', 1, 6, 10.5, 12345.5, x'000102030405060708090a0b0c0d0e0f')")
      db.execute("INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER, ZBOOK, Z1_BOOK, Z_FOK_BOOK) VALUES (1, 3, 1, 1, 1, 1, 1024)")
      db.execute("INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1, 4, 1, 'classic')")
      db.execute("INSERT INTO Z_1TAGS (Z_1BOOKS, Z_4TAGS) VALUES (1, 1)")
      db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_ENT IN (1, 3, 4, 5)")
      db.commit()
      """
    let result = try Subprocess.python(fill, [store])
    #expect(result.status == 0, "\(result.stderr)")
    return store
  }

  /// The populated store and its archive.
  func backedUpStore(in directory: TemporaryDirectory) throws -> (store: String, archive: String) {
    let store = try populatedStore(in: directory)
    let archive = directory.path("a.gvault").path
    let result = try BuiltTool.run([
      "backup", store, "--model", Self.sampleModel, "--output", archive,
    ])
    #expect(result.status == 0, "\(result.stderr)")
    return (store, archive)
  }

  @Test func backupThenRestoreGivesTheSameDatabase() throws {
    let directory = try TemporaryDirectory()
    let (store, archive) = try backedUpStore(in: directory)
    let restored = directory.path("restored.sqlite").path
    let result = try BuiltTool.run(["restore", archive, "--to", restored])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == restored)
    #expect(try Self.dump(restored) == Self.dump(store))
    #expect(try Self.dump(store).contains("frank"))
  }

  @Test func failuresHaveTheirStatusAndLeaveNoStore() throws {
    let directory = try TemporaryDirectory()
    let (store, archive) = try backedUpStore(in: directory)
    let notArchive = directory.path("text.gvault")
    try Data(String(repeating: "just text\n", count: 100).utf8).write(to: notArchive)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
    let truncated = directory.path("truncated.gvault")
    try bytes.prefix(bytes.count / 2).write(to: truncated)
    let cases: [([String], Int32, String)] = [
      (
        [
          "restore", directory.path("missing.gvault").path, "--to",
          directory.path("r1.sqlite").path,
        ], 66, "no archive"
      ),
      (["restore", notArchive.path, "--to", directory.path("r2.sqlite").path], 65, "text.gvault"),
      (
        ["restore", truncated.path, "--to", directory.path("r3.sqlite").path], 65,
        "truncated.gvault"
      ),
      (["restore", archive, "--to", store], 73, "exists"),
      (["restore", archive], 64, "--to"),
    ]
    for (arguments, status, message) in cases {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == status, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
    for name in ["r1.sqlite", "r2.sqlite", "r3.sqlite"] {
      #expect(!FileManager.default.fileExists(atPath: directory.path(name).path))
    }
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: directory.url.path).allSatisfy {
        !$0.contains(".tmp-")
      })
  }
}
