import Foundation
import SQLite
import TestSupport
import Testing

/// `restore --force` replaces a store only once the new one is whole: until the rename, the old
/// store keeps every committed transaction, the ones in its `-wal` included.
@Suite("Replacing a store")
struct ReplacingStoreCommandTests {
  let directory: TemporaryDirectory
  let archive: String
  let old: String

  /// A WAL store whose last 50 rows are only in its `-wal` (the writer exits without a
  /// checkpoint), and an archive of another store.
  init() throws {
    directory = try TemporaryDirectory()
    let source = directory.path("Source.sqlite").path
    #expect(try BuiltTool.run(["sample", source, "--objects", "300"]).status == 0)
    archive = directory.path("a.gvault").path
    #expect(try BuiltTool.run(["backup", source, "--output", archive]).status == 0)
    old = directory.path("Old.sqlite").path
    #expect(try BuiltTool.run(["sample", old, "--objects", "500", "--seed", "7"]).status == 0)
    let writer = try Subprocess.python(
      """
      import os, sqlite3, sys
      db = sqlite3.connect(sys.argv[1], isolation_level=None)
      db.execute("PRAGMA wal_autocheckpoint=0")
      start = db.execute("SELECT max(Z_PK) FROM ZTAG").fetchone()[0]
      tag = db.execute("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag'").fetchone()[0]
      db.execute("BEGIN")
      for key in range(start + 1, start + 51):
          db.execute("INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, 'wal only')", (key, tag))
      db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = 'Tag'", (start + 50,))
      db.execute("COMMIT")
      sys.stdout.flush()
      os._exit(0)
      """, [old])
    #expect(writer.status == 0, "\(writer.stderr)")
    let wal = try FileManager.default.attributesOfItem(atPath: old + "-wal")[.size] as? Int
    #expect((wal ?? 0) > 0, "the old store's last rows are in its -wal")
  }

  func walOnlyRows() throws -> Int64? {
    let db = try Database(path: old, mode: .readOnly)
    return try db.prepare("SELECT count(*) FROM ZTAG WHERE ZNAME = 'wal only'").scalar()
      .integerValue
  }

  static let canInject =
    Subprocess.isInstalled("strace")
    && ((try? Subprocess.run("strace", ["-o", "/dev/null", "true"]).status) == 0)

  @Test(
    "when the rename fails, restore --force exits 74 and the old store keeps every row, its -wal's included",
    .enabled(if: canInject, "needs strace able to trace (to make rename fail)"))
  func aFailedRenameLosesNothing() throws {
    let result = try Subprocess.run(
      "strace",
      [
        "-f", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2", "-e",
        "inject=rename,renameat,renameat2:error=EIO", BuiltTool.path, "restore", archive, "--to",
        old, "--force",
      ])
    #expect(result.status == 74, "\(result.stderr)")
    #expect(try walOnlyRows() == 50)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
      .filter { $0.contains(".tmp-") }
    #expect(leftovers.isEmpty, "\(leftovers)")
  }

  @Test("a successful restore --force replaces the store, keeps its mode and leaves no old log")
  func aReplacedStoreTakesTheOldOnesMode() throws {
    chmod(old, 0o640)
    let result = try BuiltTool.run(["restore", archive, "--to", old, "--force"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try walOnlyRows() == 0)
    let mode = try FileManager.default.attributesOfItem(atPath: old)[.posixPermissions] as? Int
    #expect(mode == 0o640)
    let verify = try Subprocess.python(
      "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
      [old])
    #expect(verify.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
  }

  @Test("restoring an archive onto itself is refused (64), and the archive stays")
  func theArchiveBeingReadIsNoDestination() throws {
    let before = try Data(contentsOf: URL(fileURLWithPath: archive))
    let result = try BuiltTool.run(["restore", archive, "--to", archive, "--force"])
    #expect(result.status == 64, "\(result.stderr)")
    #expect(result.stderr.contains("the destination is the file being read"))
    #expect(try Data(contentsOf: URL(fileURLWithPath: archive)) == before)
    let exported = directory.path("objects.json").path
    #expect(try BuiltTool.run(["export", archive, "--output", exported]).status == 0)
    let imported = try BuiltTool.run(["import", exported, "--to", exported, "--force"])
    #expect(imported.status == 64, "\(imported.stderr)")
  }
}
