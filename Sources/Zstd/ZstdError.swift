/// An error from libzstd: what was being done and libzstd's name for what went wrong.
public struct ZstdError: Error, CustomStringConvertible, Sendable, Equatable {
  /// What went wrong.
  public enum Kind: Sendable, Equatable {
    /// The bytes are not one complete zstd frame, or it is damaged (its checksum differs).
    case corruptData
    /// The frame would decompress to more than the caller allows (or does not say its size).
    case outputLimitExceeded(limit: Int)
    /// libzstd could not get memory for its context.
    case outOfMemory
    /// Compression failed.
    case compressionFailed
  }

  /// What went wrong.
  public let kind: Kind
  /// libzstd's name for the error (`ZSTD_getErrorName`), when it gave one.
  public let message: String?

  /// Creates an error from its parts.
  public init(kind: Kind, message: String? = nil) {
    self.kind = kind
    self.message = message
  }

  /// A one-line description naming the failure.
  public var description: String {
    let what: String
    switch kind {
    case .corruptData: what = "not a complete, undamaged zstd frame"
    case .outputLimitExceeded(let limit):
      what = "the zstd frame would decompress to more than \(limit) bytes"
    case .outOfMemory: what = "libzstd is out of memory"
    case .compressionFailed: what = "zstd compression failed"
    }
    return message.map { "\(what) (\($0))" } ?? what
  }
}
