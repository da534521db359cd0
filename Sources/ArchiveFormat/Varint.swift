/// Unsigned LEB128 varints, and signed integers as zigzag varints of their difference from
/// the previous one: how format 2's columns hold integers (`graphvault(1)`, ARCHIVE FORMAT).
package enum Varint {
  /// Appends `value` seven bits a byte, low bits first, the high bit set on every byte but the
  /// last.
  @inline(__always)
  package static func append(_ value: UInt64, to bytes: inout [UInt8]) {
    var value = value
    while value >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
      value >>= 7
    }
    bytes.append(UInt8(value))
  }

  /// The number of bytes ``append(_:to:)`` takes for `value`.
  @inline(__always)
  package static func size(_ value: UInt64) -> Int {
    (64 - value.leadingZeroBitCount + 6) / 7 + (value == 0 ? 1 : 0)
  }

  /// Appends `value - previous` (wrapping) zigzag-encoded, so small differences of either sign
  /// take one byte; `previous` becomes `value`.
  @inline(__always)
  package static func appendDelta(_ value: Int64, previous: inout Int64, to bytes: inout [UInt8]) {
    let difference = value &- previous
    previous = value
    append(UInt64(bitPattern: (difference << 1) ^ (difference >> 63)), to: &bytes)
  }

  /// Reads varints one after another from a byte buffer.
  package struct Reader {
    private let bytes: ArraySlice<UInt8>
    /// Where the next varint starts (an index of the bytes given).
    package private(set) var offset: Int
    private var previous: Int64 = 0

    /// A reader of `bytes` from the start.
    package init(_ bytes: [UInt8]) {
      self.init(bytes[...])
    }

    /// A reader of `bytes` (a part of a larger buffer, read in place) from its start.
    package init(_ bytes: ArraySlice<UInt8>) {
      self.bytes = bytes
      offset = bytes.startIndex
    }

    /// Whether every byte has been read.
    package var isAtEnd: Bool { offset == bytes.endIndex }

    /// The next varint; nil when the bytes end inside it or it runs past ten bytes.
    @inline(__always)
    package mutating func next() -> UInt64? {
      var result: UInt64 = 0
      var shift: UInt64 = 0
      while offset < bytes.endIndex {
        let byte = bytes[offset]
        offset += 1
        result |= UInt64(byte & 0x7F) << shift
        if byte < 0x80 { return result }
        shift += 7
        if shift >= 70 { return nil }
      }
      return nil
    }

    /// Passes over `count` bytes, which must be there.
    @inline(__always)
    package mutating func skip(_ count: Int) {
      precondition(count <= bytes.endIndex - offset)
      offset += count
    }

    /// The next zigzag difference added to the previous value read this way.
    @inline(__always)
    package mutating func nextDelta() -> Int64? {
      guard let raw = next() else { return nil }
      let difference = Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
      previous = previous &+ difference
      return previous
    }
  }
}
