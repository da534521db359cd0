import ArchiveFormat
import PropertyList

/// An archive's header and index, read from its two ends: what `list` and `prune` decide from
/// (``ArchiveAccess/readEnds(_:listed:password:allowingUnencrypted:)``).
struct ArchiveEndsRead {
  /// The header.
  let header: ArchiveHeader
  /// The index.
  let index: PropertyListValue
  /// The bytes read (or fetched, through a copy of the archive's ends).
  let bytesRead: Int64
  /// Whether the archive is encrypted.
  let encrypted: Bool
  /// The archive's size.
  let size: Int64
}
