import ArchiveFormat
import Testing

/// The pool of chunk buffers keeps what a backup's writer hands back for the next chunk,
/// bounded in number and by size, and never hands out a buffer with bytes in it.
@Suite("Buffers of encoded chunks kept for the next")
struct ChunkBufferPoolTests {
  @Test("a large buffer handed back comes out again empty, with its capacity")
  func largeBuffersAreKept() {
    let pool = ChunkBufferPool(capacity: 2, smallest: 1_024)
    var buffer = pool.take()
    #expect(buffer.isEmpty)
    buffer.append(contentsOf: repeatElement(9, count: 4_000))
    let capacity = buffer.capacity
    let address = buffer.withUnsafeBufferPointer { $0.baseAddress }
    pool.giveBack(buffer)
    buffer = []
    let again = pool.take()
    #expect(again.isEmpty)
    #expect(again.capacity == capacity)
    #expect(again.withUnsafeBufferPointer { $0.baseAddress } == address)
    #expect(pool.count == 0)
  }

  @Test("small buffers are not kept, and no more than the pool's capacity")
  func keepsFewAndLarge() {
    let pool = ChunkBufferPool(capacity: 2, smallest: 1_024)
    pool.giveBack([UInt8](repeating: 1, count: 100))
    #expect(pool.count == 0)
    for _ in 0..<5 { pool.giveBack([UInt8](repeating: 1, count: 2_000)) }
    #expect(pool.count == 2)
    #expect(pool.take().isEmpty)
    #expect(pool.take().isEmpty)
    #expect(pool.take().capacity == 0)
  }

  @Test("a buffer still held elsewhere when handed back is left as it is")
  func heldBuffersStayIntact() {
    let pool = ChunkBufferPool(capacity: 2, smallest: 1_024)
    let held = [UInt8](repeating: 5, count: 2_000)
    pool.giveBack(held)
    var taken = pool.take()
    taken.append(6)
    #expect(held == [UInt8](repeating: 5, count: 2_000))
    #expect(taken == [6])
  }
}
