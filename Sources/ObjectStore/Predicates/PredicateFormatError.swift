/// A predicate in `NSPredicate` format that cannot be used: malformed, naming an unknown key, or
/// applying an operator that does not fit the attribute's type.
public struct PredicateFormatError: Error, CustomStringConvertible, Sendable, Equatable {
  /// The predicate's text.
  public let text: String
  /// Where the problem starts, in characters from 0.
  public let position: Int
  /// What is wrong, or what was expected there.
  public let message: String

  /// Creates an error.
  public init(text: String, position: Int, message: String) {
    self.text = text
    self.position = position
    self.message = message
  }

  /// `predicate: MESSAGE at position N: …text…`.
  public var description: String {
    let characters = Array(text)
    let start = max(0, min(position, characters.count))
    let near = String(characters[start..<min(characters.count, start + 24)])
    return "predicate: \(message) at position \(position)"
      + (near.isEmpty ? " (the end)" : " (near \"\(near)\")")
  }
}
