import Foundation

/// Buffers of encoded chunks kept for the next chunk once their member is written, so that a
/// backup does not map, fault in and unmap a few megabytes of fresh memory for every chunk
/// (a large allocation is its own mapping, returned to the system when freed).
///
/// Only buffers of at least ``smallest`` bytes are kept, and at most ``capacity`` of them:
/// what it holds stays bounded. A buffer handed back while something else still refers to it
/// costs nothing wrong: emptying it then makes a new one (arrays copy on write).
package final class ChunkBufferPool: @unchecked Sendable {
  /// The pool encoders and writers of the process share.
  package static let shared = ChunkBufferPool()

  /// The most buffers kept.
  package let capacity: Int
  /// The smallest capacity worth keeping.
  package let smallest: Int
  private let lock = NSLock()
  private var kept: [[UInt8]] = []

  package init(capacity: Int = 2, smallest: Int = 1 << 20) {
    self.capacity = capacity
    self.smallest = smallest
  }

  /// An empty buffer: one kept (with its capacity), or a new one.
  package func take() -> [UInt8] {
    var buffer = lock.withLock { kept.popLast() } ?? []
    buffer.removeAll(keepingCapacity: true)
    return buffer
  }

  /// Keeps `buffer` for a later ``take()`` when it is large enough and there is room.
  package func giveBack(_ buffer: [UInt8]) {
    guard buffer.capacity >= smallest else { return }
    lock.withLock {
      if kept.count < capacity { kept.append(buffer) }
    }
  }

  /// How many buffers are kept now.
  package var count: Int { lock.withLock { kept.count } }
}
