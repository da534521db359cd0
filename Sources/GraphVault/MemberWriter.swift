import Foundation
import LibArchive
import PropertyList

/// Writes archive members and keeps the index: each member's size and SHA-256, in order.
final class MemberWriter {
  struct Entry {
    let path: String
    let size: Int
    let sha256: String
  }

  private let archive: ArchiveWriter
  private let modificationTime: Int64
  private(set) var entries: [Entry] = []

  init(archive: ArchiveWriter, modificationTime: Int64) {
    self.archive = archive
    self.modificationTime = modificationTime
  }

  /// Writes one member.
  func write(_ path: String, _ bytes: [UInt8]) throws {
    try archive.writeEntry(path: path, contents: bytes, modificationTime: modificationTime)
    entries.append(Entry(path: path, size: bytes.count, sha256: Checksum.sha256(bytes)))
  }

  /// Writes one member holding a property list.
  func write(_ path: String, plist: PropertyListValue) throws {
    try write(path, plist.binaryPropertyList())
  }

  /// The index of what has been written so far.
  func index(counts: [String: Int], rows: [String: Int]) -> PropertyListValue {
    [
      "format": .integer(ArchiveLayout.formatVersion),
      "members": .array(
        entries.map {
          [
            "path": .string($0.path), "size": .integer(Int64($0.size)),
            "sha256": .string($0.sha256),
          ]
        }),
      "objects": .dictionary(counts.mapValues { .integer(Int64($0)) }),
      "tables": .dictionary(rows.mapValues { .integer(Int64($0)) }),
      "totals": [
        "objects": .integer(Int64(counts.values.reduce(0, +))),
        "rows": .integer(Int64(rows.values.reduce(0, +))),
        "members": .integer(Int64(entries.count)),
      ],
    ]
  }
}
