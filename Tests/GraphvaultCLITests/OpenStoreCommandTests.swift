import Foundation
import TestSupport
import Testing

/// A store an app has open is never replaced under it: `migrate` (when it rebuilds the store)
/// and `restore --force` refuse with 75 naming the app's process, or wait for it with `--wait`,
/// and every row the app committed is still in the store afterwards.
@Suite(
  "Replacing a store another process has open",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3) for the app"))
struct OpenStoreCommandTests {
  static let fixtures = SharedFixtures.packageRoot.appendingPathComponent("Fixtures")
  static let model = fixtures.appendingPathComponent("Library.xcdatamodeld").path
  static let libraryArchive = fixtures.appendingPathComponent("Archives/Library-1.gvault").path

  /// An app: opens the store in `mode` and keeps its connection open, committing one change
  /// (a book's `Z_OPT` incremented) every 20 ms until `stop` exists or `seconds` pass; then
  /// closes the connection, writes how many commits it made to `done`, and stays alive.
  static let app = """
    import os, sqlite3, sys, time
    path, mode, stop, ready, done, seconds = sys.argv[1:7]
    db = sqlite3.connect(path, timeout=30, isolation_level=None)
    db.execute("PRAGMA journal_mode=%s" % mode)
    keys = [row[0] for row in db.execute("SELECT Z_PK FROM ZBOOK")]
    commits = 0
    end = time.time() + float(seconds)
    open(ready, "w").close()
    while not os.path.exists(stop) and time.time() < end:
        db.execute("BEGIN IMMEDIATE")
        db.execute("UPDATE ZBOOK SET Z_OPT = Z_OPT + 1 WHERE Z_PK = ?", (keys[commits % len(keys)],))
        db.execute("COMMIT")
        commits += 1
        time.sleep(0.02)
    db.close()
    with open(done, "w") as f:
        f.write(str(commits))
    while not os.path.exists(stop):
        time.sleep(0.05)
    """

  let workspace: TemporaryDirectory

  init() throws { workspace = try TemporaryDirectory() }

  /// A running app on `store`, with what it needs to be stopped and counted.
  struct App {
    let process: RunningProcess
    let stop: String
    let done: String

    /// Stops it and returns how many commits it made.
    func finish() throws -> Int {
      FileManager.default.createFile(atPath: stop, contents: nil)
      _ = process.wait()
      return Int(try String(contentsOfFile: done, encoding: .utf8)) ?? -1
    }
  }

  func startApp(on store: String, mode: String, closingAfter seconds: Double = 600) throws -> App {
    let tag = UUID().uuidString
    let stop = workspace.path("stop-\(tag)").path
    let ready = workspace.path("ready-\(tag)").path
    let done = workspace.path("done-\(tag)").path
    let process = try RunningProcess(
      "/usr/bin/env",
      ["python3", "-c", Self.app, store, mode, stop, ready, done, String(seconds)])
    #expect(RunningProcess.eventually(within: 30) { FileManager.default.fileExists(atPath: ready) })
    return App(process: process, stop: stop, done: done)
  }

  /// The app's store, another store, and an archive of the other to restore over the app's.
  func appStoreAndAnotherArchive() throws -> (store: String, other: String, archive: String) {
    let store = workspace.path("App.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "300"]).status == 0)
    let other = workspace.path("Other.sqlite").path
    #expect(try BuiltTool.run(["sample", other, "--objects", "200", "--seed", "9"]).status == 0)
    let archive = workspace.path("other.gvault").path
    #expect(try BuiltTool.run(["backup", other, "--output", archive]).status == 0)
    return (store, other, archive)
  }

  func changes(in store: String) throws -> Int {
    Int(try sqlRows(store, "SELECT total(Z_OPT) FROM ZBOOK").first.flatMap(Double.init) ?? -1)
  }

  @Test(arguments: ["wal", "delete"])
  func restoreForceOntoAStoreAnAppHasOpenIsSeventyFiveAndEveryCommitStays(mode: String) throws {
    let (store, _, archive) = try appStoreAndAnotherArchive()
    let before = try changes(in: store)
    let app = try startApp(on: store, mode: mode)
    let restore = try BuiltTool.run(["restore", archive, "--to", store, "--force"])
    let commits = try app.finish()
    #expect(restore.status == 75, "\(restore.stderr)")
    #expect(restore.stderr.contains("open in another process (pid \(app.process.pid)"))
    #expect(commits > 0)
    #expect(try changes(in: store) == before + commits)
    #expect(try sqlRows(store, "PRAGMA integrity_check") == ["ok"])
  }

  @Test(arguments: ["wal", "delete"])
  func migrateThatRebuildsAStoreAnAppHasOpenIsSeventyFiveAndEveryCommitStays(mode: String) throws {
    let store = workspace.path("Library.sqlite").path
    let restore = try BuiltTool.run(["restore", Self.libraryArchive, "--to", store, "-q"])
    #expect(restore.status == 0, "\(restore.stderr)")
    let before = try changes(in: store)
    let app = try startApp(on: store, mode: mode)
    let migrate = try BuiltTool.run(["migrate", store, "--model", Self.model, "--wait", "1"])
    let commits = try app.finish()
    #expect(migrate.status == 75, "\(migrate.stderr)")
    #expect(migrate.stderr.contains("pid \(app.process.pid)"), "\(migrate.stderr)")
    #expect(commits > 0)
    #expect(try changes(in: store) == before + commits)
    #expect(try sqlRows(store, "SELECT count(*) FROM sqlite_master WHERE name = 'ZSHELF'") == ["1"])
  }

  @Test func restoreForceWithWaitReplacesTheStoreOnceTheAppHasClosedIt() throws {
    let (store, other, archive) = try appStoreAndAnotherArchive()
    // The app's process stays alive after it closes its store: the connection is what counts.
    let app = try startApp(on: store, mode: "wal", closingAfter: 1)
    let restore = try BuiltTool.run(["restore", archive, "--to", store, "--force", "--wait", "30"])
    _ = try app.finish()
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(try storeRows(store) == storeRows(other))
  }
}
