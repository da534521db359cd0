import Foundation
import ObjectStore

/// The thread that reads a ``SnapshotTwin`` for a backup: begun inside the backup's read
/// transaction (so that the twin's snapshot, checked the same, is taken after the backup's),
/// it holds one read transaction of the twin from its first job to its last, so that every job
/// (the ledger's parts, then segments of objects) reads the one snapshot.
///
/// A job runs with the twin's store, or with nil when the twin does not read the backup's
/// snapshot (an app committed in between) or could not begin: the job then leaves its work to
/// the backup's connection. Jobs run in the order submitted, one at a time.
package final class TwinWorker: @unchecked Sendable {
  typealias Job = (CoreDataStore?) -> Void

  private let condition = NSCondition()
  /// Guarded by `condition`.
  private var jobs: [Job] = []
  private var closed = false
  private var running = true

  /// Starts the thread; call it inside the backup's read transaction.
  package init(twin: SnapshotTwin) {
    Thread.detachNewThread { [self] in
      do {
        let same = try twin.readSameSnapshot { store in
          while let job = next() { job(store) }
        }
        if !same { drain() }
      } catch {
        drain()
      }
      condition.withLock {
        running = false
        condition.broadcast()
      }
    }
  }

  deinit { close() }

  /// Queues `job` (before ``close()``); it runs on the worker's thread once the jobs before it
  /// ran.
  func submit(_ job: @escaping Job) {
    condition.withLock {
      precondition(!closed, "a job submitted to a closed twin worker")
      jobs.append(job)
      condition.broadcast()
    }
  }

  /// Runs `job` on the twin's thread while `body` runs on this one, and returns what `body`
  /// returns once the job has ended too: when `body` returns or throws, `stop` tells the job
  /// to stop at its next step, and the job is waited for, so that nothing of it runs past this
  /// call.
  func alongside<R>(_ job: @escaping Job, stop: () -> Void, _ body: () throws -> R) rethrows -> R {
    let done = DispatchSemaphore(value: 0)
    submit { store in
      job(store)
      done.signal()
    }
    defer {
      stop()
      done.wait()
    }
    return try body()
  }

  /// Ends the twin's transaction once the queued jobs ran, and waits for its thread.
  package func close() {
    condition.withLock {
      closed = true
      condition.broadcast()
      while running { condition.wait() }
    }
  }

  /// The next job, waiting for one; nil once closed and none is left.
  private func next() -> Job? {
    condition.withLock {
      while jobs.isEmpty && !closed { condition.wait() }
      return jobs.isEmpty ? nil : jobs.removeFirst()
    }
  }

  /// Runs every job without the twin until closed: the twin cannot help.
  private func drain() {
    while let job = next() { job(nil) }
  }
}
