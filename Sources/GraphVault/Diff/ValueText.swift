import Foundation
import JSON
import ObjectModel
import PropertyList

/// Attribute values as a person reads them in a diff or a search: strings quoted and whole
/// (a terminal's display cuts them, not this), dates in ISO 8601 (UTC), binary values by their
/// size and first bytes, UUIDs in their usual form.
enum ValueText {
  static func text(_ value: AttributeValue) -> String {
    switch value {
    case .integer(let number): return String(number)
    case .double(let number): return String(number)
    case .decimal(let text): return text
    case .string(let text): return quoted(text)
    case .uri(let text): return "<\(text)>"
    case .bool(let flag): return flag ? "true" : "false"
    case .date(let seconds):
      let formatter = ISO8601DateFormatter()
      formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
      return formatter.string(from: Date(timeIntervalSinceReferenceDate: seconds))
    case .uuid(let bytes) where bytes.count == 16: return ObjectJSON.uuidText(bytes)
    case .data(let bytes), .transformed(let bytes):
      return decoded(bytes) ?? AttributeValue.summary(ofBinary: bytes)
    case .uuid(let bytes):
      return AttributeValue.summary(ofBinary: bytes)
    case .composite(let elements):
      return "{"
        + elements.keys.sorted().map { "\($0): \(text(elements[$0]!))" }.joined(
          separator: ", ") + "}"
    }
  }

  /// The most bytes of a binary value read as JSON or a property list for display.
  static let decodedLimit = 64 * 1024

  /// What a binary value holds, when it is JSON text (a Codable collection SwiftData keeps,
  /// `json ["Coffee"]`) or a property list that is not a keyed archive
  /// (`plist {"a":1}`): read as data, never run. Nil otherwise.
  static func decoded(_ bytes: [UInt8]) -> String? {
    guard bytes.count <= decodedLimit,
      let first = bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) })
    else { return nil }
    let json: JSONValue
    let kind: String
    if first == UInt8(ascii: "[") || first == UInt8(ascii: "{") {
      let reader = JSONReader(bytes: bytes)
      guard let value = try? reader.value(), (try? reader.end()) != nil else { return nil }
      (json, kind) = (value, "json")
    } else if bytes.starts(with: Array("bplist00".utf8)),
      let plist = try? PropertyListValue(binaryPropertyList: bytes),
      plist["$archiver"] == nil
    {
      (json, kind) = (PropertyListJSON.json(plist), "plist")
    } else {
      return nil
    }
    let text = String(decoding: JSONWriter.encode(json, style: .compact), as: UTF8.self)
    return "\(kind) \(text)"
  }

  /// The string in double quotes, with quotes, backslashes and control characters escaped.
  static func quoted(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
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
}
