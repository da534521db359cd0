import LibArchive

/// How an archive is compressed.
public enum Compression: String, Sendable, CaseIterable, Codable {
  /// Zstandard (the default: fast, compact).
  case zstd
  /// xz (smallest, slowest).
  case xz
  /// gzip.
  case gzip
  /// None.
  case none

  package var filter: ArchiveFilter {
    switch self {
    case .zstd: return .zstd
    case .xz: return .xz
    case .gzip: return .gzip
    case .none: return .none
    }
  }
}
