import ArchiveFormat
import ArchiveStorage
import PropertyList

extension ArchiveAccess {
  /// The header and index of the archive at `path`, read from its two ends where it can be:
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
    _ path: String, listed: (archive: StoredArchive, backend: any StorageBackend)?,
    password: PasswordSource?, allowingUnencrypted: Bool
  ) throws -> ArchiveEndsRead? {
    guard !isStandardStream(path) else { return nil }
    if let listed,
      let input = try? listed.backend.openForSummary(listed.archive) as? ArchiveEndsInput
    {
      if let framed = try? framed(
        input, name: path, password: password, allowingUnencrypted: allowingUnencrypted,
        incremental: true),
        let read = try? ends(of: framed, fetched: input.fetched)
      {
        return read
      }
      if let read = try sealedEnds(input, name: path, password: password, fetched: input.fetched) {
        return read
      }
    }
    let (backend, name) = try locate(path)
    let input = try backend.openForReading(name)
    if let framed = try framed(
      input, name: path, password: password, allowingUnencrypted: allowingUnencrypted,
      incremental: true)
    {
      return try ends(of: framed, fetched: nil)
    }
    return try sealedEnds(input, name: path, password: password, fetched: nil)
  }

  /// A framed archive's header (checked against its index) and index; `fetched` bytes when
  /// read through a copy of its ends, else what was read of it.
  private static func ends(of framed: FramedArchive, fetched: Int64?) throws -> ArchiveEndsRead {
    ArchiveEndsRead(
      header: try header(of: framed), index: framed.index,
      bytesRead: fetched ?? framed.bytesRead, encrypted: false, size: framed.size)
  }

  /// The header and index of the encrypted archive `input` reads, from its two ends
  /// (``SealedSummary``); `fetched` bytes when read through a copy of its ends, else what was
  /// read of it. Nil when it ends with no trailer, or when what its ends give is amiss.
  /// - Throws: ``ArchiveFormatError`` for a missing or wrong password, naming the archive.
  private static func sealedEnds(
    _ input: any ArchiveInput, name: String, password: PasswordSource?, fetched: Int64?
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
      bytesRead: fetched ?? sealed.bytesRead, encrypted: true, size: size)
  }
}
