import Foundation

/// Runs a producer on a second thread, up to `depth` items ahead of the caller: a restore
/// inserts on one core while the archive is read, checked and decoded on the other.
///
/// Items come out in the order produced; an error comes out where it happened, and after it (or
/// after the end) every call gives the same again. ``cancel()`` (or releasing the prefetcher)
/// stops the producing thread and waits for it, so the producer's state is the caller's again.
package final class Prefetcher<Item>: @unchecked Sendable {
  private let produce: () throws -> Item?
  private let condition = NSCondition()
  private var ready: [Result<Item?, any Error>] = []
  private var cancelled = false
  private var running = true
  private let depth: Int

  /// Starts calling `produce` on a second thread until it returns nil or throws, keeping at
  /// most `depth` items waiting.
  package init(depth: Int = 1, _ produce: @escaping () throws -> Item?) {
    self.produce = produce
    self.depth = depth
    Thread.detachNewThread { [self] in run() }
  }

  deinit { cancel() }

  /// The next item, or nil after the last.
  /// - Throws: what the producer threw, once its items before the error were taken.
  package func next() throws -> Item? {
    condition.lock()
    defer { condition.unlock() }
    while ready.isEmpty { condition.wait() }
    let first = ready.removeFirst()
    condition.broadcast()
    switch first {
    case .success(nil), .failure: ready.insert(first, at: 0)  // the end stays the end
    case .success: break
    }
    return try first.get()
  }

  /// Stops the producing thread and waits until it has stopped.
  package func cancel() {
    condition.lock()
    cancelled = true
    condition.broadcast()
    while running { condition.wait() }
    condition.unlock()
  }

  private func run() {
    while true {
      condition.lock()
      while ready.count >= depth && !cancelled { condition.wait() }
      let stop = cancelled
      condition.unlock()
      if stop { break }
      let result: Result<Item?, any Error>
      do {
        result = .success(try produce())
      } catch {
        result = .failure(error)
      }
      condition.lock()
      ready.append(result)
      condition.broadcast()
      condition.unlock()
      if case .success(let item) = result, item != nil { continue }
      break
    }
    condition.lock()
    running = false
    condition.broadcast()
    condition.unlock()
  }
}
