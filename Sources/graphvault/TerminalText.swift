/// Text from an archive (a header's source path or model name, a file's name) made safe to
/// show on a terminal: control characters, which could move the cursor, rewrite the title or
/// forge a line, are shown escaped (`\x1b`, `\n`, `\u{9b}`) instead of being sent.
enum TerminalText {
  /// `line` with every C0 and C1 control character and DEL written as an escape.
  static func escaped(_ line: String) -> String {
    guard line.unicodeScalars.contains(where: isControl) else { return line }
    var result = ""
    for scalar in line.unicodeScalars {
      guard isControl(scalar) else {
        result.unicodeScalars.append(scalar)
        continue
      }
      switch scalar {
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      default:
        let hex = String(scalar.value, radix: 16)
        result += scalar.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{\(hex)}"
      }
    }
    return result
  }

  private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
  }
}
