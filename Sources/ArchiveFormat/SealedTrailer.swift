/// The 32 bytes an encrypted archive ends with, after its tar stream's end-of-archive blocks
/// (where every tar reader stops): where its index's tar records are and the index's position
/// among the sealed members, so that a reader that wants the header and the index (`list`,
/// `prune`) reads the archive's two ends instead of all of it.
///
/// A hint, never trusted: the index opens only at its own position (the position is the
/// nonce; FORMAT.md section 9), what it holds is authenticated, and a reader whose hint leads
/// nowhere reads the archive from its start.
///
/// `GVSX`, version 1 (4 bytes), the offset of the index's tar records, their length, and the
/// index's position (8 bytes each), all little-endian.
package struct SealedTrailer: Sendable, Equatable {
  /// The trailer's size.
  package static let size = 32
  /// The tar stream's end-of-archive blocks, between the index's records and the trailer.
  package static let endOfArchive = 1_024
  static let tag = Array("GVSX".utf8)

  /// Where the index's tar records (its headers, sealed content and padding) begin.
  package let offset: Int64
  /// Their length in bytes.
  package let length: Int64
  /// The index's position among the sealed members (the real header is 0).
  package let position: UInt64

  /// A trailer naming the index's records and position.
  package init(offset: Int64, length: Int64, position: UInt64) {
    (self.offset, self.length, self.position) = (offset, length, position)
  }

  /// The trailer in the last ``size`` bytes of an archive of `archiveSize` bytes, when they are
  /// one whose index's records end where the end-of-archive blocks begin; else nil.
  package init?(_ bytes: some Collection<UInt8>, archiveSize: Int64) {
    let bytes = Array(bytes)
    guard bytes.count == Self.size, Array(bytes[0..<4]) == Self.tag else { return nil }
    func integer(at offset: Int, count: Int) -> UInt64 {
      (0..<count).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }
    let (offset, length) = (integer(at: 8, count: 8), integer(at: 16, count: 8))
    let end = archiveSize - Int64(Self.size + Self.endOfArchive)
    guard integer(at: 4, count: 4) == 1, end > 0, length > 0, offset < UInt64(end),
      length == UInt64(end) - offset
    else { return nil }
    self.init(offset: Int64(offset), length: Int64(length), position: integer(at: 24, count: 8))
  }

  /// Whether an archive's last ``size`` bytes claim to be a trailer (its tag), whatever they say.
  package static func claimed(_ bytes: some Collection<UInt8>) -> Bool {
    bytes.count == size && Array(bytes.prefix(4)) == tag
  }

  /// The trailer's bytes.
  package var bytes: [UInt8] {
    func little(_ value: UInt64, _ count: Int) -> [UInt8] {
      (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
    return Self.tag + little(1, 4) + little(UInt64(offset), 8) + little(UInt64(length), 8)
      + little(position, 8)
  }
}
