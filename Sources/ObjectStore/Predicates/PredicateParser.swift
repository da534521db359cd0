import Foundation
import ObjectModel
import PropertyList

/// Parses the `NSPredicate` format Core Data developers write: comparisons (`==` `!=` `<` `<=`
/// `>` `>=`, `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE`, `MATCHES`, `IN {…}`, `BETWEEN {…}`)
/// with `[c]`, `[d]`, `[cd]`, `AND` `OR` `NOT` (and `&&` `||` `!`), parentheses, `ANY` `ALL`
/// `NONE` (`SOME` is `ANY`), key paths with `.@count`, and literals: strings in single or double
/// quotes, numbers, `nil`/`NULL`, `YES`/`NO`/`TRUE`/`FALSE`, `CAST(number or ISO 8601 string,
/// "NSDate")`, `TRUEPREDICATE`, `FALSEPREDICATE`; placeholders (`%@`, `%d`, `%i`, `%ld`,
/// `%lld`, `%f`, `%K`) and substitution variables (`$NAME`) take their values from the caller,
/// as values, never as text.
struct PredicateParser {
  enum Token: Equatable {
    case word(String)
    case string(String)
    case number(String)
    case symbol(String)
    /// `%@`, `%d`, `%K`, …: the letters after `%`.
    case placeholder(String)
    /// `$NAME`.
    case variable(String)
    case end
  }

  let text: String
  private var tokens: [(token: Token, position: Int)] = []
  private var index = 0
  private let arguments: [PredicateArgument]
  private var nextArgument = 0
  private let variables: [String: PredicateArgument]

  init(
    _ text: String, arguments: [PredicateArgument] = [],
    variables: [String: PredicateArgument] = [:]
  ) throws(PredicateFormatError) {
    self.text = text
    self.arguments = arguments
    self.variables = variables
    tokens = try Self.tokenize(text)
  }

  static func parse(
    _ text: String, arguments: [PredicateArgument] = [],
    variables: [String: PredicateArgument] = [:]
  ) throws(PredicateFormatError) -> PredicateSyntax {
    var parser = try PredicateParser(text, arguments: arguments, variables: variables)
    let result = try parser.predicate(depth: 0)
    guard case .end = parser.current else { throw parser.expected("AND, OR or the end") }
    guard parser.nextArgument == arguments.count else {
      throw PredicateFormatError(
        text: text, position: text.count,
        message:
          "\(arguments.count) values given for \(parser.nextArgument) placeholders (%@, %d, %K, …)")
    }
    return result
  }

  // MARK: Tokens

  private static func tokenize(_ text: String) throws(PredicateFormatError) -> [(Token, Int)] {
    let characters = Array(text)
    var result: [(Token, Int)] = []
    var i = 0
    func fail(_ message: String, _ at: Int) -> PredicateFormatError {
      PredicateFormatError(text: text, position: at, message: message)
    }
    while i < characters.count {
      let c = characters[i]
      if c.isWhitespace {
        i += 1
        continue
      }
      let start = i
      if c == "\"" || c == "'" {
        var value = ""
        i += 1
        var closed = false
        while i < characters.count {
          let d = characters[i]
          if d == "\\", i + 1 < characters.count {
            let escaped = characters[i + 1]
            switch escaped {
            case "n": value.append("\n")
            case "t": value.append("\t")
            case "r": value.append("\r")
            case "0": value.append("\0")
            default: value.append(escaped)
            }
            i += 2
            continue
          }
          if d == c {
            closed = true
            i += 1
            break
          }
          value.append(d)
          i += 1
        }
        guard closed else { throw fail("a string is not closed (\(c) expected)", start) }
        result.append((.string(value), start))
      } else if c.isNumber && c.isASCII {
        while i < characters.count,
          characters[i].isASCII
            && (characters[i].isNumber || characters[i] == "." || characters[i] == "e"
              || characters[i] == "E"
              || ((characters[i] == "-" || characters[i] == "+")
                && (characters[i - 1] == "e" || characters[i - 1] == "E")))
        {
          i += 1
        }
        result.append((.number(String(characters[start..<i])), start))
      } else if c == "%" {
        i += 1
        while i < characters.count, characters[i] == "l" { i += 1 }
        guard i < characters.count, "@dDiIuUfKgGe".contains(characters[i]) else {
          throw fail("a placeholder is %@, %d, %i, %ld, %lld, %f or %K", start)
        }
        result.append((.placeholder(String(characters[i])), start))
        i += 1
      } else if c == "$", i + 1 < characters.count,
        characters[i + 1].isLetter || characters[i + 1] == "_"
      {
        i += 1
        while i < characters.count,
          characters[i].isLetter || characters[i].isNumber || characters[i] == "_"
        {
          i += 1
        }
        result.append((.variable(String(characters[(start + 1)..<i])), start))
      } else if c.isLetter || c == "_" || c == "$" || c == "#" {
        if c == "#" { i += 1 }
        while i < characters.count,
          characters[i].isLetter || characters[i].isNumber || characters[i] == "_"
            || characters[i] == "$"
        {
          i += 1
        }
        let word = String(characters[(c == "#" ? start + 1 : start)..<i])
        guard !word.isEmpty else { throw fail("a name is expected after #", start) }
        // `#name` escapes a reserved word as a key.
        result.append((c == "#" ? .string("#" + word) : .word(word), start))
      } else if c == "@" {
        i += 1
        while i < characters.count, characters[i].isLetter { i += 1 }
        result.append((.word(String(characters[start..<i])), start))
      } else {
        let two = i + 1 < characters.count ? String(characters[i...i + 1]) : ""
        if ["==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||"].contains(two) {
          let normal = ["<>": "!=", "=<": "<=", "=>": ">="][two] ?? two
          result.append((.symbol(normal), start))
          i += 2
        } else if "=<>!(){},.[]-".contains(c) {
          result.append((.symbol(c == "=" ? "==" : String(c)), start))
          i += 1
        } else {
          throw fail("unexpected character \"\(c)\"", start)
        }
      }
    }
    result.append((.end, characters.count))
    return result
  }

  // MARK: Grammar

  private var current: Token { tokens[index].token }
  private var position: Int { tokens[index].position }

  private func expected(_ what: String) -> PredicateFormatError {
    let found: String
    switch current {
    case .word(let w): found = w
    case .string(let s): found = "\"\(s)\""
    case .number(let n): found = n
    case .symbol(let s): found = s
    case .placeholder(let p): found = "%" + p
    case .variable(let v): found = "$" + v
    case .end: found = "the end"
    }
    return PredicateFormatError(
      text: text, position: position, message: "\(what) expected, found \(found)")
  }

  private func isKeyword(_ word: String) -> Bool {
    if case .word(let w) = current { return w.uppercased() == word }
    return false
  }

  private mutating func accept(keyword: String) -> Bool {
    guard isKeyword(keyword) else { return false }
    index += 1
    return true
  }

  private mutating func accept(symbol: String) -> Bool {
    guard current == .symbol(symbol) else { return false }
    index += 1
    return true
  }

  private mutating func predicate(depth: Int) throws(PredicateFormatError) -> PredicateSyntax {
    guard depth < 100 else {
      throw PredicateFormatError(
        text: text, position: position, message: "the predicate nests too deeply")
    }
    var parts = [try conjunction(depth: depth)]
    while accept(keyword: "OR") || accept(symbol: "||") {
      parts.append(try conjunction(depth: depth))
    }
    return parts.count == 1 ? parts[0] : .or(parts)
  }

  private mutating func conjunction(depth: Int) throws(PredicateFormatError) -> PredicateSyntax {
    var parts = [try negation(depth: depth)]
    while accept(keyword: "AND") || accept(symbol: "&&") {
      parts.append(try negation(depth: depth))
    }
    return parts.count == 1 ? parts[0] : .and(parts)
  }

  private mutating func negation(depth: Int) throws(PredicateFormatError) -> PredicateSyntax {
    if accept(keyword: "NOT") || accept(symbol: "!") {
      return .not(try negation(depth: depth + 1))
    }
    if accept(symbol: "(") {
      let inner = try predicate(depth: depth + 1)
      guard accept(symbol: ")") else { throw expected(")") }
      return inner
    }
    if accept(keyword: "TRUEPREDICATE") { return .constant(true) }
    if accept(keyword: "FALSEPREDICATE") { return .constant(false) }
    return .comparison(try comparison())
  }

  private mutating func comparison() throws(PredicateFormatError) -> PredicateSyntax.Comparison {
    let start = position
    var quantifier: PredicateSyntax.Quantifier?
    if accept(keyword: "ANY") || accept(keyword: "SOME") {
      quantifier = .any
    } else if accept(keyword: "ALL") {
      quantifier = .all
    } else if accept(keyword: "NONE") {
      quantifier = PredicateSyntax.Quantifier.none
    }
    let left = try operand()
    let operatorPosition = position
    let op = try comparisonOperator()
    var options: PredicateSyntax.Options = []
    if accept(symbol: "[") {
      guard case .word(let letters) = current else { throw expected("c, d or cd") }
      for letter in letters.lowercased() {
        switch letter {
        case "c": options.insert(.caseInsensitive)
        case "d": options.insert(.diacriticInsensitive)
        case "n", "l": break  // normalized, locale: no effect here
        default: throw expected("c, d or cd")
        }
      }
      index += 1
      guard accept(symbol: "]") else { throw expected("]") }
    }
    let right = try operand()
    return .init(
      quantifier: quantifier, left: left, op: op, options: options, right: right,
      position: start, operatorPosition: operatorPosition)
  }

  private mutating func comparisonOperator() throws(PredicateFormatError)
    -> PredicateSyntax.Operator
  {
    if case .symbol(let s) = current, let op = PredicateSyntax.Operator(rawValue: s) {
      index += 1
      return op
    }
    if case .word(let w) = current, let op = PredicateSyntax.Operator(rawValue: w.uppercased()),
      !op.rawValue.hasPrefix("=")
    {
      index += 1
      return op
    }
    throw expected(
      "an operator (==, !=, <, <=, >, >=, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES, IN, BETWEEN)"
    )
  }

  private mutating func operand() throws(PredicateFormatError) -> PredicateSyntax.Operand {
    let start = position
    if accept(symbol: "{") {
      var items: [PredicateSyntax.Literal] = []
      if !accept(symbol: "}") {
        repeat { items.append(try literal()) } while accept(symbol: ",")
        guard accept(symbol: "}") else { throw expected(", or }") }
      }
      return .list(items, position: start)
    }
    if case .word(let w) = current, !Self.literalWords.contains(w.uppercased()),
      w.uppercased() != "CAST"
    {
      return try keyPath()
    }
    if case .string(let s) = current, s.hasPrefix("#") {
      return try keyPath()
    }
    if case .placeholder("K") = current {
      let argument = try takeArgument()
      guard case .string(let path) = argument, !path.isEmpty else {
        throw PredicateFormatError(
          text: text, position: start, message: "%K takes a key path (a string)")
      }
      index += 1
      let keys = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
      let count = keys.last?.lowercased() == "@count"
      guard !keys.dropLast(count ? 1 : 0).contains(where: \.isEmpty) else {
        throw PredicateFormatError(
          text: text, position: start, message: "%K's key path \"\(path)\" has an empty key")
      }
      return .keyPath(Array(keys.dropLast(count ? 1 : 0)), count: count, position: start)
    }
    // An array or set given for `%@` (or a variable): the list of `IN %@`.
    if let items = listArgument() {
      index += 1
      var literals: [PredicateSyntax.Literal] = []
      for item in items { literals.append(try literal(item, kind: "@")) }
      return .list(literals, position: start)
    }
    return .literal(try literal(), position: start)
  }

  /// The items of the list that the placeholder `%@` or the variable at hand stands for, taken;
  /// nil when it stands for no list.
  private mutating func listArgument() -> [PredicateArgument]? {
    switch current {
    case .placeholder("@"):
      guard nextArgument < arguments.count, case .list(let items) = arguments[nextArgument] else {
        return nil
      }
      nextArgument += 1
      return items
    case .variable(let name):
      guard case .list(let items)? = variables[name] else { return nil }
      return items
    default: return nil
    }
  }

  /// The next placeholder's value.
  private mutating func takeArgument() throws(PredicateFormatError) -> PredicateArgument {
    guard nextArgument < arguments.count else {
      throw PredicateFormatError(
        text: text, position: position,
        message: "no value given for this placeholder (\(arguments.count) given)")
    }
    nextArgument += 1
    return arguments[nextArgument - 1]
  }

  /// A placeholder's or variable's value as a literal.
  private func literal(_ argument: PredicateArgument, kind: String) throws(PredicateFormatError)
    -> PredicateSyntax.Literal
  {
    switch (kind, argument) {
    case (_, .null): return .null
    case ("d", .integer(let v)), ("i", .integer(let v)), ("u", .integer(let v)),
      ("D", .integer(let v)), ("I", .integer(let v)), ("U", .integer(let v)):
      return .integer(v)
    case ("d", .bool(let v)), ("i", .bool(let v)): return .integer(v ? 1 : 0)
    case ("f", .real(let v)), ("g", .real(let v)), ("e", .real(let v)), ("G", .real(let v)):
      return .real(v)
    case ("f", .integer(let v)), ("g", .integer(let v)), ("e", .integer(let v)):
      return .real(Double(v))
    case ("@", .bool(let v)): return .bool(v)
    case ("@", .integer(let v)): return .integer(v)
    case ("@", .real(let v)): return .real(v)
    case ("@", .string(let v)): return .string(v)
    case ("@", .date(let v)): return .date(v)
    case ("@", .object(let v)): return .object(v)
    default:
      throw PredicateFormatError(
        text: text, position: position,
        message:
          "%\(kind) does not take \(argument) (%d, %i and %ld take integers, %f reals, %@ any value)"
      )
    }
  }

  private static let literalWords: Set<String> = ["NIL", "NULL", "YES", "NO", "TRUE", "FALSE"]
  private static let reserved: Set<String> = [
    "AND", "OR", "NOT", "ANY", "ALL", "NONE", "SOME", "IN", "BETWEEN", "LIKE", "MATCHES",
    "CONTAINS", "BEGINSWITH", "ENDSWITH", "TRUEPREDICATE", "FALSEPREDICATE",
  ]

  private mutating func keyPath() throws(PredicateFormatError) -> PredicateSyntax.Operand {
    let start = position
    var keys: [String] = []
    var count = false
    repeat {
      switch current {
      case .word(let w) where w.lowercased() == "@count" && !keys.isEmpty:
        count = true
        index += 1
      case .word(let w) where !w.hasPrefix("@") && !Self.reserved.contains(w.uppercased()):
        keys.append(w)
        index += 1
      case .string(let s) where s.hasPrefix("#"):
        keys.append(String(s.dropFirst()))
        index += 1
      default:
        throw expected(keys.isEmpty ? "a key" : "a key or @count after .")
      }
    } while !count && accept(symbol: ".")
    return .keyPath(keys, count: count, position: start)
  }

  private mutating func literal() throws(PredicateFormatError) -> PredicateSyntax.Literal {
    if case .placeholder(let kind) = current, kind != "K" {
      let value = try literal(try takeArgument(), kind: kind)
      index += 1
      return value
    }
    if case .variable(let name) = current {
      guard let value = variables[name] else {
        throw PredicateFormatError(
          text: text, position: position,
          message:
            "no value for $\(name); give it with withSubstitutionVariables (given: \(variables.keys.sorted().map { "$" + $0 }.joined(separator: ", ")))"
        )
      }
      index += 1
      return try literal(value, kind: "@")
    }
    let negative = accept(symbol: "-")
    switch current {
    case .number(let n):
      index += 1
      if let value = Int64(n) { return .integer(negative ? -value : value) }
      if let value = Double(n) { return .real(negative ? -value : value) }
      throw PredicateFormatError(text: text, position: position, message: "\(n) is not a number")
    case _ where negative:
      throw expected("a number after -")
    case .string(let s) where !s.hasPrefix("#"):
      index += 1
      return .string(s)
    case .word(let w):
      switch w.uppercased() {
      case "NIL", "NULL":
        index += 1
        return .null
      case "YES", "TRUE":
        index += 1
        return .bool(true)
      case "NO", "FALSE":
        index += 1
        return .bool(false)
      case "CAST":
        return try cast()
      default:
        throw expected("a value (a string, a number, nil, YES, NO, CAST(…))")
      }
    default:
      throw expected("a value (a string, a number, nil, YES, NO, CAST(…))")
    }
  }

  /// `CAST(seconds, "NSDate")` or `CAST("2026-11-23T10:00:00Z", "NSDate")`.
  private mutating func cast() throws(PredicateFormatError) -> PredicateSyntax.Literal {
    index += 1
    guard accept(symbol: "(") else { throw expected("(") }
    let valuePosition = position
    let value = try literal()
    guard accept(symbol: ",") else { throw expected(",") }
    guard case .string(let type) = current, type == "NSDate" else {
      throw expected("\"NSDate\" (the one type CAST makes here)")
    }
    index += 1
    guard accept(symbol: ")") else { throw expected(")") }
    switch value {
    case .integer(let seconds): return .date(Double(seconds))
    case .real(let seconds): return .date(seconds)
    case .string(let text):
      guard let date = Self.iso8601(text) else {
        throw PredicateFormatError(
          text: self.text, position: valuePosition, message: "\"\(text)\" is not an ISO 8601 date")
      }
      return .date(date)
    default:
      throw PredicateFormatError(
        text: text, position: valuePosition,
        message: "CAST to NSDate takes seconds since 2001 or an ISO 8601 string")
    }
  }

  /// Seconds since 2001-01-01 of an ISO 8601 date or date-time (UTC unless it says otherwise).
  static func iso8601(_ text: String) -> Double? {
    if let date = ISO8601.parse(text) { return date.secondsSinceReferenceDate }
    if text.count == 10, let date = ISO8601.parse(text + "T00:00:00Z") {
      return date.secondsSinceReferenceDate
    }
    return nil
  }
}
