/// A `GLOB` pattern that every string a case- and diacritic-sensitive string test accepts also
/// matches, so that SQLite rules most rows out natively before the exact test
/// (``StringPattern``, a call back into Swift) runs on the rest.
///
/// `BEGINSWITH` and `ENDSWITH` compare code points, as `GLOB` does; a `LIKE` pattern's `*` and
/// `?` are `GLOB`'s. A `MATCHES` regular expression is translated atom by atom while it is
/// made of literals, `.` and simple bracket classes, each optionally quantified, and cut
/// short with `*` at anything else (a group, an escape, a class within a class). A filter is
/// never stricter than the test: a quantifier that allows none turns its atom into `*`.
/// `CONTAINS` has none, since it also finds canonically equivalent text.
enum GlobFilter {
  /// The filter of `op` with `operand`, or nil when there is nothing to test (a pattern that
  /// is all wildcards, an alternation, an operator without one).
  static func pattern(_ op: PredicateSyntax.Operator, _ operand: String) -> String? {
    var glob = ""
    switch op {
    case .beginsWith:
      glob = literal(operand) + "*"
    case .endsWith:
      glob = "*" + literal(operand)
    case .like:
      var escaped = false
      for character in operand {
        if escaped {
          glob += literal(String(character))
          escaped = false
        } else if character == "\\" {
          escaped = true
        } else if character == "*" || character == "?" {
          glob.append(character)
        } else {
          glob += literal(String(character))
        }
      }
    case .matches:
      guard let translated = regex(operand) else { return nil }
      glob = translated
    default:
      return nil
    }
    return glob.allSatisfy({ $0 == "*" }) ? nil : glob
  }

  /// Where the strings a `GLOB` pattern matches lie, from its beginning up to its first
  /// wildcard or negated class: none is below `low`, and each is at most `high` or begins
  /// with it. A literal character is in both; a class adds its smallest code point to `low`
  /// and its largest to `high`.
  static func literalRange(of glob: String) -> (low: String, high: String) {
    let scalars = Array(glob.unicodeScalars)
    var low = String.UnicodeScalarView()
    var high = String.UnicodeScalarView()
    var index = 0
    scan: while index < scalars.count {
      switch scalars[index] {
      case "*", "?":
        break scan
      case "[":
        // A `]` first in the class is one of its characters.
        var end = index + 1
        if end < scalars.count && scalars[end] == "]" { end += 1 }
        while end < scalars.count && scalars[end] != "]" { end += 1 }
        guard end < scalars.count, index + 1 < end, scalars[index + 1] != "^" else { break scan }
        var (least, most) = (scalars[index + 1], scalars[index + 1])
        var item = index + 1
        while item < end {
          // A character, or a range `a-z`.
          let first = scalars[item]
          var last = first
          if item + 2 < end && scalars[item + 1] == "-" {
            last = scalars[item + 2]
            item += 3
          } else {
            item += 1
          }
          least = min(least, first)
          most = max(most, last)
        }
        low.append(least)
        high.append(most)
        index = end + 1
      default:
        low.append(scalars[index])
        high.append(scalars[index])
        index += 1
      }
    }
    return (String(low), String(high))
  }

  /// `text` matched literally: `GLOB`'s wildcards in brackets.
  private static func literal(_ text: String) -> String {
    var glob = ""
    for character in text {
      switch character {
      case "*", "?", "[": glob += "[\(character)]"
      default: glob.append(character)
      }
    }
    return glob
  }

  /// An ICU regular expression, matched against the whole string, as a `GLOB` filter.
  private static func regex(_ pattern: String) -> String? {
    // An alternation anywhere may make any part optional.
    guard !pattern.contains("|") else { return nil }
    let characters = Array(pattern)
    var glob = ""
    var index = characters.first == "^" ? 1 : 0
    while index < characters.count {
      let character = characters[index]
      var next = index + 1
      let atom: String
      switch character {
      case "$" where next == characters.count:
        return glob
      case ".":
        atom = "?"
      case "[":
        guard let end = classEnd(characters, from: index) else { return glob + "*" }
        atom = String(characters[index...end])
        next = end + 1
      case "\\", "(", ")", "^", "$", "{", "}", "*", "+", "?", "]":
        return glob + "*"
      default:
        atom = literal(String(character))
      }
      switch next < characters.count ? characters[next] : nil {
      case "*", "?":
        glob += "*"
        next += 1
      case "+":
        glob += atom + "*"
        next += 1
      case "{":
        // A counted repeat, which may allow none: the rest is left to the exact test.
        return glob + "*"
      default:
        glob += atom
        index = next
        continue
      }
      // A lazy or possessive quantifier's mark.
      if next < characters.count && (characters[next] == "?" || characters[next] == "+") {
        next += 1
      }
      index = next
    }
    return glob
  }

  /// The index of the `]` that closes the simple bracket class opening at `start` (one that
  /// means the same in a `GLOB`: no escapes, nested sets, set operations or properties), or
  /// nil.
  private static func classEnd(_ characters: [Character], from start: Int) -> Int? {
    var index = start + 1
    if index < characters.count && characters[index] == "^" { index += 1 }
    // A `]` first in the class is one of its characters.
    if index < characters.count && characters[index] == "]" { index += 1 }
    while index < characters.count && characters[index] != "]" {
      if "[\\&:{}".contains(characters[index]) { return nil }
      index += 1
    }
    return index < characters.count ? index : nil
  }
}
