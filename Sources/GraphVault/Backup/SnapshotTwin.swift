import ObjectStore

/// A second read-only connection to a store that reads the very snapshot a backup's own read
/// transaction reads, or knows that it does not: what lets the change ledger's rows be hashed
/// on two cores without the ledger describing two states of the store.
///
/// SQLite has no call (in the builds Linux distributions ship) that opens a transaction on
/// another connection's snapshot, so the twin proves it: it is opened, and reads
/// `PRAGMA data_version`, before the backup's read transaction begins; inside its own read
/// transaction, begun after, it reads it again. The value moves whenever another connection
/// has committed in between (SQLite's documented use of it), so an unchanged value means no
/// commit came between the twin's first read and its snapshot, and the backup's snapshot,
/// taken in that interval, is the same one. A moved value (an app committed meanwhile) leaves
/// the work to the backup's connection alone, as before.
package final class SnapshotTwin: @unchecked Sendable {
  /// The twin's own connection (used on one thread at a time).
  package let store: CoreDataStore
  /// `data_version` before the backup's read transaction began.
  private let versionBefore: Int64

  /// How long a twin waits for a writer's lock, in seconds: briefly, since the backup goes on
  /// without it (and waits for its thread at the end).
  package static let busyTimeout = 0.25

  /// Opens the twin of `backup`, the store at `path`, before the backup's read transaction
  /// begins; `identity` is the file's, taken before `backup` was opened. Nil
  /// when it cannot be opened or asked, or when the file at `path` is no longer the one
  /// `backup` opened (replaced meanwhile, or another store): the backup then reads on its
  /// connection alone.
  package init?(
    path: String, busyTimeout: Double, twinOf backup: CoreDataStore,
    identity: StoreUsers.FileIdentity?
  ) {
    guard let identity, let store = try? CoreDataStore(path: path, busyTimeout: busyTimeout),
      StoreUsers.FileIdentity(path) == identity, store.uuid == backup.uuid,
      let version = try? Self.dataVersion(of: store)
    else { return nil }
    self.store = store
    versionBefore = version
  }

  /// Runs `body` in a read transaction of the twin whose snapshot is the backup's, and
  /// returns true; returns false without running it when another connection committed since
  /// the twin was opened.
  /// - Throws: what `body` throws, and what beginning the transaction throws (a store locked
  ///   by a writer longer than the busy timeout).
  func readSameSnapshot(_ body: (CoreDataStore) throws -> Void) throws -> Bool {
    try store.read { store in
      guard try Self.dataVersion(of: store) == versionBefore else { return false }
      try body(store)
      return true
    }
  }

  private static func dataVersion(of store: CoreDataStore) throws -> Int64? {
    try store.database.prepare("PRAGMA data_version").scalar().integerValue
  }
}
