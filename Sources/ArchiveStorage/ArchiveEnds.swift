/// The first and last bytes of an archive, kept beside it where a ranged read costs a request
/// of its own (object storage): an archive's header is at its start and its index and trailer
/// at its end, so `list` and `prune` learn what an archive is from one small object instead of
/// two ranged reads of a large one.
///
/// A copy, never the archive: what is read through it is checked as the archive's own bytes
/// would be (a framed archive's members against its index), and a copy that cannot be read, or
/// that belongs to an archive of another size, is passed over for the archive itself.
///
/// Encoded as the 8 bytes `GVENDS` 0 1, the archive's size (8 bytes), the head's and the
/// tail's lengths (4 bytes each, all little-endian), then the head and the tail.
public struct ArchiveEnds: Sendable, Equatable {
  /// At most this many bytes of an archive's start are kept (its header's frame, with room).
  public static let headLimit = 32 << 10
  /// At most this many bytes of an archive's end are kept (its index's frame and trailer: an
  /// archive of 5 million objects has an index of about 100 KiB).
  public static let tailLimit = 224 << 10
  static let magic: [UInt8] = Array("GVENDS".utf8) + [0, 1]
  static let prefixSize = magic.count + 16

  /// The archive's size in bytes.
  public let size: Int64
  /// Its first bytes.
  public let head: [UInt8]
  /// Its last bytes, after the head (none when the head holds the whole archive).
  public let tail: [UInt8]

  /// The ends of an archive of `size` bytes.
  public init(size: Int64, head: [UInt8], tail: [UInt8]) {
    (self.size, self.head, self.tail) = (size, head, tail)
  }

  /// The ends `bytes` encode.
  /// - Throws: ``StorageError`` (``StorageError/Kind/unreadable``) when they are not ends: another
  ///   magic, lengths past the limits or the archive's size, or bytes missing or left over.
  public init(decoding bytes: [UInt8]) throws(StorageError) {
    func number(at offset: Int, count: Int) -> UInt64 {
      (0..<count).reduce(0) { $0 | UInt64(bytes[offset + $1]) << (8 * $1) }
    }
    guard bytes.count >= Self.prefixSize, Array(bytes[0..<Self.magic.count]) == Self.magic else {
      throw StorageError(.unreadable, "not a copy of an archive's ends")
    }
    let size = number(at: 8, count: 8)
    let headCount = Int(number(at: 16, count: 4))
    let tailCount = Int(number(at: 20, count: 4))
    guard headCount <= Self.headLimit, tailCount <= Self.tailLimit, size <= UInt64(Int64.max),
      UInt64(headCount + tailCount) <= size,
      bytes.count == Self.prefixSize + headCount + tailCount
    else {
      throw StorageError(.unreadable, "a copy of an archive's ends whose lengths do not add up")
    }
    let tailStart = Self.prefixSize + headCount
    self.init(
      size: Int64(size), head: Array(bytes[Self.prefixSize..<tailStart]),
      tail: Array(bytes[tailStart...]))
  }

  /// The encoded ends.
  public var encoded: [UInt8] {
    func little(_ value: UInt64, _ count: Int) -> [UInt8] {
      (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
    return Self.magic + little(UInt64(size), 8) + little(UInt64(head.count), 4)
      + little(UInt64(tail.count), 4) + head + tail
  }

  /// Bytes `offset..<offset + count` of the archive when the ends hold all of them (fewer at
  /// the archive's end), or nil.
  public func bytes(at offset: Int64, count: Int) -> ArraySlice<UInt8>? {
    let end = min(size, offset + Int64(max(0, count)))
    guard offset >= 0, offset <= end else { return nil }
    if end <= Int64(head.count) { return head[Int(offset)..<Int(end)] }
    let tailStart = size - Int64(tail.count)
    guard offset >= tailStart else { return nil }
    return tail[Int(offset - tailStart)..<Int(end - tailStart)]
  }

  /// Keeps the ends of an archive as it is written, in memory bounded by the limits.
  public struct Recorder: Sendable {
    private var head: [UInt8] = []
    private var tail: [UInt8] = []
    private var written: Int64 = 0

    /// Nothing recorded yet.
    public init() {}

    /// Records the next bytes written.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
      written += Int64(bytes.count)
      let toHead = min(bytes.count, ArchiveEnds.headLimit - head.count)
      if toHead > 0 { head.append(contentsOf: bytes[0..<toHead]) }
      let rest = UnsafeRawBufferPointer(rebasing: bytes[toHead...])
      let kept = rest.suffix(ArchiveEnds.tailLimit)
      tail.append(contentsOf: kept)
      // Trimmed now and then, not on every write: the tail grows to twice its limit at most.
      if tail.count > 2 * ArchiveEnds.tailLimit {
        tail.removeFirst(tail.count - ArchiveEnds.tailLimit)
      }
    }

    /// The ends of what was written.
    public var ends: ArchiveEnds {
      let tailCount = Int(min(Int64(ArchiveEnds.tailLimit), written - Int64(head.count)))
      return ArchiveEnds(size: written, head: head, tail: Array(tail.suffix(tailCount)))
    }
  }
}
