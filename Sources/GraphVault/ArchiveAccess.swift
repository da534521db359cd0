import ArchiveFormat
import ArchiveStorage
import Foundation
import LibArchive
import PropertyList
import S3

/// Archives at the locations users give (``Location``): each reached through its storage
/// backend, read by parts or as a stream.
enum ArchiveAccess {

  /// `input` (called `name`) read by parts as a framed archive (``FramedArchive``); nil when
  /// it is not one, or, unless `incremental`, when it is an incremental archive (whose content
  /// is read with its chain, whole). As when an archive is read whole, a plain archive is
  /// refused (77) when a password was given, unless `allowingUnencrypted`.
  static func framed(
    _ input: any ArchiveInput, name: String, password: PasswordSource?,
    allowingUnencrypted: Bool, incremental: Bool = false
  ) throws -> FramedArchive? {
    guard let size = input.size,
      let framed = try FramedArchive(
        size: size, name: name, span: input.preferredReadSpan,
        read: { try input.read(at: $0, count: $1, into: &$2) })
    else { return nil }
    if password != nil && !allowingUnencrypted {
      throw ArchiveFormatError(
        member: ArchiveLayout.header, MemberStream.notEncrypted, kind: .notEncrypted)
    }
    if !incremental, (try? header(of: framed))?.isIncremental == true { return nil }
    return framed
  }

  /// The header of a framed archive, read from its frame and checked against the index.
  /// - Throws: ``ArchiveFormatError`` when it is not there or not a property list.
  static func header(of framed: FramedArchive) throws -> ArchiveHeader {
    ArchiveHeader(
      reading: try propertyList(framed.member(ArchiveLayout.header), member: ArchiveLayout.header))
  }

  /// The archive at `location` read by parts as a framed archive (``framed(_:name:password:allowingUnencrypted:incremental:)``),
  /// or nil for standard input and an archive that is not framed (encrypted, another
  /// compression, or truncated).
  static func framed(
    _ location: Location, password: PasswordSource?, allowingUnencrypted: Bool,
    incremental: Bool = false
  ) throws -> FramedArchive? {
    guard !location.isStandardStream else { return nil }
    let (backend, name) = try location.archive()
    return try framed(
      try backend.openForReading(name), name: location.description, password: password,
      allowingUnencrypted: allowingUnencrypted, incremental: incremental)
  }

  /// The property list a member `member` holds in `bytes`.
  /// - Throws: ``ArchiveFormatError`` naming the member when it is not one.
  static func propertyList(_ bytes: [UInt8], member: String) throws -> PropertyListValue {
    do {
      return try PropertyListValue(binaryPropertyList: bytes)
    } catch {
      throw ArchiveFormatError(member: member, "not a valid property list: \(error)")
    }
  }

  /// A framed archive's trailer (its last 32 bytes, when they claim to be one) must say where
  /// the index's frame is: right after the last member the index places. An encrypted
  /// archive's (``SealedTrailer``) must place the index's records right before the
  /// end-of-archive blocks, hold a tar entry `index.plist` there, and give the index's
  /// position (the number of members it lists). Verify and restore both hold an archive to
  /// it, so that what verify accepts, find, list and prune can read by parts. Not checked on
  /// standard input, which cannot be read out of order.
  /// - Returns: the problem, or nil.
  static func trailerProblem(_ location: Location, index: PropertyListValue) throws -> String? {
    guard !location.isStandardStream else { return nil }
    let (backend, name) = try location.archive()
    let input = try backend.openForReading(name)
    guard let size = input.size, size > Int64(FramedStream.trailerSize) else { return nil }
    let trailer = try input.read(
      at: size - Int64(FramedStream.trailerSize), count: FramedStream.trailerSize)
    let damaged = "\(ArchiveLayout.index): the trailer does not say where the index is (damaged)"
    if SealedTrailer.claimed(trailer) {
      let members = Int64(index["members"]?.arrayValue?.count ?? -1)
      guard let sealed = SealedTrailer(trailer, archiveSize: size),
        sealed.position == UInt64(max(0, members)), members > 0,
        let records = try? input.read(at: sealed.offset, count: Int(min(sealed.length, 8_192))),
        let reader = try? ArchiveReader(bytes: records + [UInt8](repeating: 0, count: 1_024)),
        (try? reader.nextEntry())??.path == ArchiveLayout.index
      else { return damaged }
      return nil
    }
    guard let expected = ArchiveIndex.framedIndexOffset(index),
      FramedStream.claimsTrailer(trailer)
    else { return nil }
    guard let place = FramedStream.indexPlace(fromTrailer: trailer, archiveSize: size),
      place.offset == expected
    else { return damaged }
    return nil
  }

  /// Throws 65 naming `location` when the trailer of the archive whose index is `index` does
  /// not say where the index is (``trailerProblem(_:index:)``); nothing without an index.
  static func checkTrailer(_ location: Location, index: PropertyListValue?) throws {
    if let index, let problem = try trailerProblem(location, index: index) {
      throw VaultError(.invalidInput, "\(problem) (\(location))")
    }
  }

  /// `body`, with a malformed archive's problem named with the archive at `location` (65).
  static func reading<T>(_ location: Location, _ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch let error as ArchiveFormatError {
      guard error.kind == .malformed else { throw error }
      // A sealed member's problem names the archive already.
      let path = location.description
      let detail =
        error.description.contains(path) ? error.description : "\(error.description) (\(path))"
      throw VaultError(.invalidInput, detail, cause: error)
    }
  }

  /// A reader of the archive at `location`, streamed from its backend (or standard input);
  /// the bytes read (and, when known, the archive's size) go to `meter`.
  /// - Throws: ``StorageError`` or ``ArchiveError``.
  static func reader(_ location: Location, meter: ProgressMeter? = nil) throws -> ArchiveReader {
    let input: any ArchiveInput
    if location.isStandardStream {
      input = StandardStream.input()
    } else {
      let (backend, name) = try location.archive()
      input = try backend.openForReading(name)
    }
    // A total set before (prune: every archive's bytes) stands.
    if meter?.snapshot().bytesTotal == nil { meter?.setTotal(bytes: input.size) }
    return try ArchiveReader(name: location.displayName) { buffer in
      let count = try input.read(into: buffer)
      meter?.add(bytes: Int64(count))
      return count
    }
  }

  /// Whether `password` opens the archive at `location`: the password's problem when it does not
  /// (``ArchiveFormatError/Kind/passwordRequired``, ``ArchiveFormatError/Kind/wrongPassword``),
  /// nil when it does, the archive is plain, or it cannot be read for another reason. Reads
  /// the archive's first member only.
  static func passwordProblem(_ location: Location, password: PasswordSource?)
    -> ArchiveFormatError.Kind?
  {
    do {
      let stream = try members(location, password: password, allowingUnencrypted: true)
      _ = try stream.next(hash: false) { $0 == ArchiveLayout.header }
      return nil
    } catch let error as ArchiveFormatError {
      return error.kind == .malformed ? nil : error.kind
    } catch {
      return nil
    }
  }

  /// The members of the archive at `location`, opened with the password from `password` when
  /// the archive is sealed (the password is read only then). With a password and without
  /// `allowingUnencrypted`, an archive that is not encrypted is refused (77).
  static func members(
    _ location: Location, password: PasswordSource?, allowingUnencrypted: Bool = false,
    meter: ProgressMeter? = nil
  ) throws -> MemberStream {
    members(
      of: try reader(location, meter: meter), at: location, password: password,
      allowingUnencrypted: allowingUnencrypted)
  }

  /// The members `reader` reads of the archive at `location`, as
  /// ``members(_:password:allowingUnencrypted:meter:)`` gives them: for a caller that also asks
  /// the reader how far it read.
  static func members(
    of reader: ArchiveReader, at location: Location, password: PasswordSource?,
    allowingUnencrypted: Bool
  ) -> MemberStream {
    MemberStream(
      reader: reader, name: location.displayName,
      requiresSeal: password != nil && !allowingUnencrypted
    ) { () throws -> [UInt8]? in
      try password?.read()
    }
  }

  /// Throws ``VaultError/Kind/inputMissing`` unless `location` is standard input, object
  /// storage (asked when read), or an existing file.
  static func requireInput(_ location: Location) throws(VaultError) {
    guard location.mayExist else {
      throw VaultError(.inputMissing, "no archive at this path (\(location))")
    }
  }
}
