/// A member of an archive that does not hold what the format says it must: a record that is not
/// a dictionary, a value of the wrong type, a chunk that is not a property list. Names the
/// member and what is wrong.
public struct ArchiveFormatError: Error, CustomStringConvertible, Sendable {
  /// The member (`objects/Book/000001.plist`).
  public let member: String
  /// What is wrong with it.
  public let detail: String

  /// Creates an error naming `member`.
  public init(member: String, _ detail: String) {
    self.member = member
    self.detail = detail
  }

  /// "member: detail".
  public var description: String { "\(member): \(detail)" }
}
