import LibArchive
import PropertyList

/// An encrypted archive's real header and index, read from its two ends: the clear header
/// from its start, the index from where its trailer (``SealedTrailer``) says, opened at the
/// position the trailer gives. What `list` and `prune` need, without reading (and opening)
/// every member between.
///
/// The header is checked against the index (its size and SHA-256), as a framed archive's is;
/// both are authenticated, so a forged trailer can only make the index fail to open.
package struct SealedSummary {
  /// The real header's content.
  package let header: [UInt8]
  /// The index.
  package let index: PropertyListValue
  /// The bytes read of the archive.
  package let bytesRead: Int64

  /// How much of an archive's end is read first: the trailer, and in most archives the
  /// index's records with it.
  package static let tailRead = 64 << 10
  /// How much of its start: the clear header's records.
  static let headRead = 16 << 10
  /// The largest clear header or index read.
  static let limit = 64 << 20

  /// Reads the header and index of the archive of `size` bytes that `read` reads (offset,
  /// count), called `name` in messages, with the password `password` gives.
  /// - Returns: nil when the archive ends with no trailer (not encrypted, or written before
  ///   encrypted archives had one): it must be read from its start.
  /// - Throws: ``ArchiveFormatError``: no password, or a wrong one (their kinds), a clear
  ///   header, an index or a trailer that is not what it should be, a header the index does
  ///   not list; or what `read` and `password` throw.
  package static func read(
    size: Int64, name: String, read: (Int64, Int) throws -> [UInt8],
    password: () throws -> [UInt8]?
  ) throws -> SealedSummary? {
    var bytesRead: Int64 = 0
    func fetch(_ offset: Int64, _ count: Int) throws -> [UInt8] {
      let bytes = try read(offset, count)
      bytesRead += Int64(bytes.count)
      return bytes
    }
    let tailCount = Int(min(size, Int64(tailRead)))
    let tailStart = size - Int64(tailCount)
    let tail = try fetch(tailStart, tailCount)
    guard tail.count == tailCount, let trailer = SealedTrailer(tail.suffix(32), archiveSize: size)
    else { return nil }
    func damaged(_ member: String, _ detail: String) -> ArchiveFormatError {
      ArchiveFormatError(member: member, "\(detail) (\(name))")
    }

    // The clear header: the first member, in the first bytes.
    var head = try fetch(0, Int(min(size, Int64(headRead))))
    var clear: [UInt8]
    do {
      clear = try firstMember(head, named: ArchiveLayout.header)
    } catch  where head.count < size && head.count < limit {
      head = try fetch(0, Int(min(size, Int64(limit))))
      clear = try firstMember(head, named: ArchiveLayout.header)
    }
    guard let clearHeader = try? PropertyListValue(binaryPropertyList: clear),
      let (seal, header) = try ArchiveSeal.opening(
        clearHeader: clearHeader, password: password, limit: limit)
    else {
      throw damaged(ArchiveLayout.header, "the archive has a sealed trailer but no clear header")
    }

    // The index: its records, where the trailer says, opened at its position.
    let records =
      trailer.offset >= tailStart
      ? Array(
        tail[Int(trailer.offset - tailStart)..<Int(trailer.offset - tailStart + trailer.length)])
      : try fetch(trailer.offset, Int(trailer.length))
    let sealedIndex = try firstMember(records, named: ArchiveLayout.index)
    let content = try seal.open(
      sealedIndex, path: ArchiveLayout.index, position: trailer.position, limit: limit)
    guard let index = try? PropertyListValue(binaryPropertyList: content) else {
      throw damaged(ArchiveLayout.index, "not a valid property list")
    }
    let listed = index["members"]?.arrayValue?.first
    guard listed?["path"]?.stringValue == ArchiveLayout.header,
      listed?["size"]?.integerValue == Int64(header.count),
      listed?["sha256"]?.stringValue == Checksum.sha256(header)
    else {
      throw damaged(ArchiveLayout.header, "the index does not list this header first (damaged)")
    }
    return SealedSummary(header: header, index: index, bytesRead: bytesRead)
  }

  /// The content of the first tar entry in `records`, which must be `path`.
  private static func firstMember(_ records: [UInt8], named path: String) throws -> [UInt8] {
    do {
      let reader = try ArchiveReader(bytes: records)
      guard let entry = try reader.nextEntry(), entry.path == path else {
        throw ArchiveFormatError(member: path, "the place given holds another member")
      }
      return try reader.readAll(limit: limit)
    } catch let error as ArchiveFormatError {
      throw error
    } catch {
      throw ArchiveFormatError(member: path, "cannot be read where it should be: \(error)")
    }
  }
}
