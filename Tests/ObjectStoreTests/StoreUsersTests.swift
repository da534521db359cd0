import Foundation
import SQLite
import TestSupport
import Testing

@testable import ObjectStore

/// `StoreUsers` sees another process's connection to a store both by its open descriptors and
/// by SQLite's locks (the way that works across users), and never sees this process's own.
@Suite(
  "Processes that have a store open",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3) for the other process"))
struct StoreUsersTests {
  /// Opens the store in `mode` and reads it (a WAL connection then holds the shared memory's
  /// switch), or with `writing` holds a write transaction; then waits until `stop` exists.
  static let holder = """
    import os, sqlite3, sys, time
    path, mode, writing, ready, stop = sys.argv[1:6]
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=%s" % mode)
    db.execute("SELECT count(*) FROM t").fetchone()
    if writing == "1":
        db.execute("BEGIN IMMEDIATE")
    open(ready, "w").close()
    while not os.path.exists(stop):
        time.sleep(0.02)
    """

  let directory: TemporaryDirectory
  let store: String

  init() throws {
    directory = try TemporaryDirectory()
    store = directory.path("s.sqlite").path
    let database = try Database(path: store, mode: .readWriteCreate)
    try database.execute("CREATE TABLE t (x INTEGER)")
    try database.execute("INSERT INTO t VALUES (1)")
  }

  func startHolder(mode: String, writing: Bool) throws -> (RunningProcess, stop: String) {
    let ready = directory.path("ready-\(UUID().uuidString)").path
    let stop = directory.path("stop-\(UUID().uuidString)").path
    let process = try RunningProcess(
      "/usr/bin/env",
      ["python3", "-c", Self.holder, store, mode, writing ? "1" : "0", ready, stop])
    #expect(RunningProcess.eventually(within: 30) { FileManager.default.fileExists(atPath: ready) })
    return (process, stop)
  }

  func end(_ holder: (RunningProcess, stop: String)) {
    _ = FileManager.default.createFile(atPath: holder.stop, contents: nil)
    _ = holder.0.wait()
  }

  @Test func anIdleWALConnectionIsSeenByItsDescriptorsAndByTheSharedMemorysLock() throws {
    let holder = try startHolder(mode: "wal", writing: false)
    #expect(StoreUsers.holdingDescriptors(of: store) == [holder.0.pid])
    #expect(StoreUsers.holdingLocks(of: store) == [holder.0.pid])
    #expect(StoreUsers.others(of: store).map(\.pid) == [holder.0.pid])
    #expect(StoreUsers.others(of: store).first?.command == "python3")
    end(holder)
    #expect(StoreUsers.others(of: store).isEmpty)
  }

  @Test func aRollbackJournalWriterIsSeenByTheDatabasesLockBytes() throws {
    let holder = try startHolder(mode: "delete", writing: true)
    #expect(StoreUsers.holdingLocks(of: store) == [holder.0.pid])
    end(holder)
    #expect(StoreUsers.holdingLocks(of: store).isEmpty)
  }

  @Test func thisProcesssOwnConnectionIsNotAnotherUserAndKeepsItsLock() throws {
    let mine = try Database(path: store, mode: .readWrite)
    try mine.execute("PRAGMA journal_mode=WAL")
    try mine.execute("BEGIN IMMEDIATE")
    #expect(StoreUsers.others(of: store).isEmpty)
    // Our write lock still holds: another process cannot take it.
    let other = try Subprocess.python(
      "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1], timeout=0, isolation_level=None)\ntry:\n    db.execute('BEGIN IMMEDIATE'); print('took')\nexcept sqlite3.OperationalError as e:\n    print('busy')",
      [store])
    #expect(other.stdout == "busy\n", "\(other.stderr)")
    try mine.execute("ROLLBACK")
  }

  @Test func requireNoneNamesTheProcessAndWaitsForItToClose() throws {
    let holder = try startHolder(mode: "wal", writing: false)
    #expect {
      try StoreUsers.requireNone(of: store, before: "replace")
    } throws: { error in
      "\(error)".contains("pid \(holder.0.pid) (python3)")
        && (error as? StoreError)?.kind == .conflict
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) {
      _ = FileManager.default.createFile(atPath: holder.stop, contents: nil)
    }
    try StoreUsers.requireNone(of: store, before: "replace", wait: 30)
    _ = holder.0.wait()
  }
}
