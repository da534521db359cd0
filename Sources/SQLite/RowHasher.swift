/// A seeded 64-bit hash of stored values, the same on every machine: what an incremental backup
/// compares to find the rows that changed since its parent
/// (`CoreDataStore.forEachElement(of:seed:keys:_:)`).
///
/// Each value is fed with its storage class, so `1`, `1.0`, `'1'` and `X'31'` differ, as they
/// do to SQLite. The mixing step is the folded 128-bit product (the high half XOR the low
/// half) of the state and a word, keyed by the seed; the result goes through SplitMix64's
/// finalizer. It finds accidental changes with the odds of a 64-bit hash and is not a
/// cryptographic digest: a writer of the store could craft a change it misses, as it could
/// write anything to the store. `docs/FORMAT.md` gives the exact steps.
public struct RowHasher: Sendable {
  private var state: UInt64

  /// A hash keyed by `seed`.
  public init(seed: UInt64) { state = seed ^ 0x243F_6A88_85A3_08D3 }

  /// The state after `word`.
  @inline(__always) public mutating func mix(_ word: UInt64) {
    let (high, low) = (state ^ word ^ 0xA409_3822_299F_31D0).multipliedFullWidth(
      by: 0x9E37_79B9_7F4A_7C15)
    state = high ^ low
  }

  /// Feeds SQL `NULL`.
  public mutating func addNull() { mix(0) }

  /// Feeds an integer.
  public mutating func add(integer value: Int64) {
    mix(1)
    mix(UInt64(bitPattern: value))
  }

  /// Feeds a real.
  public mutating func add(real value: Double) {
    mix(2)
    mix(value.bitPattern)
  }

  /// Feeds text (its UTF-8 bytes) or a blob, told apart by `isText`.
  public mutating func add(bytes: UnsafeRawBufferPointer, isText: Bool) {
    mix(isText ? 3 : 4)
    mix(UInt64(bytes.count))
    var offset = 0
    while offset + 8 <= bytes.count {
      mix(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
      offset += 8
    }
    if offset < bytes.count {
      var tail: UInt64 = 0
      for (shift, byte) in bytes[offset...].enumerated() { tail |= UInt64(byte) << (8 * shift) }
      mix(tail)
    }
  }

  /// The hash of what was fed.
  public var value: UInt64 {
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
