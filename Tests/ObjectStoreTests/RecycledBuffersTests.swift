import Testing

@testable import ObjectStore

/// Freed batch storage is kept for the next batch that fits, bounded in number, and a batch's
/// values read the same whether its storage was new or kept.
@Suite("Buffers of decoded batches kept for the next")
struct RecycledBuffersTests {
  @Test("a freed large buffer serves the next request it fits, not one twice smaller")
  func keptBuffersServeRequestsThatFit() {
    let pool = RecycledBuffers(capacity: 2, smallest: 1_024)
    let first = pool.take(byteCount: 4_000)
    #expect(first.count == 4_000)
    pool.giveBack(first)
    #expect(pool.count == 1)
    // Too small a request for it: a new buffer.
    let small = pool.take(byteCount: 1_500)
    #expect(small.baseAddress != first.baseAddress)
    #expect(pool.count == 1)
    let again = pool.take(byteCount: 3_000)
    #expect(again.baseAddress == first.baseAddress)
    #expect(again.count == 4_000)
    #expect(pool.count == 0)
    pool.giveBack(again)
    pool.giveBack(small)
  }

  @Test("small buffers are freed, and no more than the pool's capacity are kept")
  func keepsFewAndLarge() {
    let pool = RecycledBuffers(capacity: 2, smallest: 1_024)
    pool.giveBack(pool.take(byteCount: 100))
    #expect(pool.count == 0)
    let buffers = (0..<4).map { _ in pool.take(byteCount: 2_048) }
    for buffer in buffers { pool.giveBack(buffer) }
    #expect(pool.count == 2)
  }

  @Test("batches made one after another in recycled storage keep their own values")
  func batchesKeepTheirValues() {
    var batches: [ObjectBatch.Bytes] = []
    var expected: [[UInt8]] = []
    for round in 0..<6 {
      let value = [UInt8](repeating: UInt8(round), count: (1 << 20) + round * 1_000)
      let bytes = ObjectBatch.Bytes(copying: value, ranges: [0..<value.count])
      // Every other batch freed at once, its storage free for the next.
      if round % 2 == 0 {
        batches.append(bytes)
        expected.append(value)
      }
    }
    for (bytes, value) in zip(batches, expected) {
      #expect(Array(bytes[0]) == value)
    }
  }
}
