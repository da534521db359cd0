/// Reads JSON text (RFC 8259) from a stream of chunks, value by value, so that a long array can
/// be walked one element at a time without holding the whole text. Every error names the line
/// and column where the text went wrong and what was expected there.
///
/// ```swift
/// let reader = JSONReader(bytes: Array(#"[{"a": 1}, {"a": 2}]"#.utf8))
/// try reader.beginArray()
/// while try reader.nextElement() { print(try reader.value()) }
/// try reader.end()
/// ```
public final class JSONReader {
  /// The deepest nesting of arrays and objects read.
  public static let maximumDepth = 512

  private var buffer: [UInt8] = []
  private var index = 0
  private var finished = false
  private let more: () throws(JSONError) -> [UInt8]?
  /// For each array or object being walked with ``nextElement()`` or ``nextKey()``, whether
  /// its first item is still to come.
  private var walking: [Bool] = []
  /// The 1-based line of the next character.
  public private(set) var line = 1
  /// The 1-based column (in bytes) of the next character.
  public private(set) var column = 1

  /// A reader of `bytes`.
  public convenience init(bytes: [UInt8]) {
    var given: [UInt8]? = bytes
    self.init { () throws(JSONError) -> [UInt8]? in
      defer { given = nil }
      return given
    }
  }

  /// A reader of the chunks `more` returns, until it returns nil.
  public init(chunks more: @escaping () throws(JSONError) -> [UInt8]?) {
    self.more = more
  }

  // MARK: Walking

  /// Reads the next whole value.
  /// - Throws: ``JSONError`` when the text is not JSON.
  public func value() throws(JSONError) -> JSONValue {
    try value(depth: walking.count)
  }

  /// Reads the `[` that opens an array walked with ``nextElement()``.
  public func beginArray() throws(JSONError) {
    try expect(UInt8(ascii: "["), "'['")
    walking.append(true)
  }

  /// Moves to the next element of the array being walked: true when one follows (read it
  /// with ``value()`` or walk into it), false when the array closed.
  public func nextElement() throws(JSONError) -> Bool {
    try nextItem(close: UInt8(ascii: "]"), what: "an array element")
  }

  /// Reads the `{` that opens an object walked with ``nextKey()``.
  public func beginObject() throws(JSONError) {
    try expect(UInt8(ascii: "{"), "'{'")
    walking.append(true)
  }

  /// Reads the next member's key and its `:` (then read the value), or nil when the object
  /// closed.
  public func nextKey() throws(JSONError) -> String? {
    guard try nextItem(close: UInt8(ascii: "}"), what: "an object member") else { return nil }
    guard try peekSignificant() == UInt8(ascii: "\"") else {
      throw failure("expected a member name in double quotes")
    }
    let key = try string()
    try expect(UInt8(ascii: ":"), "':' after a member name")
    return key
  }

  /// The next character that is not white space, without reading it (nil at the end).
  public func peekSignificant() throws(JSONError) -> UInt8? {
    try skipSpace()
    return try peek()
  }

  /// Checks that nothing but white space is left.
  public func end() throws(JSONError) {
    if try peekSignificant() != nil { throw failure("expected the end of the text") }
  }

  /// Whether nothing but white space is left.
  public func isAtEnd() throws(JSONError) -> Bool { try peekSignificant() == nil }

  private func nextItem(close: UInt8, what: String) throws(JSONError) -> Bool {
    guard let first = walking.last else { throw failure("not inside an array or object") }
    let next = try peekSignificant()
    if next == close {
      advance()
      walking.removeLast()
      return false
    }
    if !first {
      guard next == UInt8(ascii: ",") else {
        throw failure("expected ',' or '\(Character(Unicode.Scalar(close)))' after \(what)")
      }
      advance()
      try skipSpace()
    }
    walking[walking.count - 1] = false
    return true
  }

  // MARK: Values

  private func value(depth: Int) throws(JSONError) -> JSONValue {
    guard let next = try peekSignificant() else { throw failure("expected a value, found the end") }
    switch next {
    case UInt8(ascii: "{"):
      guard depth < Self.maximumDepth else { throw failure("nested more than 512 levels deep") }
      advance()
      var members: [(key: String, value: JSONValue)] = []
      if try peekSignificant() == UInt8(ascii: "}") {
        advance()
        return .object(members)
      }
      while true {
        guard try peekSignificant() == UInt8(ascii: "\"") else {
          throw failure("expected a member name in double quotes")
        }
        let key = try string()
        try expect(UInt8(ascii: ":"), "':' after a member name")
        members.append((key, try value(depth: depth + 1)))
        let after = try peekSignificant()
        advance()
        if after == UInt8(ascii: "}") { return .object(members) }
        guard after == UInt8(ascii: ",") else {
          throw failure("expected ',' or '}' after an object member", back: 1)
        }
      }
    case UInt8(ascii: "["):
      guard depth < Self.maximumDepth else { throw failure("nested more than 512 levels deep") }
      advance()
      var elements: [JSONValue] = []
      if try peekSignificant() == UInt8(ascii: "]") {
        advance()
        return .array(elements)
      }
      while true {
        elements.append(try value(depth: depth + 1))
        let after = try peekSignificant()
        advance()
        if after == UInt8(ascii: "]") { return .array(elements) }
        guard after == UInt8(ascii: ",") else {
          throw failure("expected ',' or ']' after an array element", back: 1)
        }
      }
    case UInt8(ascii: "\""): return .string(try string())
    case UInt8(ascii: "t"):
      try literal("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try literal("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try literal("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
    default:
      throw failure("expected a value (object, array, string, number, true, false or null)")
    }
  }

  private func literal(_ word: String) throws(JSONError) {
    for expected in word.utf8 {
      guard try peek() == expected else { throw failure("expected '\(word)'") }
      advance()
    }
  }

  private func number() throws(JSONError) -> JSONValue {
    var text: [UInt8] = []
    var isInteger = true
    func digits() throws(JSONError) -> Int {
      var count = 0
      while let c = try peek(), c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") {
        text.append(c)
        advance()
        count += 1
      }
      return count
    }
    if try peek() == UInt8(ascii: "-") {
      text.append(UInt8(ascii: "-"))
      advance()
    }
    let leadingZero = try peek() == UInt8(ascii: "0")
    let whole = try digits()
    guard whole > 0 else { throw failure("expected a digit") }
    if leadingZero && whole > 1 { throw failure("a number cannot start with 0", back: whole - 1) }
    if try peek() == UInt8(ascii: ".") {
      isInteger = false
      text.append(UInt8(ascii: "."))
      advance()
      guard try digits() > 0 else { throw failure("expected a digit after '.'") }
    }
    if let c = try peek(), c == UInt8(ascii: "e") || c == UInt8(ascii: "E") {
      isInteger = false
      text.append(c)
      advance()
      if let sign = try peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") {
        text.append(sign)
        advance()
      }
      guard try digits() > 0 else { throw failure("expected a digit in the exponent") }
    }
    let spelled = String(decoding: text, as: UTF8.self)
    if isInteger, let integer = Int64(spelled) { return .integer(integer) }
    guard let real = Double(spelled), real.isFinite else {
      throw failure("the number \(spelled) is out of range")
    }
    return .real(real)
  }

  private func string() throws(JSONError) -> String {
    advance()  // the opening quote
    var bytes: [UInt8] = []
    while true {
      guard let c = try peek() else { throw failure("the string does not end") }
      advance()
      switch c {
      case UInt8(ascii: "\""):
        guard let text = String(validating: bytes, as: UTF8.self) else {
          throw failure("the string is not valid UTF-8", back: 1)
        }
        return text
      case UInt8(ascii: "\\"):
        guard let escaped = try peek() else { throw failure("the string does not end") }
        advance()
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escaped)
        case UInt8(ascii: "b"): bytes.append(0x08)
        case UInt8(ascii: "f"): bytes.append(0x0C)
        case UInt8(ascii: "n"): bytes.append(0x0A)
        case UInt8(ascii: "r"): bytes.append(0x0D)
        case UInt8(ascii: "t"): bytes.append(0x09)
        case UInt8(ascii: "u"):
          var scalar = try hexQuad()
          if (0xD800..<0xDC00).contains(scalar) {
            guard try peek() == UInt8(ascii: "\\") else {
              throw failure("a high surrogate \\u escape must be followed by a low one")
            }
            advance()
            guard try peek() == UInt8(ascii: "u") else {
              throw failure("a high surrogate \\u escape must be followed by a low one")
            }
            advance()
            let low = try hexQuad()
            guard (0xDC00..<0xE000).contains(low) else {
              throw failure("a high surrogate \\u escape must be followed by a low one", back: 6)
            }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
          }
          guard let unicode = Unicode.Scalar(scalar) else {
            throw failure("\\u escape of a lone surrogate", back: 6)
          }
          bytes.append(contentsOf: String(Character(unicode)).utf8)
        default: throw failure("unknown escape '\\\(Character(Unicode.Scalar(escaped)))'", back: 1)
        }
      case 0..<0x20:
        throw failure("a control character in a string must be escaped", back: 1)
      default: bytes.append(c)
      }
    }
  }

  private func hexQuad() throws(JSONError) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard let c = try peek(), let digit = hexDigit(c) else {
        throw failure("expected four hexadecimal digits after \\u")
      }
      value = value << 4 | digit
      advance()
    }
    return value
  }

  private func hexDigit(_ c: UInt8) -> UInt32? {
    switch c {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(c - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(c - UInt8(ascii: "A") + 10)
    default: return nil
    }
  }

  // MARK: Bytes

  private func expect(_ byte: UInt8, _ what: String) throws(JSONError) {
    guard try peekSignificant() == byte else { throw failure("expected \(what)") }
    advance()
  }

  private func skipSpace() throws(JSONError) {
    while let c = try peek(),
      c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09
    {
      advance()
    }
  }

  private func peek() throws(JSONError) -> UInt8? {
    while index == buffer.count {
      guard !finished, let chunk = try more() else {
        finished = true
        return nil
      }
      buffer = chunk
      index = 0
    }
    return buffer[index]
  }

  /// Moves past the character `peek` returned.
  private func advance() {
    guard index < buffer.count else { return }
    if buffer[index] == 0x0A {
      line += 1
      column = 1
    } else {
      column += 1
    }
    index += 1
  }

  private func failure(_ detail: String, back: Int = 0) -> JSONError {
    JSONError(detail, line: line, column: max(1, column - back))
  }
}
