import ArchiveFormat
import ArchiveStorage
import PropertyList

extension ArchiveAccess {
  /// The header and index of the archive at `location`, read from its two ends where it can be:
  /// first through the copy of its ends its backend keeps (when `listed` says which archive
  /// its backend listed), then from the archive by ranged reads: a framed archive's trailer,
  /// index and header (checked against the index), an encrypted one's clear header and the
  /// index its trailer places (``SealedSummary``).
  ///
  /// Anything amiss in a copy of the ends passes it over for the archive. An encrypted
  /// archive whose ends lead nowhere is left to be read from its start, which says what is
  /// wrong with it, if anything.
  /// - Returns: nil when the archive must be read from its start: standard input, another
  ///   compression, an archive written before trailers.
  /// - Throws: a framed archive's damaged header or index; a plain archive when `password` is
  ///   given, unless `allowingUnencrypted`; an encrypted one's missing or wrong password.
  static func readEnds(
    _ location: Location, listed: (archive: StoredArchive, backend: any StorageBackend)?,
    password: PasswordSource?, allowingUnencrypted: Bool
  ) throws -> ArchiveEndsRead? {
    guard !location.isStandardStream else { return nil }
    let path = location.description
    // What its backend gives for a summary: a copy of its ends, or the archive itself.
    let given = listed.flatMap { try? $0.backend.openForSummary($0.archive) }
    if let copy = given as? ArchiveEndsInput {
      if let framed = try? framed(
        copy, name: path, password: password, allowingUnencrypted: allowingUnencrypted,
        incremental: true),
        let read = try? ends(of: framed, through: copy)
      {
        return read
      }
      if let read = try sealedEnds(copy, name: path, password: password) {
        return read
      }
    }
    let archive: any ArchiveInput
    if let given, !(given is ArchiveEndsInput) {
      archive = given
    } else {
      let (backend, name) = try location.archive()
      archive = try backend.openForReading(name)
    }
    let input = try endRead(archive)
    if let framed = try framed(
      input, name: path, password: password, allowingUnencrypted: allowingUnencrypted,
      incremental: true)
    {
      return try ends(of: framed, through: input as? ArchiveEndsInput)
    }
    return try sealedEnds(input, name: path, password: password)
  }

  /// `input`, with its end read once where each read is a request of its own (object
  /// storage) and served from memory to whichever trailer's reader asks (a framed archive's,
  /// then an encrypted one's); on a disk, as it is.
  private static func endRead(_ input: any ArchiveInput) throws -> any ArchiveInput {
    guard input.preferredReadSpan > 0, let size = input.size else { return input }
    let count = Int(min(size, Int64(SealedSummary.tailRead)))
    let tail = try input.read(at: size - Int64(count), count: count)
    return ArchiveEndsInput(
      ends: ArchiveEnds(size: size, head: [], tail: tail), fetched: Int64(tail.count),
      span: input.preferredReadSpan, opened: input)
  }

  /// A framed archive's header (checked against its index) and index, with the bytes that
  /// took: what `ends` (the archive's ends held in memory) fetched when it was read through
  /// them, else what was read of it.
  private static func ends(of framed: FramedArchive, through ends: ArchiveEndsInput?) throws
    -> ArchiveEndsRead
  {
    let header = try header(of: framed)
    return ArchiveEndsRead(
      header: header, index: framed.index, bytesRead: ends?.fetched ?? framed.bytesRead,
      encrypted: false, size: framed.size)
  }

  /// The header and index of the encrypted archive `input` reads, from its two ends
  /// (``SealedSummary``), with the bytes that took (what `input` fetched, when it holds the
  /// archive's ends in memory). Nil when it ends with no trailer, or when what its ends give
  /// is amiss.
  /// - Throws: ``ArchiveFormatError`` for a missing or wrong password, naming the archive.
  private static func sealedEnds(
    _ input: any ArchiveInput, name: String, password: PasswordSource?
  ) throws -> ArchiveEndsRead? {
    guard let size = input.size else { return nil }
    let sealed: SealedSummary?
    do {
      sealed = try SealedSummary.read(
        size: size, name: name, read: { try input.read(at: $0, count: $1) },
        password: { try password?.read() })
    } catch let error as ArchiveFormatError
      where error.kind == .passwordRequired || error.kind == .wrongPassword
    {
      throw ArchiveFormatError(member: error.member, "\(error.detail) (\(name))", kind: error.kind)
    } catch {
      return nil
    }
    guard let sealed,
      let header = try? propertyList(sealed.header, member: ArchiveLayout.header)
    else { return nil }
    return ArchiveEndsRead(
      header: ArchiveHeader(reading: header), index: sealed.index,
      bytesRead: (input as? ArchiveEndsInput)?.fetched ?? sealed.bytesRead, encrypted: true,
      size: size)
  }
}
