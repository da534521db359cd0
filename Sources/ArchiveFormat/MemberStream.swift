import Crypto
import LibArchive
import PropertyList

/// An archive's members in the order they were written, as their writer gave them: a plain
/// archive's entries as they are, a sealed archive's opened (the first member given is the real
/// header, opened from inside the clear one).
package final class MemberStream {
  /// One member as read.
  package struct Member {
    /// Its path (`objects/Book/000001.plist`).
    package let path: String
    /// Its bytes, when asked for.
    package let bytes: [UInt8]?
    /// Its size in bytes.
    package let size: Int
    /// Its SHA-256 (hex), when asked for.
    package let sha256: String?

    /// A member at `path` of `size` bytes, with its bytes and hash when read.
    package init(path: String, bytes: [UInt8]?, size: Int, sha256: String?) {
      self.path = path
      self.bytes = bytes
      self.size = size
      self.sha256 = sha256
    }
  }

  /// Gives the password, asked only when the archive turns out to be sealed.
  package typealias PasswordProvider = () throws -> [UInt8]?

  private let reader: ArchiveReader
  private let name: String
  private let password: PasswordProvider?
  private let requiresSeal: Bool

  /// Why an archive that is not encrypted is refused when a password was given.
  package static let notEncrypted =
    "a password was given but the archive is not encrypted: anyone could have written it (pass --allow-unencrypted to read it all the same)"
  private var started = false
  private var seal: ArchiveSeal?
  private var position: UInt64 = 0
  /// The largest member accepted, in memory.
  private let limit = 256 << 20
  /// The last member's content (a sealed one's sealed bytes): storage kept from one member to
  /// the next, used again once the caller lets go of what it was given.
  private var buffer: [UInt8] = []

  /// The members of the archive `reader` reads (from its start), which messages call `name`;
  /// `password` is asked for when the archive is sealed. With `requiresSeal` (a password was
  /// given), an archive that is not sealed is refused: anybody can write a plain archive, so one
  /// standing where an encrypted archive was expected proves nothing.
  package init(
    reader: ArchiveReader, name: String, requiresSeal: Bool = false,
    password: PasswordProvider?
  ) {
    self.reader = reader
    self.name = name
    self.requiresSeal = requiresSeal
    self.password = password
  }

  /// Whether the archive is sealed (known once the first member was read).
  package var isSealed: Bool { seal != nil }

  /// The next member, or nil at the end. `wantBytes` decides which members are read into
  /// memory (a plain archive's others are skipped, or hashed in chunks when `hash`).
  /// - Throws: ``ArchiveError``, ``ArchiveFormatError`` (a sealed member that fails
  ///   authentication; a missing or wrong password), or what the password provider throws.
  package func next(hash: Bool, wantBytes: (String) -> Bool) throws -> Member? {
    do {
      return try read(hash: hash, wantBytes: wantBytes)
    } catch let error as ArchiveFormatError {
      // Name the archive: a sealed member's or the password's problem says nothing of it.
      throw ArchiveFormatError(
        member: error.member, "\(error.detail) (\(name))", kind: error.kind)
    }
  }

  private func read(hash: Bool, wantBytes: (String) -> Bool) throws -> Member? {
    if !started {
      started = true
      if let first = try readPlain(hash: true, wantBytes: { _ in true }) {
        guard first.path == ArchiveLayout.header, let bytes = first.bytes,
          let plist = try? PropertyListValue(binaryPropertyList: bytes),
          let (seal, header) = try ArchiveSeal.opening(
            clearHeader: plist, password: { try self.password?() }, limit: limit)
        else {
          if requiresSeal {
            throw ArchiveFormatError(member: first.path, Self.notEncrypted, kind: .notEncrypted)
          }
          return first
        }
        self.seal = seal
        position = 1
        return Member(
          path: ArchiveLayout.header, bytes: header, size: header.count,
          sha256: Checksum.sha256(header))
      } else {
        return nil
      }
    }
    if seal != nil { return try readSealed(hash: hash, wantBytes: wantBytes) }
    return try readPlain(hash: hash, wantBytes: wantBytes)
  }

  private func readSealed(hash: Bool, wantBytes: (String) -> Bool) throws -> Member? {
    guard let seal, let entry = try reader.nextEntry() else { return nil }
    let path = entry.path
    try reader.readAll(limit: limit + (64 << 10), into: &buffer)
    let content = try seal.open(buffer, path: path, position: position, limit: limit)
    position += 1
    let wanted = wantBytes(path)
    return Member(
      path: path, bytes: wanted ? content : nil, size: content.count,
      sha256: hash || wanted ? Checksum.sha256(content) : nil)
  }

  private func readPlain(hash: Bool, wantBytes: (String) -> Bool) throws -> Member? {
    guard let entry = try reader.nextEntry() else { return nil }
    if wantBytes(entry.path) {
      // A buffer a reader of an earlier member handed back, when there is one
      // (``ChunkBufferPool``): the one returned here is the reader's until it is done.
      var bytes = ChunkBufferPool.shared.take()
      try reader.readAll(limit: limit, into: &bytes)
      return Member(
        path: entry.path, bytes: bytes, size: bytes.count, sha256: Checksum.sha256(bytes))
    }
    if hash {
      var hasher = SHA256()
      var size = 0
      try reader.readData { chunk in
        hasher.update(bufferPointer: chunk)
        size += chunk.count
      }
      return Member(
        path: entry.path, bytes: nil, size: size, sha256: Checksum.hex(hasher.finalize()))
    }
    return Member(path: entry.path, bytes: nil, size: Int(entry.size ?? 0), sha256: nil)
  }
}
