import DurableIO
import Foundation
import SQLite

/// How a store file is written: built whole at a temporary path beside its destination and moved
/// into place, a store it replaces kept whole, with every committed transaction, until then.
package enum StoreFile {
  /// Lets `body` build a store at a temporary path beside `path`, then moves it into place
  /// (``DurableFile/buildDatabase(at:beforeReplacing:_:)``). A store already at `path` first
  /// has its write-ahead log folded into its main file (``foldJournal(of:)``), so that if the
  /// move fails it is whole without its sidecars' help, and once the move succeeds no old log
  /// is left to be read as the new store's.
  ///
  /// A store that another process has open (``StoreUsers``) is never replaced: its app would go
  /// on writing to the old file, unlinked. The move waits up to `wait` seconds for it to close.
  /// - Throws: what `body` throws; ``StoreError`` (``StoreError/Kind/conflict``) when the store
  ///   being replaced is in use by another process; ``DurableIOError``.
  package static func build<R>(at path: String, wait: Double = 0, _ body: (String) throws -> R)
    throws -> R
  {
    try DurableFile.buildDatabase(
      at: path,
      beforeReplacing: { old in
        try StoreUsers.requireNone(of: old, before: "replace", wait: wait)
        try foldJournal(of: old)
        // Folding opened and closed a connection: look again, just before the move.
        try StoreUsers.requireNone(of: old, before: "replace", wait: wait)
      }, body)
  }

  /// The size of the store at `path`'s sidecar `suffix` (`-wal`, `-journal`), 0 when absent.
  static func size(ofSidecar suffix: String, of path: String) -> Int64 {
    ((try? FileManager.default.attributesOfItem(atPath: path + suffix))?[.size] as? NSNumber)?
      .int64Value ?? 0
  }

  /// Folds the store at `path`'s write-ahead log into its main file (a `TRUNCATE` checkpoint)
  /// and rolls back a rollback journal left by a crash, as SQLite does when it opens the store.
  /// A file that is not an SQLite database, or has no sidecar, is left as it is.
  /// - Throws: ``StoreError``: ``StoreError/Kind/conflict`` when another process is using the
  ///   store (the checkpoint could not finish), ``StoreError/Kind/database`` when it fails.
  package static func foldJournal(of path: String) throws(StoreError) {
    guard ["-wal", "-journal"].contains(where: { size(ofSidecar: $0, of: path) > 0 }) else {
      return
    }
    let database: Database
    do {
      database = try Database(
        path: path, mode: .readWrite,
        busyTimeout: Int32(CoreDataStore.defaultBusyTimeout * 1000))
    } catch  where error.isNotADatabase {
      return
    } catch {
      throw StoreError(
        .database, "cannot open the store being replaced", path: path, underlying: error)
    }
    let busy: Bool
    do {
      // Reading the schema rolls back a crashed transaction's journal; the checkpoint folds
      // the log in and empties it.
      let result = try database.prepare("PRAGMA wal_checkpoint(TRUNCATE)").allRows().first
      busy = result?.first?.integerValue == 1
    } catch {
      throw StoreError(
        error.isBusy ? .conflict : .database,
        "cannot fold the log of the store being replaced into it", path: path,
        underlying: error)
    }
    if busy {
      throw StoreError(
        .conflict,
        "the store being replaced is in use by another process (its log could not be folded in); close the app or retry later",
        path: path)
    }
  }
}
