/// One token of SQL schema text (SQLite's lexical rules): a word (a bare or quoted
/// identifier, or a keyword), a string literal, a number, or a symbol. Whitespace and comments
/// separate tokens and are dropped.
enum SchemaToken: Equatable, Sendable {
  /// An identifier or keyword; `quoted` when it was written `"…"`, `[…]` or `` `…` ``, which
  /// makes it never a keyword.
  case word(String, quoted: Bool)
  /// A string literal's value (`'it''s'` is `it's`).
  case string(String)
  /// A number as written (`255`, `1.5e3`, `0x1F`).
  case number(String)
  /// One of `( ) , ; . + - * / % = < > ! | & ~` (the operators appear only in triggers, which
  /// are compared, never parsed further).
  case symbol(Character)

  /// Whether this is the unquoted keyword `keyword` (compared without case).
  func isKeyword(_ keyword: String) -> Bool {
    if case .word(let text, quoted: false) = self {
      return text.caseInsensitiveCompare(keyword) == .orderedSame
    }
    return false
  }

  /// The tokens of `sql`.
  /// - Throws: ``SchemaStatement/Problem`` naming the first character it cannot read.
  static func tokens(of sql: String) throws(SchemaStatement.Problem) -> [SchemaToken] {
    let bytes = Array(sql.utf8)
    var tokens: [SchemaToken] = []
    var index = 0
    func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
    func isWordStart(_ byte: UInt8) -> Bool {
      byte == UInt8(ascii: "_")
        || (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
        || byte >= 0x80
    }
    func isWordByte(_ byte: UInt8) -> Bool {
      isWordStart(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        || byte == UInt8(ascii: "$")
    }
    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    /// The text up to the closing `close` (doubled, it stands for itself).
    func quoted(_ close: UInt8, doubling: Bool) throws(SchemaStatement.Problem) -> String {
      var value: [UInt8] = []
      var position = index + 1
      while position < bytes.count {
        if bytes[position] == close {
          if doubling, position + 1 < bytes.count, bytes[position + 1] == close {
            value.append(close)
            position += 2
            continue
          }
          index = position + 1
          return String(decoding: value, as: UTF8.self)
        }
        value.append(bytes[position])
        position += 1
      }
      throw SchemaStatement.Problem("a quoted name or string is not closed")
    }
    while index < bytes.count {
      let byte = bytes[index]
      switch byte {
      case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), 0x0C:
        index += 1
      case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
        while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
      case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
        var position = index + 2
        while position + 1 < bytes.count
          && !(bytes[position] == UInt8(ascii: "*") && bytes[position + 1] == UInt8(ascii: "/"))
        {
          position += 1
        }
        guard position + 1 < bytes.count else {
          throw SchemaStatement.Problem("a comment is not closed")
        }
        index = position + 2
      case UInt8(ascii: "\""): tokens.append(.word(try quoted(byte, doubling: true), quoted: true))
      case UInt8(ascii: "`"): tokens.append(.word(try quoted(byte, doubling: true), quoted: true))
      case UInt8(ascii: "["):
        tokens.append(.word(try quoted(UInt8(ascii: "]"), doubling: false), quoted: true))
      case UInt8(ascii: "'"): tokens.append(.string(try quoted(byte, doubling: true)))
      case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: ","), UInt8(ascii: ";"),
        UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "*"), UInt8(ascii: "/"),
        UInt8(ascii: "%"), UInt8(ascii: "="), UInt8(ascii: "<"), UInt8(ascii: ">"),
        UInt8(ascii: "!"), UInt8(ascii: "|"), UInt8(ascii: "&"), UInt8(ascii: "~"):
        tokens.append(.symbol(Character(UnicodeScalar(byte))))
        index += 1
      case UInt8(ascii: "."):
        if index + 1 < bytes.count, isDigit(bytes[index + 1]) { fallthrough }
        tokens.append(.symbol("."))
        index += 1
      case _ where isDigit(byte) || byte == UInt8(ascii: "."):
        let start = index
        while index < bytes.count
          && (isWordByte(bytes[index]) || bytes[index] == UInt8(ascii: "."))
        {
          // An exponent's sign belongs to the number.
          if (bytes[index] | 0x20) == UInt8(ascii: "e"), index + 1 < bytes.count,
            bytes[index + 1] == UInt8(ascii: "+") || bytes[index + 1] == UInt8(ascii: "-"),
            !text(start..<index).lowercased().hasPrefix("0x")
          {
            index += 1
          }
          index += 1
        }
        let number = text(start..<index)
        guard Self.isNumber(number) else {
          throw SchemaStatement.Problem("\(number) is not a number")
        }
        tokens.append(.number(number))
      case _ where isWordStart(byte):
        let start = index
        while index < bytes.count && isWordByte(bytes[index]) { index += 1 }
        tokens.append(.word(text(start..<index), quoted: false))
      default:
        throw SchemaStatement.Problem(
          "unexpected character \(String(decoding: [byte], as: UTF8.self).debugDescription)")
      }
    }
    return tokens
  }

  /// Whether `text` is an SQL numeric literal: decimal digits with an optional fraction and
  /// exponent, or `0x` and hexadecimal digits.
  static func isNumber(_ text: String) -> Bool {
    let lower = text.lowercased()
    if lower.hasPrefix("0x") {
      return lower.count > 2 && lower.dropFirst(2).allSatisfy(\.isHexDigit)
    }
    var mantissa = Substring(lower)
    var exponent: Substring?
    if let e = lower.firstIndex(of: "e") {
      mantissa = lower[..<e]
      exponent = lower[lower.index(after: e)...]
    }
    let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2,
      parts.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }),
      parts.contains(where: { !$0.isEmpty })
    else { return false }
    if var exponent {
      if exponent.first == "+" || exponent.first == "-" { exponent = exponent.dropFirst() }
      return !exponent.isEmpty && exponent.allSatisfy { $0.isASCII && $0.isNumber }
    }
    return true
  }
}
