/// An error reading or writing an archive, naming the archive, the entry and the offset.
public struct ArchiveError: Error, CustomStringConvertible, Sendable, Equatable {
  /// What went wrong.
  public enum Kind: Sendable, Equatable {
    /// libarchive reported a failure (its message is in ``ArchiveError/message``).
    case library(code: Int32)
    /// The caller's stream the archive is read from or written to failed (a network error, a
    /// full disk): ``ArchiveError/message`` is what it threw, said first.
    case stream
    /// The archive ended inside an entry, or an entry held fewer bytes than its header said.
    case truncated
    /// An entry's data was longer or shorter than the size it was begun with.
    case sizeMismatch(declared: Int64, written: Int64)
    /// An entry is larger than the caller's limit.
    case entryTooLarge(limit: Int)
    /// The writer or reader was used out of order (data without an entry, after close, …).
    case misuse(String)
    /// The format and filter cannot be combined.
    case unsupported(String)
  }

  /// What went wrong.
  public let kind: Kind
  /// libarchive's message, when it gave one.
  public let message: String?
  /// The `errno` libarchive reported, when nonzero (for example `ENOSPC` on a full disk).
  public let errno: Int32
  /// The archive file, when known.
  public let archivePath: String?
  /// The entry being read or written, when there was one.
  public let entry: String?
  /// The offset within the entry's data, when an entry was involved.
  public let entryOffset: Int64?
  /// The position in the archive file (compressed bytes), when known.
  public let archiveOffset: Int64?

  /// Creates an error from its parts.
  public init(
    kind: Kind, message: String? = nil, errno: Int32 = 0, archivePath: String? = nil,
    entry: String? = nil, entryOffset: Int64? = nil, archiveOffset: Int64? = nil
  ) {
    self.kind = kind
    self.message = message
    self.errno = errno
    self.archivePath = archivePath
    self.entry = entry
    self.entryOffset = entryOffset
    self.archiveOffset = archiveOffset
  }

  /// A one-line description naming the failure, the archive, the entry and the offsets.
  public var description: String {
    var text: String
    switch kind {
    case .library(let code): text = "archive error (libarchive \(code))"
    case .stream: text = ""
    case .truncated: text = "archive is truncated"
    case .sizeMismatch(let declared, let written):
      text = "entry size mismatch: declared \(declared) bytes, got \(written)"
    case .entryTooLarge(let limit): text = "entry is larger than the limit of \(limit) bytes"
    case .misuse(let what): text = "archive API misuse: \(what)"
    case .unsupported(let what): text = "unsupported: \(what)"
    }
    if let message, !message.isEmpty { text += text.isEmpty ? message : ": \(message)" }
    if let entry { text += " [entry \(entry)" + (entryOffset.map { " at byte \($0)" } ?? "") + "]" }
    if let archiveOffset { text += " [archive byte \(archiveOffset)]" }
    if let archivePath { text += " [\(archivePath)]" }
    return text
  }
}
