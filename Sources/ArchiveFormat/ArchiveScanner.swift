import Crypto
import LibArchive
import PropertyList

/// Reads an archive member by member, hashing each, for the commands that inspect archives.
package struct ArchiveScanner {
  /// One member as read.
  package struct Member {
    package let path: String
    package let bytes: [UInt8]?
    package let size: Int
    package let sha256: String?
  }

  private let reader: ArchiveReader

  /// A scanner of the archive `reader` reads (from its start).
  package init(reader: ArchiveReader) { self.reader = reader }

  /// Calls `body` for each member; `wantBytes` decides which members are read into memory (the
  /// others are skipped, or hashed in chunks when `hashAll`).
  package func forEachMember(
    hashAll: Bool, wantBytes: (String) -> Bool, _ body: (Member) throws -> Void
  )
    throws
  {
    while let entry = try reader.nextEntry() {
      if wantBytes(entry.path) {
        let bytes = try reader.readAll()
        try body(
          Member(path: entry.path, bytes: bytes, size: bytes.count, sha256: Checksum.sha256(bytes)))
      } else if hashAll {
        var hasher = SHA256()
        var size = 0
        try reader.readData { chunk in
          hasher.update(bufferPointer: chunk)
          size += chunk.count
        }
        let digest = Checksum.hex(hasher.finalize())
        try body(Member(path: entry.path, bytes: nil, size: size, sha256: digest))
      } else {
        try body(Member(path: entry.path, bytes: nil, size: Int(entry.size ?? 0), sha256: nil))
      }
    }
  }

}
