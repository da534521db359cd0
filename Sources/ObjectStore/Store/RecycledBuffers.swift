import Foundation

/// Large raw buffers kept once freed for the next that fits: the storage of the batches a scan
/// decodes (``ObjectBatch/Bytes``), a few megabytes a chunk, which the system would otherwise
/// map, fault in page by page and unmap again for every chunk.
///
/// Only buffers of at least ``smallest`` bytes are kept, at most ``capacity`` of them; a
/// buffer is handed out for a request of at least half its size, so that a small batch does
/// not hold a large buffer.
final class RecycledBuffers: @unchecked Sendable {
  /// The buffers of every batch of the process.
  static let shared = RecycledBuffers()

  let capacity: Int
  let smallest: Int
  private let lock = NSLock()
  private var kept: [UnsafeMutableRawBufferPointer] = []

  init(capacity: Int = 2, smallest: Int = 1 << 20) {
    self.capacity = capacity
    self.smallest = smallest
  }

  deinit {
    for buffer in kept { buffer.deallocate() }
  }

  /// A buffer of at least `byteCount` bytes (its contents undefined): a kept one that fits, or
  /// a new one.
  func take(byteCount: Int) -> UnsafeMutableRawBufferPointer {
    let count = max(byteCount, 1)
    if count >= smallest {
      let found: UnsafeMutableRawBufferPointer? = lock.withLock {
        guard
          let index = kept.indices.filter({ kept[$0].count >= count && kept[$0].count / 2 <= count }
          )
          .min(by: { kept[$0].count < kept[$1].count })
        else { return nil }
        return kept.remove(at: index)
      }
      if let found { return found }
    }
    return .allocate(byteCount: count, alignment: 1)
  }

  /// Takes `buffer` back: kept when it is large enough and there is room, else freed.
  func giveBack(_ buffer: UnsafeMutableRawBufferPointer) {
    if buffer.count >= smallest {
      let keptIt = lock.withLock {
        guard kept.count < capacity else { return false }
        kept.append(buffer)
        return true
      }
      if keptIt { return }
    }
    buffer.deallocate()
  }

  /// How many buffers are kept now.
  var count: Int { lock.withLock { kept.count } }
}
