import Foundation

/// Runs a producer on a second thread, up to `depth` items ahead of the caller: a restore
/// inserts on one core while the archive is read, checked and decoded on the other.
///
/// The producer either gives one item per call (``init(depth:_:)``) or hands its items on as
/// it makes them (``init(depth:pushing:)``), waiting there while `depth` items wait already:
/// a producer that runs a loop of its own (a backup inside its read transaction) keeps it.
///
/// Items come out in the order produced; an error comes out where it happened, and after it (or
/// after the end) every call gives the same again. ``cancel()`` (or releasing the prefetcher)
/// stops the producing thread and waits for it, so the producer's state is the caller's again:
/// a pushing producer's next hand-over throws `CancellationError`.
package final class Prefetcher<Item>: @unchecked Sendable {
  private let condition = NSCondition()
  private var ready: [Result<Item?, any Error>] = []
  private var cancelled = false
  private var running = true
  private let depth: Int

  /// How items are made (on the producing thread alone).
  private enum Producer: @unchecked Sendable {
    case pulled(() throws -> Item?)
    case pushing((_ hand: (Item) throws -> Void) throws -> Void)
  }

  /// Starts calling `produce` on a second thread until it returns nil or throws, keeping at
  /// most `depth` items waiting: it is called only when there is room for its item.
  package init(depth: Int = 1, _ produce: @escaping () throws -> Item?) {
    self.depth = depth
    start(.pulled(produce))
  }

  /// Starts `produce` on a second thread; each item it hands to its argument waits there until
  /// fewer than `depth` items wait. Its return is the end; what it throws, an error.
  package init(
    depth: Int = 1, pushing produce: @escaping (_ hand: (Item) throws -> Void) throws -> Void
  ) {
    self.depth = depth
    start(.pushing(produce))
  }

  private func start(_ producer: Producer) {
    Thread.detachNewThread { [self] in run(producer) }
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

  private func run(_ producer: Producer) {
    var end: Result<Item?, any Error> = .success(nil)
    do {
      switch producer {
      case .pulled(let produce):
        while true {
          try whenThereIsRoom()
          guard let item = try produce() else { break }
          try hand(item)
        }
      case .pushing(let produce):
        try produce(hand)
      }
    } catch {
      end = .failure(error)
    }
    condition.lock()
    ready.append(end)
    running = false
    condition.broadcast()
    condition.unlock()
  }

  /// Waits until fewer than `depth` items wait, then runs `body` holding the lock.
  /// - Throws: `CancellationError` once the prefetcher was cancelled.
  private func whenThereIsRoom(_ body: () -> Void = {}) throws {
    condition.lock()
    defer { condition.unlock() }
    while ready.count >= depth && !cancelled { condition.wait() }
    if cancelled { throw CancellationError() }
    body()
  }

  /// Queues `item` once fewer than `depth` items wait.
  /// - Throws: `CancellationError` once the prefetcher was cancelled.
  private func hand(_ item: Item) throws {
    try whenThereIsRoom {
      ready.append(.success(item))
      condition.broadcast()
    }
  }
}
