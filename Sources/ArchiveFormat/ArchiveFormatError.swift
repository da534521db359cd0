/// A member of an archive that does not hold what the format says it must: a record that is not
/// a dictionary, a value of the wrong type, a chunk that is not a property list, a sealed member
/// whose authentication fails. Names the member and what is wrong.
public struct ArchiveFormatError: Error, CustomStringConvertible, Sendable {
  /// What kind of problem it is.
  public enum Kind: Sendable, Equatable {
    /// The member does not hold what the format says (damaged, truncated, or not ours).
    case malformed
    /// The archive is encrypted and no password was given.
    case passwordRequired
    /// The password given does not open the archive.
    case wrongPassword
    /// A password was given, and the archive is not encrypted.
    case notEncrypted
  }

  /// What kind of problem it is.
  public let kind: Kind
  /// The member (`objects/Book/000001.plist`).
  public let member: String
  /// What is wrong with it.
  public let detail: String

  /// Creates an error naming `member`.
  public init(member: String, _ detail: String, kind: Kind = .malformed) {
    self.kind = kind
    self.member = member
    self.detail = detail
  }

  /// "member: detail" (the detail alone for a password's problem: it is no member's).
  public var description: String { kind == .malformed ? "\(member): \(detail)" : detail }
}
