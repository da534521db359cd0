/// Writes JSON text: deterministic (members in the order given, numbers in one spelling), either
/// pretty (two-space indents, a short object or array of plain values on one line) or compact
/// (one line, for JSON Lines).
public enum JSONWriter {
  /// How the text is laid out.
  public enum Style: Sendable {
    /// Indented by two spaces per level, a short container of plain values on one line.
    case pretty
    /// One line, no spaces.
    case compact
  }

  /// The widest container of plain values that pretty text keeps on one line.
  static let inlineWidth = 72

  /// The text of `value` as UTF-8, without a final newline.
  /// - Parameter level: the indent level the value starts at (pretty text).
  public static func encode(_ value: JSONValue, style: Style = .pretty, level: Int = 0) -> [UInt8] {
    var output: [UInt8] = []
    append(value, to: &output, style: style, level: level)
    return output
  }

  /// Appends the text of `value` to `output`.
  public static func append(
    _ value: JSONValue, to output: inout [UInt8], style: Style, level: Int = 0
  ) {
    switch value {
    case .null: output.append(contentsOf: "null".utf8)
    case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
    case .integer(let number): output.append(contentsOf: String(number).utf8)
    case .real(let number): output.append(contentsOf: spelling(of: number).utf8)
    case .string(let text): appendString(text, to: &output)
    case .array(let elements):
      appendContainer(
        elements.map { (nil, $0) }, open: UInt8(ascii: "["), close: UInt8(ascii: "]"),
        to: &output, style: style, level: level)
    case .object(let members):
      appendContainer(
        members.map { ($0.key, $0.value) }, open: UInt8(ascii: "{"), close: UInt8(ascii: "}"),
        to: &output, style: style, level: level)
    }
  }

  /// A finite double in its shortest spelling that reads back as the same double, always with
  /// a fraction or an exponent (`1.0`, `2.5e-07`), so it stays a real when read again.
  /// JSON has no spelling for NaN or the infinities; they are written as `null`.
  public static func spelling(of number: Double) -> String {
    guard number.isFinite else { return "null" }
    let text = "\(number)"
    if text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) { return text }
    return text + ".0"
  }

  /// Appends `text` as a JSON string, escaping quotes, backslashes and control characters.
  public static func appendString(_ text: String, to output: inout [UInt8]) {
    output.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
      case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
      case 0x0A: output.append(contentsOf: "\\n".utf8)
      case 0x0D: output.append(contentsOf: "\\r".utf8)
      case 0x09: output.append(contentsOf: "\\t".utf8)
      case 0x08: output.append(contentsOf: "\\b".utf8)
      case 0x0C: output.append(contentsOf: "\\f".utf8)
      case 0..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        output.append(contentsOf: "\\u00".utf8)
        output.append(hex[Int(byte >> 4)])
        output.append(hex[Int(byte & 0xF)])
      default: output.append(byte)
      }
    }
    output.append(UInt8(ascii: "\""))
  }

  private static func appendContainer(
    _ items: [(String?, JSONValue)], open: UInt8, close: UInt8, to output: inout [UInt8],
    style: Style, level: Int
  ) {
    output.append(open)
    defer { output.append(close) }
    guard !items.isEmpty else { return }
    if style == .compact {
      for (index, (key, value)) in items.enumerated() {
        if index > 0 { output.append(UInt8(ascii: ",")) }
        if let key {
          appendString(key, to: &output)
          output.append(UInt8(ascii: ":"))
        }
        append(value, to: &output, style: .compact)
      }
      return
    }
    if let line = inline(items) {
      output.append(contentsOf: line)
      return
    }
    let inner = [UInt8](repeating: UInt8(ascii: " "), count: 2 * (level + 1))
    for (index, (key, value)) in items.enumerated() {
      output.append(contentsOf: index > 0 ? ",\n".utf8 : "\n".utf8)
      output.append(contentsOf: inner)
      if let key {
        appendString(key, to: &output)
        output.append(contentsOf: ": ".utf8)
      }
      append(value, to: &output, style: .pretty, level: level + 1)
    }
    output.append(UInt8(ascii: "\n"))
    output.append(contentsOf: [UInt8](repeating: UInt8(ascii: " "), count: 2 * level))
  }

  /// The members of a container of plain values on one line (`"a": 1, "b": 2`), when they fit.
  private static func inline(_ items: [(String?, JSONValue)]) -> [UInt8]? {
    var line: [UInt8] = []
    for (index, (key, value)) in items.enumerated() {
      switch value {
      case .array, .object: return nil
      default: break
      }
      if index > 0 { line.append(contentsOf: ", ".utf8) }
      if let key {
        appendString(key, to: &line)
        line.append(contentsOf: ": ".utf8)
      }
      append(value, to: &line, style: .compact)
      if line.count > inlineWidth { return nil }
    }
    return line
  }
}
