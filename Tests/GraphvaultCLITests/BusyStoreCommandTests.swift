import Foundation
import TestSupport
import Testing

/// A store in rollback-journal mode is locked while its app commits: a backup waits for the
/// lock, and when a writer holds it too long, fails as locked (75), never as missing input (66)
/// or an I/O error (74).
@Suite(
  "Backups of a busy store",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 for the writer"))
struct BusyStoreCommandTests {
  /// A writer that commits a row every 20 ms (`hold` 0), or holds an exclusive lock for `hold`
  /// seconds once, until `stop` exists.
  static let writer = """
    import os, sqlite3, sys, time
    path, stop, ready, hold = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=DELETE")
    key = db.execute("SELECT max(Z_PK) FROM ZTAG").fetchone()[0] or 0
    tag = db.execute("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag'").fetchone()[0]
    if hold > 0:
        db.execute("BEGIN EXCLUSIVE")
        open(ready, "w").close()
        time.sleep(hold)
        db.execute("COMMIT")
        sys.exit(0)
    open(ready, "w").close()
    while not os.path.exists(stop):
        key += 1
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (?, ?, 1, ?)", (key, tag, "t%d" % key))
        db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_NAME = 'Tag'", (key,))
        db.execute("COMMIT")
        time.sleep(0.02)
    """

  func store(in directory: TemporaryDirectory) throws -> String {
    let store = directory.path("Busy.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "2000"]).status == 0)
    let switched = try Subprocess.python(
      "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); print(db.execute('PRAGMA journal_mode=DELETE').fetchone()[0])",
      [store])
    #expect(switched.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "delete")
    return store
  }

  func startWriter(_ store: String, in directory: TemporaryDirectory, hold: Double) throws
    -> (RunningProcess, String)
  {
    let stop = directory.path("stop").path
    let ready = directory.path("ready-\(UUID().uuidString)").path
    let writer = try RunningProcess(
      "/usr/bin/env", ["python3", "-c", Self.writer, store, stop, ready, String(hold)])
    #expect(RunningProcess.eventually(within: 30) { FileManager.default.fileExists(atPath: ready) })
    return (writer, stop)
  }

  @Test("twenty backups while a writer commits every 20 ms all succeed, each verifying")
  func backupsWaitForTheCommittingWriter() throws {
    let directory = try TemporaryDirectory()
    let store = try store(in: directory)
    let (writer, stop) = try startWriter(store, in: directory, hold: 0)
    defer {
      FileManager.default.createFile(atPath: stop, contents: nil)
      _ = writer.wait()
    }
    let folder = directory.path("backups").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    for run in 1...20 {
      let backup = try BuiltTool.run(["backup", store, "--output", folder + "/", "--json"])
      #expect([0, 75].contains(backup.status), "run \(run): \(backup.status) \(backup.stderr)")
      guard backup.status == 0 else { continue }
      let document =
        try JSONSerialization.jsonObject(with: Data(backup.stdoutBytes)) as? [String: Any]
      let archive = try #require(document?["archive"] as? String)
      let verify = try BuiltTool.run(["verify", archive])
      #expect(verify.status == 0, "run \(run): \(verify.stderr)")
    }
  }

  @Test(
    "a writer that holds the store past the wait makes the backup fail as locked (75), naming the cause"
  )
  func aLockHeldTooLongIsSeventyFive() throws {
    let directory = try TemporaryDirectory()
    let store = try store(in: directory)
    let (writer, _) = try startWriter(store, in: directory, hold: 8)
    defer { _ = writer.wait() }
    let backup = try BuiltTool.run(["backup", store, "--output", directory.path("a.gvault").path])
    #expect(backup.status == 75, "\(backup.stderr)")
    #expect(backup.stderr.contains("lock"), "\(backup.stderr)")
    #expect(!FileManager.default.fileExists(atPath: directory.path("a.gvault").path))
  }
}
