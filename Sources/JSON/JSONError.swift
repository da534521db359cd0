/// JSON text that does not parse, saying what was expected and where.
public struct JSONError: Error, CustomStringConvertible, Sendable, Equatable {
  /// What is wrong (`expected ',' or ']' after an array element`).
  public let detail: String
  /// The 1-based line of the offending character.
  public let line: Int
  /// The 1-based column (in bytes) of the offending character.
  public let column: Int

  /// Creates an error.
  public init(_ detail: String, line: Int, column: Int) {
    self.detail = detail
    self.line = line
    self.column = column
  }

  /// `line L, column C: detail`.
  public var description: String { "line \(line), column \(column): \(detail)" }
}
