import Foundation
import ObjectModel

/// Attribute values as a person reads them in a diff or a search: strings quoted (and cut
/// after ``limit`` characters), dates in ISO 8601 (UTC), binary values by their size and first
/// bytes, UUIDs in their usual form.
enum ValueText {
  /// The characters of a string shown before it is cut.
  static let limit = 60

  static func text(_ value: AttributeValue) -> String {
    switch value {
    case .integer(let number): return String(number)
    case .double(let number): return String(number)
    case .decimal(let text): return text
    case .string(let text): return quoted(text)
    case .uri(let text): return "<\(shortened(text))>"
    case .bool(let flag): return flag ? "true" : "false"
    case .date(let seconds):
      let formatter = ISO8601DateFormatter()
      formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
      return formatter.string(from: Date(timeIntervalSinceReferenceDate: seconds))
    case .uuid(let bytes) where bytes.count == 16: return ObjectJSON.uuidText(bytes)
    case .data(let bytes), .uuid(let bytes), .transformed(let bytes):
      return AttributeValue.summary(ofBinary: bytes)
    case .composite(let elements):
      return "{"
        + elements.keys.sorted().map { "\($0): \(text(elements[$0]!))" }.joined(
          separator: ", ") + "}"
    }
  }

  /// The string in double quotes, with quotes, backslashes and control characters escaped,
  /// cut after ``limit`` characters.
  static func quoted(_ text: String) -> String {
    var result = "\""
    for scalar in shortened(text).unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\t": result += "\\t"
      case "\r": result += "\\r"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        result += String(format: "\\u%04x", scalar.value)
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }

  private static func shortened(_ text: String) -> String {
    text.count > limit ? String(text.prefix(limit)) + "…" : text
  }
}
