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

extension ArchiveAccess {
  /// How far a read of an archive's header and index from its start goes with the members
  /// between them.
  enum MemberDepth {
    /// Passed over, not decoded (`list`).
    case skipped
    /// Each hashed and checked against the index: sizes and SHA-256, a sealed member
    /// authenticated (`prune`, and every read with `--read-data`); the index must be last, and
    /// both header and index there.
    case checked
  }

  /// What a read of an archive from its start found: its header and index (when there), how
  /// many bytes it read and whether the archive is sealed, as far as it got.
  struct StreamedEnds {
    var header: ArchiveHeader?
    var index: PropertyListValue?
    var bytesRead: Int64 = 0
    var encrypted = false
  }

  /// Reads the header and index of the archive at `location` from its start, the members
  /// between them as `depth` says, into `read` (filled as far as the read got, when it throws).
  /// - Throws: what reading the archive throws; with `.checked`, an archive without a header
  ///   or an index, a member after the index, and members that do not match the index.
  static func readFromStart(
    _ location: Location, depth: MemberDepth, password: PasswordSource?,
    allowingUnencrypted: Bool, meter: ProgressMeter? = nil, into read: inout StreamedEnds
  ) throws {
    let reader = try reader(location, meter: meter)
    let stream = members(
      of: reader, at: location, password: password, allowingUnencrypted: allowingUnencrypted)
    defer {
      read.bytesRead = reader.archiveOffset
      read.encrypted = stream.isSealed
    }
    var seen: [(path: String, size: Int, sha256: String)] = []
    let wanted: (String) -> Bool = { $0 == ArchiveLayout.header || $0 == ArchiveLayout.index }
    while let member = try stream.next(hash: depth == .checked, wantBytes: wanted) {
      if depth == .checked && read.index != nil {
        throw VaultError(.invalidInput, "\(member.path) follows index.plist, which must be last")
      }
      if let bytes = member.bytes {
        let value = try propertyList(bytes, member: member.path)
        if member.path == ArchiveLayout.index {
          read.index = value
          continue
        }
        read.header = ArchiveHeader(reading: value)
      }
      if depth == .checked { seen.append((member.path, member.size, member.sha256 ?? "")) }
    }
    guard depth == .checked else { return }
    guard read.header != nil else {
      throw VaultError(.invalidInput, "not a graphvault archive (no graphvault.plist)")
    }
    guard let index = read.index else {
      throw VaultError(
        .invalidInput,
        "incomplete: it has no index.plist (the backup was interrupted, or the file is truncated)")
    }
    try ArchiveIndex.checkMembers(index, against: seen)
  }
}
