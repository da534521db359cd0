/// The container format of an archive.
public enum ArchiveFormat: String, Sendable, CaseIterable {
  /// POSIX.1-2001 tar (pax), readable by every tar and by libarchive-based tools.
  case pax
  /// ZIP. Entries are deflated when the filter is ``ArchiveFilter/gzip`` and stored otherwise;
  /// the other filters cannot apply to ZIP.
  case zip
}

/// The compression filter applied to the whole archive stream.
public enum ArchiveFilter: String, Sendable, CaseIterable {
  /// No compression.
  case none
  /// gzip (DEFLATE).
  case gzip
  /// xz (LZMA2).
  case xz
  /// Zstandard.
  case zstd
}

/// An entry's kind.
public enum ArchiveEntryType: Sendable, Equatable {
  /// A regular file.
  case regular
  /// A folder.
  case directory
  /// A symbolic link.
  case symlink
  /// Anything else (devices, FIFOs, hard links).
  case other(UInt32)
}

/// The header of an entry read from an archive.
public struct ArchiveEntry: Sendable, Equatable {
  /// The entry's path inside the archive.
  public let path: String
  /// The size of its data, when the header records it (ZIP written in streaming mode may not).
  public let size: Int64?
  /// Its kind.
  public let type: ArchiveEntryType
  /// Its modification time, in seconds since 1970.
  public let modificationTime: Int64
  /// Its permission bits.
  public let permissions: UInt32
}
