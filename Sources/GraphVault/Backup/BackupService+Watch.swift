import Foundation
import SQLite

/// What stops a watching backup (``BackupService/watch(storePath:every:options:until:report:)``):
/// set from a signal handler, it wakes the wait between two looks at once.
public final class WatchStop: @unchecked Sendable {
  private let lock = NSLock()
  private let wake = DispatchSemaphore(value: 0)
  private var stopped = false

  /// A stop not yet asked for.
  public init() {}

  /// Asks the watch to stop: it ends after the backup under way, if any, or at once.
  public func stop() {
    lock.withLock { stopped = true }
    wake.signal()
  }

  /// Whether a stop was asked for.
  public var isStopped: Bool { lock.withLock { stopped } }

  /// Waits `seconds`, or less when a stop is asked for; true when it was.
  func wait(_ seconds: Double) -> Bool {
    if isStopped { return true }
    _ = wake.wait(timeout: .now() + seconds)
    return isStopped
  }
}

extension BackupService {
  /// Backs the store up now, then at the end of every `interval` seconds in which it changed,
  /// until `stop` is set: an incremental archive each time, on a ladder (``WatchLadder``): a
  /// full archive a week, each point on its hour's first, each hour's first on its day's
  /// first, each day's first on the full one, so no chain is longer than four archives. A
  /// watch that starts anew begins the ladder with a full archive.
  ///
  /// Whether the store changed is asked of SQLite, not found by reading it: one connection
  /// stays open and `PRAGMA data_version` moves when another connection commits (it reads
  /// the write-ahead log's index, or a rollback-journal store's first page). While the store is
  /// idle nothing else is read, and nothing is asked of the destination (no object-storage
  /// request). A commit lands in an archive within the interval and the time of one
  /// incremental backup.
  /// - Parameter report: called with each archive written.
  /// - Throws: ``VaultError``: a backup that fails ends the watch (systemd restarts it).
  public static func watch(
    storePath: String, every interval: Double, options: Options, until stop: WatchStop,
    report: (BackupResult) -> Void
  ) throws(VaultError) {
    var options = options
    options.incremental = true
    let watcher: Database
    do {
      watcher = try Database(path: storePath, mode: .readOnly)
    } catch {
      throw VaultError(.inputMissing, "cannot watch the store: \(error) (\(storePath))")
    }
    func version() throws(VaultError) -> Int64 {
      do {
        return try watcher.prepare("PRAGMA data_version").scalar().integerValue ?? 0
      } catch {
        throw VaultError(.ioFailure, "cannot ask the store whether it changed: \(error)")
      }
    }
    var ladder = WatchLadder()
    func point() throws(VaultError) {
      let now = Date()
      let (parent, rung) = ladder.next(at: now)
      var settings = options
      settings.now = now
      settings.incremental = parent != nil
      settings.parent = parent
      let result = try backup(storePath: storePath, options: settings)
      ladder.record(
        Location.lastComponent(of: result.archive), created: now,
        rung: result.kind == "full" ? 0 : rung)
      report(result)
    }
    var seen = try version()
    try point()
    while !stop.wait(interval) {
      let now = try version()
      guard now != seen else { continue }
      // Taken before the backup: a commit during it makes the next interval back up again.
      seen = now
      try point()
    }
  }
}
