import Foundation
import Zstd

/// The tar stream of a plain zstd archive, compressed one member at a time: each member (its
/// tar headers, content and padding) is one zstd frame, the end-of-archive blocks a last one,
/// and a zstd skippable frame after them says where the index's frame is. Any zstd reader
/// decompresses the whole (frames follow each other; skippable frames are skipped); a reader
/// that knows where a member's frame is reads and decompresses it alone, which is how
/// `graphvault find` reads a few members of a remote archive.
///
/// The archive writer hands its bytes to ``append(_:)`` as it produces them; ``cut()`` after
/// each member compresses them into a frame and says where it went; ``finish(index:)`` after
/// the archive is closed writes its end and the trailer. A chunk's large columns may each be
/// given a frame of their own (``cut(contentSize:spans:)``, ``MemberFrames``).
///
/// Every frame records its content size and checksum (XXH64), so that a frame read alone is
/// checked for damage as it is decompressed.
package final class FramedStream: @unchecked Sendable {
  /// Where a member's frame is in the archive file.
  package struct Place: Sendable, Equatable {
    /// The frame's first byte.
    package let offset: Int64
    /// The frame's size in bytes.
    package let length: Int64

    package init(offset: Int64, length: Int64) {
      self.offset = offset
      self.length = length
    }
  }

  /// The skippable frame's magic number (zstd reserves 0x184D2A50–0x184D2A5F).
  static let trailerMagic: UInt32 = 0x184D_2A5E
  /// What the trailer's content begins with.
  static let trailerTag = Array("GVIX".utf8)
  /// The trailer's size: magic, content size, then tag, version, offset and length.
  package static let trailerSize = 32

  private let emit: (UnsafeRawBufferPointer) throws -> Void
  private var pending: [UInt8] = []
  /// The bytes emitted so far.
  private(set) var written: Int64 = 0
  /// One compression context for every frame (used on the thread that cuts).
  private let zstd: ZstdFrames

  /// A stream whose compressed bytes go to `emit`.
  /// - Throws: ``ZstdError`` when libzstd cannot make its context.
  package init(emit: @escaping (UnsafeRawBufferPointer) throws -> Void) throws {
    self.emit = emit
    self.zstd = try ZstdFrames(level: 3)
  }

  /// Takes bytes of the tar stream.
  package func append(_ bytes: UnsafeRawBufferPointer) {
    pending.append(contentsOf: bytes)
  }

  /// Compresses what came since the last cut into one frame and writes it.
  /// - Returns: where the frame is.
  package func cut() throws -> Place {
    try cut(contentSize: 0, spans: []).place
  }

  /// Compresses what came since the last cut (one member's tar records, its content of
  /// `contentSize` bytes last but for the padding) into frames and writes them: one for each
  /// of `spans` (offsets into the content, in order, apart) and one for the bytes before,
  /// between and after them; a single frame when there are no spans.
  /// - Returns: where the frames are, together, and each of them when there are several.
  package func cut(contentSize: Int, spans: [ColumnSpan]) throws -> (
    place: Place, frames: MemberFrames?
  ) {
    let contentStart = pending.count - (contentSize + 511) / 512 * 512
    var cuts: [(range: Range<Int>, column: String?)] = []
    var next = 0
    for span in spans {
      let range = (span.range.lowerBound + contentStart)..<(span.range.upperBound + contentStart)
      guard contentStart >= 0, range.lowerBound > next, range.upperBound < pending.count else {
        continue
      }
      cuts.append((next..<range.lowerBound, nil))
      cuts.append((range, span.key))
      next = range.upperBound
    }
    cuts.append((next..<pending.count, nil))
    let start = written
    var frames: [MemberFrames.Frame] = []
    var columns: [Int: String] = [:]
    try pending.withUnsafeBytes { bytes in
      for (range, column) in cuts {
        let frame = try zstd.compress(UnsafeRawBufferPointer(rebasing: bytes[range]))
        try frame.withUnsafeBytes { try emit($0) }
        written += Int64(frame.count)
        if let column { columns[frames.count] = column }
        frames.append(MemberFrames.Frame(length: Int64(frame.count), size: range.count))
      }
    }
    pending.removeAll(keepingCapacity: pending.count <= 1 << 23)
    let place = Place(offset: start, length: written - start)
    return (place, frames.count > 1 ? MemberFrames(frames: frames, columns: columns) : nil)
  }

  /// Writes the end of the archive (what came after the last cut) as a frame, then the
  /// trailer naming `index`'s frame.
  package func finish(index: Place) throws {
    _ = try cut()
    let trailer = Self.trailer(index)
    try trailer.withUnsafeBytes { try emit($0) }
    written += Int64(trailer.count)
  }

  /// The skippable frame that ends a framed archive: magic (4 bytes), content size (4, 24),
  /// `GVIX`, version 1 (4), the index frame's offset (8) and length (8), all little-endian.
  package static func trailer(_ index: Place) -> [UInt8] {
    var bytes: [UInt8] = []
    func append<T: FixedWidthInteger>(_ value: T) {
      withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }
    append(trailerMagic)
    append(UInt32(24))
    bytes.append(contentsOf: trailerTag)
    append(UInt32(1))
    append(UInt64(index.offset))
    append(UInt64(index.length))
    return bytes
  }

  /// Whether an archive's last ``trailerSize`` bytes claim to be a framed archive's trailer
  /// (its magic number and tag), whatever place they give.
  package static func claimsTrailer(_ bytes: [UInt8]) -> Bool {
    bytes.count == trailerSize && Array(bytes[0..<4]) == [0x5E, 0x2A, 0x4D, 0x18]
      && Array(bytes[8..<12]) == trailerTag
  }

  /// The index's place, read from an archive's last ``trailerSize`` bytes; nil when they are
  /// not a framed archive's trailer (another compression, or an archive written before
  /// graphvault framed its archives).
  package static func indexPlace(fromTrailer bytes: [UInt8], archiveSize: Int64) -> Place? {
    guard bytes.count == trailerSize else { return nil }
    func integer<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
      var value: T = 0
      for index in (0..<MemoryLayout<T>.size).reversed() {
        value = value << 8 | T(bytes[offset + index])
      }
      return value
    }
    guard integer(UInt32.self, at: 0) == trailerMagic, integer(UInt32.self, at: 4) == 24,
      Array(bytes[8..<12]) == trailerTag, integer(UInt32.self, at: 12) == 1
    else { return nil }
    let offset = integer(UInt64.self, at: 16)
    let length = integer(UInt64.self, at: 24)
    let end = archiveSize - Int64(trailerSize)
    guard offset < UInt64(max(end, 0)), length > 0, length <= UInt64(end) - offset else {
      return nil
    }
    return Place(offset: Int64(offset), length: Int64(length))
  }
}
