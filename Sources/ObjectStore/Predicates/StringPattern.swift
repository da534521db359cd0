import Foundation

/// The string side of predicates: folding for `[c]` and `[d]`, the `BEGINSWITH`, `ENDSWITH`,
/// `CONTAINS` tests, and the patterns of `LIKE` (`*` any run, `?` one character) and `MATCHES`
/// (an ICU regular expression matching the whole string), shared by the SQL functions and the
/// in-memory evaluator so both decide alike.
struct StringPattern: @unchecked Sendable {
  enum Source: Sendable {
    case like(String)
    case regex(String)
  }

  private let expression: NSRegularExpression
  let options: PredicateSyntax.Options

  init(_ source: Source, options: PredicateSyntax.Options) throws {
    self.options = options
    var pattern: String
    switch source {
    case .like(let text):
      pattern = ""
      var escaped = false
      for character in Self.fold(text, options.subtracting(.caseInsensitive)) {
        if escaped {
          pattern += NSRegularExpression.escapedPattern(for: String(character))
          escaped = false
        } else if character == "\\" {
          escaped = true
        } else if character == "*" {
          pattern += ".*"
        } else if character == "?" {
          pattern += "."
        } else {
          pattern += NSRegularExpression.escapedPattern(for: String(character))
        }
      }
    case .regex(let text):
      pattern =
        options.contains(.diacriticInsensitive) ? Self.fold(text, [.diacriticInsensitive]) : text
    }
    var flags: NSRegularExpression.Options = [.dotMatchesLineSeparators]
    if options.contains(.caseInsensitive) { flags.insert(.caseInsensitive) }
    // `\z`, not `$`, which would also match before a final line break.
    expression = try NSRegularExpression(pattern: "^(?:" + pattern + ")\\z", options: flags)
  }

  /// Whether the whole of `text` matches.
  func matches(_ text: String) -> Bool {
    let subject =
      options.contains(.diacriticInsensitive) ? Self.fold(text, [.diacriticInsensitive]) : text
    let range = NSRange(subject.startIndex..., in: subject)
    return expression.firstMatch(in: subject, options: [], range: range) != nil
  }

  /// `text` with case and/or diacritics folded away.
  static func fold(_ text: String, _ options: PredicateSyntax.Options) -> String {
    var folding: String.CompareOptions = []
    if options.contains(.caseInsensitive) { folding.insert(.caseInsensitive) }
    if options.contains(.diacriticInsensitive) { folding.insert(.diacriticInsensitive) }
    return folding.isEmpty ? text : text.folding(options: folding, locale: nil)
  }

  /// `value OP operand` for the string operators and `==`/`!=` under options.
  static func test(
    _ op: PredicateSyntax.Operator, _ options: PredicateSyntax.Options, _ value: String,
    _ operand: String, pattern: StringPattern?
  ) -> Bool {
    if let pattern, op == .like || op == .matches { return pattern.matches(value) }
    let (a, b) = (fold(value, options), fold(operand, options))
    switch op {
    case .beginsWith: return a.utf8.starts(with: b.utf8)
    case .endsWith: return a.utf8.reversed().starts(with: b.utf8.reversed())
    case .contains: return b.isEmpty || a.contains(b)
    case .equal: return a == b
    case .notEqual: return a != b
    default: return false
    }
  }
}
