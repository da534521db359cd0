internal import Bytes
import Foundation
import LibArchive
import PropertyList
import Zstd

/// Single members of a framed archive (``FramedStream``), read where the index says they are
/// and nowhere else: the trailer (the last 32 bytes), the index's frame, then each member asked
/// for. What `graphvault find` reads of an archive, on a disk or in a bucket (ranged GETs).
///
/// Nothing read is trusted: the trailer must be one, a frame must be a zstd frame holding one
/// tar entry of the expected name, and a member's content must have the size and SHA-256 the
/// index gives. An archive that is not framed (another compression, encrypted, or written
/// before graphvault framed its archives) is reported as such (nil), for the caller to read it
/// whole instead. Like any plain archive, this guards against damage, not forgery: the index
/// itself can be rewritten by anyone.
package final class FramedArchive {
  /// One member as the index lists it.
  package struct Member: Sendable {
    /// Its path.
    package let path: String
    /// Its content's size.
    package let size: Int
    /// Its content's SHA-256, in hexadecimal.
    package let sha256: String
    /// Where its frame is.
    package let place: FramedStream.Place
    /// What it holds by key, when the index says (a chunk of objects).
    package let ranges: ChunkRanges?
    /// Its frames, when it is more than one (a chunk with large columns).
    package let frames: MemberFrames?
  }

  /// A member's content read in part (``read(_:columns:each:)``): the bytes of the columns not
  /// wanted are zeros, and `unread` says where they are.
  package struct Content {
    /// The content, as long as the member's.
    package let bytes: [UInt8]
    /// Where bytes were not read, in order; empty when all were (then `bytes` was checked
    /// against the index's SHA-256; else each frame read against its checksum).
    package let unread: [Range<Int>]
  }

  private let readBytes: (Int64, Int, inout [UInt8]) throws -> Void
  /// What messages call the archive.
  let name: String
  /// The last frame read, and the last member's content: storage kept from one read to the
  /// next (a chunk's few MiB are then allocated once, not once a member).
  private var frame: [UInt8] = []
  private var content: [UInt8] = []
  /// How many bytes of frames that follow each other one read may fetch (``read(_:each:)``);
  /// 0 reads each frame on its own.
  private let span: Int
  /// Frames fetched together, from `spanStart` on.
  private var spanBytes: [UInt8] = []
  private var spanStart: Int64 = 0
  /// The pieces of the file a ``read(_:columns:each:)`` reads, in order, and the first not
  /// fetched yet.
  private var plan: [FramedStream.Place] = []
  private var planNext = 0
  /// One frame decompressed, for a read in part.
  private var decompressed: [UInt8] = []
  /// Decompresses the frames of a read in part (made when first needed).
  private var zstd: ZstdFrames?
  /// On object storage, the most bytes between two pieces a read in part wants that are
  /// fetched along rather than skipped at the cost of another request, unless the read says
  /// otherwise. A request's latency (tens of milliseconds) buys about a MiB of transfer: a
  /// chunk's small untested columns and the small chunks between two wanted ones are read
  /// along, its covers skipped. The bounds of a chunk's values (``ChunkRanges/values``) keep
  /// the chunks a search reads few.
  package static let readThrough = 1 << 20
  /// The read-through of the plan being read, and the most bytes it fetches at once
  /// (``prefetch(_:)``).
  private var planReadThrough = readThrough
  private var planSpan: Int
  /// The index, as read.
  package let index: PropertyListValue
  /// The SHA-256 of the index member's content, in hexadecimal.
  package let indexDigest: String
  /// Every member but the index, in archive order.
  package let members: [Member]
  /// The bytes read from the archive so far.
  package private(set) var bytesRead: Int64 = 0
  /// The archive's size.
  package let size: Int64

  /// The framed archive of `size` bytes that `read` reads (`count` bytes at an offset into the
  /// array given, replacing what it held; fewer only at the end), called `name` in messages;
  /// nil when it is not framed.
  /// With a `span` (``ArchiveInput/preferredReadSpan``), the trailer and the index's frame
  /// are read together when the index is small, and frames that follow each other are read
  /// up to `span` bytes at once.
  /// - Throws: ``ArchiveFormatError`` when it claims to be framed and its index is damaged;
  ///   what `read` throws.
  package init?(
    size: Int64, name: String, span: Int = 0,
    read: @escaping (_ offset: Int64, _ count: Int, _ into: inout [UInt8]) throws -> Void
  ) throws {
    self.readBytes = read
    self.name = name
    self.span = span
    planSpan = span
    guard size > Int64(FramedStream.trailerSize) else { return nil }
    self.size = size
    // Where reads cost more than their bytes, the archive's last 1/256 (4 to 64 KiB): the
    // trailer and, mostly, the index's frame in one read.
    let tailSize = span > 0 ? min(max(size / 256, 4 << 10), 64 << 10, size) : 0
    var tail: [UInt8] = []
    if tailSize > 0 { try read(size - tailSize, Int(tailSize), &tail) }
    var trailer: [UInt8] = []
    if tail.count == Int(tailSize), tailSize > 0 {
      trailer = Array(tail.suffix(FramedStream.trailerSize))
    } else {
      try read(size - Int64(FramedStream.trailerSize), FramedStream.trailerSize, &trailer)
    }
    var consumed = Int64(max(tail.count, trailer.count))
    guard let place = FramedStream.indexPlace(fromTrailer: trailer, archiveSize: size) else {
      return nil
    }
    var indexBytes: [UInt8] = []
    var frame: [UInt8] = []
    let tailStart = size - Int64(tail.count)
    try Self.entry(
      { offset, count, into in
        guard !Self.take(offset, count, from: tail, at: tailStart, into: &into) else { return }
        try read(offset, count, &into)
        consumed += Int64(into.count)
      }, at: place, path: ArchiveLayout.index, limit: 64 << 20, name: name, frame: &frame,
      into: &indexBytes)
    bytesRead = consumed
    let index: PropertyListValue
    do {
      index = try PropertyListValue(binaryPropertyList: indexBytes)
    } catch {
      throw ArchiveFormatError(member: ArchiveLayout.index, "not a property list: \(error)")
    }
    var members: [Member] = []
    for entry in index["members"]?.arrayValue ?? [] {
      guard let path = entry["path"]?.stringValue, let size = entry["size"]?.integerValue,
        let sha256 = entry["sha256"]?.stringValue, let offset = entry["offset"]?.integerValue,
        let length = entry["length"]?.integerValue, size >= 0, offset >= 0, length > 0,
        offset + length <= place.offset
      else {
        throw ArchiveFormatError(
          member: ArchiveLayout.index, "a member's entry has no valid place in the archive")
      }
      let place = FramedStream.Place(offset: offset, length: length)
      members.append(
        Member(
          path: path, size: Int(size), sha256: sha256, place: place,
          ranges: try ChunkRanges(reading: entry, member: path),
          frames: try MemberFrames(reading: entry, member: path, place: place, size: Int(size))))
    }
    self.index = index
    self.indexDigest = Checksum.sha256(indexBytes)
    self.members = members
  }

  /// The member at `path`, read from its frame and checked against the index.
  /// - Throws: ``ArchiveFormatError`` when the index has no such member or its frame does not
  ///   hold it; ``StorageError`` when it cannot be read.
  package func member(_ path: String) throws -> [UInt8] {
    guard let position = members.firstIndex(where: { $0.path == path }) else {
      throw ArchiveFormatError(member: path, "the index of \(name) lists no such member")
    }
    // Where reads cost a request, one member of those before the objects (the header, read
    // to know what the archive is) is fetched with the others that follow it: what a read of
    // the store's members (``readStore()``) asks for next. Not within a read of members,
    // whose plan this would replace.
    if span > 0 && plan.isEmpty {
      plan = members[position...].prefix {
        ArchiveScanner.storeMembers.contains($0.path) && $0.path != ArchiveLayout.changes
      }.map(\.place)
      planNext = 0
      defer { plan.removeAll() }
      try prefetch(members[position].place)
    }
    return try read(members[position])
  }

  /// The content of each of `members` in turn, in the order given, as ``read(_:)`` gives it;
  /// frames that follow each other are read together, up to the archive's span at once.
  package func read(_ members: [Member], each body: (Member, [UInt8]) throws -> Void) throws {
    try read(members, columns: nil) { member, content in try body(member, content.bytes) }
  }

  /// The content of each of `members` in turn, in the order given: of a member in several
  /// frames (``MemberFrames``), only the frames of the columns `wanted` says yes to (by
  /// their keys) and those holding no column's values are read, each checked as it is
  /// decompressed; the others' bytes are zeros, and ``Content/unread`` says where. A member
  /// in one frame, or every member when `wanted` is nil, is read whole and checked against
  /// the index. Where the archive has a span, the pieces wanted that lie at most
  /// `readThrough` bytes apart are fetched together, up to the span (or `span`, when larger)
  /// at once: a reader that goes on to read whole the members whose tested columns it likes
  /// (``whole(_:given:)``) may ask for a read-through as large as the frames it skips, and
  /// then finds them fetched.
  package func read(
    _ members: [Member], columns wanted: ((String) -> Bool)?,
    readThrough: Int = FramedArchive.readThrough, span: Int = 0,
    each body: (Member, Content) throws -> Void
  ) throws {
    let perMember = members.map { pieces(of: $0, wanted: wanted) }
    plan = perMember.flatMap { $0 }
    planNext = 0
    planReadThrough = readThrough
    planSpan = self.span > 0 ? max(self.span, span) : 0
    defer {
      spanBytes.removeAll(keepingCapacity: true)
      plan.removeAll()
      planReadThrough = Self.readThrough
      planSpan = self.span
    }
    for (member, wantedPieces) in zip(members, perMember) {
      if let wanted, wantedPieces != [member.place] {
        try body(member, try read(member, wanted: wanted))
      } else {
        try prefetch(member.place)
        try body(member, Content(bytes: try read(member), unread: []))
      }
    }
  }

  /// Where the archive has a span, makes sure the window of bytes fetched holds `piece`:
  /// when it does not, fetches from the piece of the plan holding it on, with the pieces that
  /// follow it closely (the plan's read-through), up to the plan's span. A piece the plan does not hold is
  /// left to be read on its own.
  private func prefetch(_ piece: FramedStream.Place) throws {
    guard planSpan > 0, !covers(spanStart, spanBytes.count, piece) else { return }
    func holds(_ index: Int) -> Bool {
      plan[index].offset <= piece.offset
        && piece.offset + piece.length <= plan[index].offset + plan[index].length
    }
    guard
      let first = (planNext..<plan.count).first(where: holds) ?? plan.indices.first(where: holds)
    else { return }
    var end = plan[first].offset + plan[first].length
    var last = first + 1
    while last < plan.count, plan[last].offset >= end,
      plan[last].offset - end <= Int64(planReadThrough),
      plan[last].offset + plan[last].length - plan[first].offset <= Int64(planSpan)
    {
      end = plan[last].offset + plan[last].length
      last += 1
    }
    planNext = last
    spanStart = plan[first].offset
    try readBytes(spanStart, Int(end - spanStart), &spanBytes)
    bytesRead += Int64(spanBytes.count)
  }

  /// The pieces of the file `member` is read from: its frames (all of them, or all but those
  /// of the columns not `wanted`), those that follow each other together.
  private func pieces(of member: Member, wanted: ((String) -> Bool)?) -> [FramedStream.Place] {
    guard let wanted, let frames = member.frames else { return [member.place] }
    var pieces: [FramedStream.Place] = []
    var offset = member.place.offset
    for (number, frame) in frames.frames.enumerated() {
      defer { offset += frame.length }
      if let key = frames.columns[number], !wanted(key) { continue }
      if let last = pieces.last, last.offset + last.length == offset {
        pieces[pieces.count - 1] = FramedStream.Place(
          offset: last.offset, length: last.length + frame.length)
      } else {
        pieces.append(FramedStream.Place(offset: offset, length: frame.length))
      }
    }
    return pieces
  }

  private func covers(_ start: Int64, _ count: Int, _ piece: FramedStream.Place) -> Bool {
    piece.offset >= start && piece.offset + piece.length <= start + Int64(count)
  }

  /// `member`'s content with only the frames of the columns `wanted` read (the others'
  /// bytes zeros), each checked against its checksum and the size the index gives, and its tar
  /// header against the member's name and size. Each frame read is decompressed on its own and
  /// its part of the content copied in place: no buffer of the whole tar records.
  private func read(_ member: Member, wanted: (String) -> Bool) throws -> Content {
    guard let frames = member.frames else { return Content(bytes: try read(member), unread: []) }
    if zstd == nil { zstd = try ZstdFrames() }
    // Where the content begins in the member's tar records (``MemberFrames`` checked that the
    // frames hold at least one header before it).
    let contentStart =
      frames.frames.reduce(0) { $0 + $1.size } - (member.size + 511) / 512 * 512
    let contentEnd = contentStart + member.size
    content.removeAll(keepingCapacity: true)
    content.reserveCapacity(member.size)
    var header: [UInt8] = []
    var unread: [Range<Int>] = []
    var position = 0
    var offset = member.place.offset
    for (number, frame) in frames.frames.enumerated() {
      defer {
        offset += frame.length
        position += frame.size
      }
      // The part of the content this frame holds.
      let lower = max(position, contentStart)
      let upper = min(position + frame.size, contentEnd)
      if let key = frames.columns[number], !wanted(key) {
        guard position >= contentStart else {
          throw ArchiveFormatError(
            member: member.path,
            "the index calls its header in \(name) a column's values (damaged)")
        }
        if lower < upper {
          unread.append((lower - contentStart)..<(upper - contentStart))
          content.appendZeros(count: upper - lower)
        }
        continue
      }
      try prefetch(FramedStream.Place(offset: offset, length: frame.length))
      try fetch(offset, Int(frame.length), into: &self.frame)
      decompressed.removeAll(keepingCapacity: true)
      do {
        guard self.frame.count == Int(frame.length) else {
          throw ZstdError(kind: .corruptData, message: "the archive ends inside it")
        }
        try self.frame.withUnsafeBytes { bytes in
          try zstd!.decompress(bytes, limit: frame.size, appendingTo: &decompressed)
        }
      } catch {
        throw ArchiveFormatError(
          member: member.path,
          "frame \(number + 1) of its \(frames.frames.count) in \(name) is damaged: \(error)")
      }
      guard decompressed.count == frame.size else {
        throw ArchiveFormatError(
          member: member.path,
          "frame \(number + 1) of its \(frames.frames.count) in \(name) holds another size than the index gives"
        )
      }
      if position < contentStart {
        header.append(contentsOf: decompressed[..<min(frame.size, contentStart - position)])
      }
      if lower < upper {
        content.append(contentsOf: decompressed[(lower - position)..<(upper - position)])
      }
    }
    // The header must name the member and give its size.
    do {
      let reader = try ArchiveReader(bytes: header)
      guard let entry = try reader.nextEntry(), entry.path == member.path,
        entry.size == nil || entry.size == Int64(member.size)
      else {
        throw ArchiveFormatError(member: member.path, "its frames in \(name) hold another member")
      }
    } catch let error as ArchiveFormatError {
      throw error
    } catch {
      throw ArchiveFormatError(
        member: member.path, "its frames in \(name) cannot be read: \(error)")
    }
    return Content(bytes: content, unread: unread)
  }

  /// `member`'s content, read from its frame and checked against the index. Its storage is
  /// used again by the next read once the caller lets go of it.
  package func read(_ member: Member) throws -> [UInt8] {
    try Self.entry(
      { [self] offset, count, into in try fetch(offset, count, into: &into) },
      at: member.place, path: member.path, limit: member.size, name: name,
      frame: &frame, into: &content)
    guard content.count == member.size, Checksum.sha256(content) == member.sha256 else {
      throw ArchiveFormatError(
        member: member.path, "damaged: its size or SHA-256 differs from the index")
    }
    return content
  }

  /// The whole content of `member`, given what a read of some of its columns gave: that, when
  /// it read every byte, else the member read again whole (and checked against the index),
  /// from the bytes that read fetched when they hold it.
  package func whole(_ member: Member, given content: Content) throws -> [UInt8] {
    content.unread.isEmpty ? content.bytes : try read(member)
  }

  /// Fills `into` with the `count` bytes at `offset`: from the window fetched when it holds
  /// them, else read (and counted).
  private func fetch(_ offset: Int64, _ count: Int, into: inout [UInt8]) throws {
    guard !Self.take(offset, count, from: spanBytes, at: spanStart, into: &into) else { return }
    try readBytes(offset, count, &into)
    bytesRead += Int64(into.count)
  }

  /// Fills `into` with the `count` bytes at `offset` from `window` (bytes read from `start`
  /// on), when it holds them all.
  /// - Returns: whether it did (else nothing was changed).
  private static func take(
    _ offset: Int64, _ count: Int, from window: [UInt8], at start: Int64, into: inout [UInt8]
  ) -> Bool {
    guard offset >= start, offset + Int64(count) <= start + Int64(window.count) else {
      return false
    }
    let from = Int(offset - start)
    into.removeAll(keepingCapacity: true)
    into.append(contentsOf: window[from..<from + count])
    return true
  }

  /// Reads into `content` the one tar entry, `path`, of the zstd frame at `place` (read into
  /// `frame`).
  private static func entry(
    _ read: (Int64, Int, inout [UInt8]) throws -> Void, at place: FramedStream.Place,
    path: String, limit: Int, name: String, frame: inout [UInt8], into content: inout [UInt8]
  ) throws {
    try read(place.offset, Int(place.length), &frame)
    guard frame.count == Int(place.length), frame.starts(with: [0x28, 0xB5, 0x2F, 0xFD]) else {
      throw ArchiveFormatError(member: path, "its frame in \(name) is not a zstd frame")
    }
    do {
      // The reader shares the frame's storage until it is gone, at the end of this scope.
      let reader = try ArchiveReader(bytes: frame)
      guard let entry = try reader.nextEntry(), entry.path == path else {
        throw ArchiveFormatError(member: path, "its frame in \(name) holds another member")
      }
      try reader.readAll(limit: limit, into: &content)
    } catch let error as ArchiveFormatError {
      throw error
    } catch {
      throw ArchiveFormatError(member: path, "its frame in \(name) cannot be read: \(error)")
    }
  }
}
