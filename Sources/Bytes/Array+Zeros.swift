extension Array where Element == UInt8 {
  /// A block of zero bytes that ``appendZeros(count:)`` copies from.
  private static let zeroBlock = [UInt8](repeating: 0, count: 1 << 16)

  /// Appends `count` zero bytes (none when `count` is not positive), in the storage the array
  /// has when it has room: the way to make room that a read or a decompression then fills in
  /// place.
  ///
  /// As fast in a debug build as in a release one: `append(contentsOf: repeatElement(0, …))`
  /// is a `memset` once optimized but walks the bytes one at a time through generic code
  /// without optimization (about 0.3 µs a byte, seconds for an archive's members), which
  /// made the debug build that the tests run spend most of its time zeroing buffers. Here the
  /// zeros are copied from a fixed block, a `memcpy` either way.
  public mutating func appendZeros(count: Int) {
    guard count > 0 else { return }
    reserveCapacity(self.count + count)
    var left = count
    Self.zeroBlock.withUnsafeBufferPointer { zeros in
      while left > 0 {
        let step = Swift.min(left, zeros.count)
        append(contentsOf: UnsafeBufferPointer(rebasing: zeros[0..<step]))
        left -= step
      }
    }
  }
}
