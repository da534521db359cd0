import Foundation
import SQLite
import TestSupport
import Testing

/// A WAL store on a read-only mount (or a snapshot), with its `-wal` and no `-shm`: SQLite
/// cannot open it in place, and a backup must still hold every committed transaction and
/// write nothing beside it.
@Suite(
  "Backups of a store on a read-only mount",
  .enabled(
    if: getuid() == 0 && ((try? Subprocess.run("unshare", ["-m", "true"]).status) == 0),
    "needs root and mount namespaces (unshare -m) to mount a read-only folder"))
struct ReadOnlyStoreCommandTests {
  /// Backs `source` up from a read-only mount holding it and its sidecars `files` (suffixes),
  /// in a mount namespace of its own: a tmpfs, filled, made read-only, backed up into a
  /// folder of `directory`, then listed.
  /// - Returns: the run (its output ends with the mount's listing), the backup folder and the
  ///   archive's name.
  func backUpOnAReadOnlyMount(_ source: String, files: [String], in directory: TemporaryDirectory)
    throws -> (run: ProcessResult, output: String, archive: String)
  {
    let mount = directory.path("mount").path
    let output = directory.path("backups").path
    for folder in [mount, output] {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    let copies = files.map { "\"$2\($0)\"" }.joined(separator: " ")
    let script = """
      set -e
      mount -t tmpfs tmpfs "$1"
      cp \(copies) "$1/"
      mount -o remount,ro "$1"
      "$3" backup "$1/Wal.sqlite" --output "$4/" -q
      ls -a "$1"
      """
    let run = try Subprocess.run(
      "unshare", ["-m", "sh", "-c", script, "sh", mount, source, BuiltTool.path, output])
    #expect(run.status == 0, "\(run.stderr)")
    let archive = try #require(
      try FileManager.default.contentsOfDirectory(atPath: output).first { $0.hasSuffix(".gvault") })
    return (run, output, archive)
  }

  @Test("a backup holds the rows only the -wal has, and the read-only folder gains nothing")
  func everyCommittedTransactionIsBackedUp() throws {
    let directory = try TemporaryDirectory()
    let source = directory.path("Wal.sqlite").path
    #expect(try BuiltTool.run(["sample", source, "--objects", "300"]).status == 0)
    let writer = try Subprocess.python(
      """
      import os, sqlite3, sys
      db = sqlite3.connect(sys.argv[1], isolation_level=None)
      db.execute("PRAGMA wal_autocheckpoint=0")
      start = db.execute("SELECT max(Z_PK) FROM ZTAG").fetchone()[0]
      tag = db.execute("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag'").fetchone()[0]
      for key in range(start + 1, start + 31):
          db.execute("INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, 'wal only')", (key, tag))
      db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = 'Tag'", (start + 30,))
      os._exit(0)
      """, [source])
    #expect(writer.status == 0, "\(writer.stderr)")
    try FileManager.default.removeItem(atPath: source + "-shm")
    let (run, output, archive) = try backUpOnAReadOnlyMount(
      source, files: ["", "-wal"], in: directory)
    #expect(
      run.stdout.split(separator: "\n").suffix(4) == [".", "..", "Wal.sqlite", "Wal.sqlite-wal"])
    let restored = directory.path("restored.sqlite").path
    let restore = try BuiltTool.run(["restore", output + "/" + archive, "--to", restored])
    #expect(restore.status == 0, "\(restore.stderr)")
    let db = try Database(path: restored, mode: .readOnly)
    #expect(
      try db.prepare("SELECT count(*) FROM ZTAG WHERE ZNAME = 'wal only'").scalar() == .integer(30))
    let list = try BuiltTool.run(["list", output + "/" + archive])
    #expect(
      list.stdout.contains("source \(directory.path("mount").path)/Wal.sqlite"), "\(list.stdout)")
  }

  @Test("a WAL store with neither -wal nor -shm on a read-only mount is backed up whole")
  func aStoreWhoseLogWasCheckpointedAwayIsBackedUp() throws {
    let directory = try TemporaryDirectory()
    let source = directory.path("Wal.sqlite").path
    #expect(try BuiltTool.run(["sample", source, "--objects", "300"]).status == 0)
    // A clean close checkpoints the log and removes both sidecars; the header still says WAL.
    let closed = try Subprocess.python(
      """
      import sqlite3, sys
      db = sqlite3.connect(sys.argv[1], isolation_level=None)
      print(db.execute("PRAGMA journal_mode").fetchone()[0])
      db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
      db.close()
      """, [source])
    #expect(closed.stdout == "wal\n", "\(closed.stderr)")
    for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: source + suffix) }
    let (run, output, archive) = try backUpOnAReadOnlyMount(source, files: [""], in: directory)
    #expect(run.stdout.split(separator: "\n").suffix(3) == [".", "..", "Wal.sqlite"])
    let restored = directory.path("restored.sqlite").path
    #expect(try BuiltTool.run(["restore", output + "/" + archive, "--to", restored]).status == 0)
    #expect(try storeRows(restored) == storeRows(source))
  }
}
