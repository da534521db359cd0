import ArchiveFormat
import ArchiveStorage
import PropertyList

/// An archive's header and index, read from its two ends: what `list` and `prune` decide from.
struct ArchiveEndsRead {
  /// The header.
  let header: ArchiveHeader
  /// The index.
  let index: PropertyListValue
  /// The bytes read (or fetched, through a copy of the archive's ends).
  let bytesRead: Int64
  /// Whether the archive is encrypted.
  let encrypted: Bool
  /// The archive's size, when its input knows it.
  let size: Int64?
}

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
        let header = try? header(of: framed)
      {
        return ArchiveEndsRead(
          header: header, index: framed.index, bytesRead: input.fetched, encrypted: false,
          size: input.size)
      }
      if let sealed = try sealedSummary(input, name: path, password: password) {
        return ArchiveEndsRead(
          header: ArchiveHeader(
            reading: try propertyList(sealed.header, member: ArchiveLayout.header)),
          index: sealed.index, bytesRead: input.fetched, encrypted: true, size: input.size)
      }
    }
    let (backend, name) = try locate(path)
    let input = try backend.openForReading(name)
    if let framed = try framed(
      input, name: path, password: password, allowingUnencrypted: allowingUnencrypted,
      incremental: true)
    {
      return ArchiveEndsRead(
        header: try header(of: framed), index: framed.index, bytesRead: framed.bytesRead,
        encrypted: false, size: input.size)
    }
    guard let sealed = try sealedSummary(input, name: path, password: password) else {
      return nil
    }
    return ArchiveEndsRead(
      header: ArchiveHeader(reading: try propertyList(sealed.header, member: ArchiveLayout.header)),
      index: sealed.index, bytesRead: sealed.bytesRead, encrypted: true, size: input.size)
  }

  /// The header and index of the encrypted archive `input` reads, from its two ends
  /// (``SealedSummary``); nil when it ends with no trailer, or when what its ends give is
  /// amiss.
  /// - Throws: ``ArchiveFormatError`` for a missing or wrong password, naming the archive.
  private static func sealedSummary(
    _ input: any ArchiveInput, name: String, password: PasswordSource?
  ) throws -> SealedSummary? {
    guard let size = input.size else { return nil }
    do {
      return try SealedSummary.read(
        size: size, name: name, read: { try input.read(at: $0, count: $1) },
        password: { try password?.read() })
    } catch let error as ArchiveFormatError
      where error.kind == .passwordRequired || error.kind == .wrongPassword
    {
      throw ArchiveFormatError(member: error.member, "\(error.detail) (\(name))", kind: error.kind)
    } catch {
      return nil
    }
  }
}
