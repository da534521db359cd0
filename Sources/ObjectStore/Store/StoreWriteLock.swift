import Foundation
import SQLite

/// A store's write lock, held while the store is replaced by a new file (a migration in place):
/// no other process can commit to it from the moment the lock is taken, so nothing written
/// after the store was read is lost in the swap. Readers go on reading.
///
/// Taking it folds the write-ahead log into the main file first (a `TRUNCATE` checkpoint, which
/// keeps every committed transaction), so that the log is empty while the lock is held: a new
/// file renamed over the store can then never be read with the old store's log. Before the
/// swap, ``beforeReplacing()`` makes the connection keep its log files when it closes
/// (``Database/keepWriteAheadLogOnClose()``), so releasing the lock after the swap touches
/// nothing at the store's path.
package final class StoreWriteLock {
  private let database: Database
  private let path: String

  /// Takes the lock of the store at `path`, waiting up to `wait` seconds for other processes'
  /// transactions (and readers, for the checkpoint).
  /// - Throws: ``StoreError``: ``StoreError/Kind/conflict`` when the store stays in use,
  ///   ``StoreError/Kind/database`` when it cannot be opened.
  package init(path: String, wait: Double) throws(StoreError) {
    self.path = path
    let milliseconds = Int32(max(0, min(wait, 86_400)) * 1000)
    do {
      database = try Database(path: path, mode: .readWrite, busyTimeout: max(milliseconds, 1))
    } catch {
      throw StoreError(.database, "cannot open the store", path: path, underlying: error)
    }
    let deadline = Date().addingTimeInterval(max(wait, 0))
    while true {
      do {
        let busy =
          try database.prepare("PRAGMA wal_checkpoint(TRUNCATE)").allRows().first?
          .first?.integerValue == 1
        if !busy {
          try database.execute("BEGIN IMMEDIATE")
          // A commit between the checkpoint and the lock leaves the log not empty: again.
          if StoreFile.size(ofSidecar: "-wal", of: path) == 0 { return }
          try database.execute("ROLLBACK")
        }
      } catch {
        // A busy error has waited the busy timeout already.
        if error.isBusy { throw Self.inUse(path, wait: wait) }
        throw StoreError(.database, "cannot lock the store", path: path, underlying: error)
      }
      guard Date() < deadline else { throw Self.inUse(path, wait: wait) }
      Thread.sleep(forTimeInterval: 0.05)
    }
  }

  /// Readies the lock for the store's replacement by another file at its path: from now on,
  /// releasing it keeps the (empty) log files rather than deleting them by name, which would
  /// delete the new store's.
  package func beforeReplacing() {
    database.keepWriteAheadLogOnClose()
  }

  /// Changes the store in place: `body` runs inside the transaction the lock holds, which is
  /// then committed (everything `body` did, or — when it throws, or the run is killed —
  /// nothing). The lock is released with the commit.
  /// - Throws: what `body` throws; ``StoreError`` when the commit fails.
  package func commit<R>(_ body: (Database) throws -> R) throws -> R {
    let result: R
    do {
      result = try body(database)
    } catch {
      release()
      throw error
    }
    do {
      try database.execute("COMMIT")
    } catch {
      release()
      throw StoreError(.database, "cannot commit the change", path: path, underlying: error)
    }
    return result
  }

  /// Releases the lock (the transaction it holds changed nothing).
  package func release() {
    try? database.execute("ROLLBACK")
  }

  deinit { release() }

  private static func inUse(_ path: String, wait: Double) -> StoreError {
    StoreError(
      .conflict,
      "the store is in use by another process (still after \(wait) s): close the app, or give --wait more time",
      path: path)
  }
}
