import Foundation
import ObjectModel
import PropertyList

/// Changes of an attribute's type during a migration: the lossless ones a migration infers, and
/// the wider set a mapping file may ask for with `"convert": true`.
enum ValueConversion {
  /// Whether a value of type `source` always converts to `destination` without loss: the same
  /// type, integer widening, integers to double or decimal, float to double, a number or
  /// boolean to a string, a URI to a string, a boolean to an integer.
  static func isLossless(from source: AttributeType, to destination: AttributeType) -> Bool {
    if source == destination { return true }
    switch (source, destination) {
    case (.integer16, .integer32), (.integer16, .integer64), (.integer32, .integer64),
      (.integer16, .double), (.integer32, .double), (.integer16, .decimal),
      (.integer32, .decimal), (.integer64, .decimal), (.float, .double),
      (.boolean, .integer16), (.boolean, .integer32), (.boolean, .integer64),
      (.uri, .string):
      return true
    case (.integer16, .string), (.integer32, .string), (.integer64, .string), (.double, .string),
      (.float, .string), (.decimal, .string), (.boolean, .string):
      return true
    default:
      return false
    }
  }

  /// `value` as a value of `type`, or nil when it cannot be (text that is not a number, an
  /// integer out of range).
  static func convert(_ value: AttributeValue, to type: AttributeType) -> AttributeValue? {
    switch type {
    case .integer16:
      return integer(value).flatMap { Int16(exactly: $0) != nil ? .integer($0) : nil }
    case .integer32:
      return integer(value).flatMap { Int32(exactly: $0) != nil ? .integer($0) : nil }
    case .integer64: return integer(value).map { .integer($0) }
    case .double, .float: return double(value).map { .double($0) }
    case .decimal:
      switch value {
      case .decimal: return value
      case .integer(let v): return .decimal(String(v))
      case .double(let v): return .decimal(String(v))
      case .string(let v):
        let trimmed = v.trimmingCharacters(in: .whitespaces)
        return Double(trimmed) != nil ? .decimal(trimmed) : nil
      case .bool(let v): return .decimal(v ? "1" : "0")
      default: return nil
      }
    case .string: return text(value).map { .string($0) }
    case .uri: return text(value).map { .uri($0) }
    case .boolean:
      switch value {
      case .bool: return value
      case .integer(let v): return .bool(v != 0)
      case .string(let v):
        switch v.trimmingCharacters(in: .whitespaces).uppercased() {
        case "YES", "TRUE", "1": return .bool(true)
        case "NO", "FALSE", "0": return .bool(false)
        default: return nil
        }
      default: return nil
      }
    case .date:
      switch value {
      case .date: return value
      case .double(let v): return .date(v)
      case .integer(let v): return .date(Double(v))
      case .string(let v):
        if let seconds = Double(v) { return .date(seconds) }
        return ISO8601.parse(v).map { .date($0.secondsSinceReferenceDate) }
      default: return nil
      }
    case .uuid:
      switch value {
      case .uuid: return value
      case .string(let v): return AttributeValue.uuidBytes(v).map { .uuid($0) }
      case .data(let v) where v.count == 16: return .uuid(v)
      default: return nil
      }
    case .binaryData, .objectID, .undefined:
      switch value {
      case .data(let v), .uuid(let v), .transformed(let v): return .data(v)
      case .string(let v): return .data(Array(v.utf8))
      default: return nil
      }
    case .transformable:
      switch value {
      case .data(let v), .transformed(let v): return .transformed(v)
      default: return nil
      }
    case .composite:
      // Composites migrate element by element (their values are the elements').
      if case .composite = value { return value }
      return nil
    }
  }

  /// The value as text: numbers in their shortest form, booleans as `1`/`0` (as `NSNumber`
  /// writes them), UUIDs in `8-4-4-4-12` form; nil for binary values.
  static func text(_ value: AttributeValue) -> String? {
    switch value {
    case .string(let v), .decimal(let v), .uri(let v): return v
    case .integer(let v): return String(v)
    case .double(let v):
      return v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    case .bool(let v): return v ? "1" : "0"
    case .date(let v):
      return ISO8601.format(
        PropertyListDate(secondsSinceReferenceDate: v), fractionalSeconds: true)
    case .uuid(let v): return uuidText(v)
    case .data, .transformed, .composite: return nil
    }
  }

  static func uuidText(_ bytes: [UInt8]) -> String {
    let hex = bytes.map { byte in
      let digits = String(byte, radix: 16, uppercase: true)
      return byte < 16 ? "0" + digits : digits
    }.joined()
    guard hex.count == 32 else { return hex }
    var parts: [Substring] = []
    var index = hex.startIndex
    for length in [8, 4, 4, 4, 12] {
      let end = hex.index(index, offsetBy: length)
      parts.append(hex[index..<end])
      index = end
    }
    return parts.joined(separator: "-")
  }

  private static func integer(_ value: AttributeValue) -> Int64? {
    switch value {
    case .integer(let v): return v
    case .bool(let v): return v ? 1 : 0
    case .double(let v): return v.isFinite && v == v.rounded() ? Int64(exactly: v) : nil
    case .decimal(let v), .string(let v):
      return Int64(v.trimmingCharacters(in: .whitespaces))
    default: return nil
    }
  }

  private static func double(_ value: AttributeValue) -> Double? {
    switch value {
    case .integer(let v): return Double(v)
    case .double(let v), .date(let v): return v
    case .bool(let v): return v ? 1 : 0
    case .decimal(let v), .string(let v): return Double(v.trimmingCharacters(in: .whitespaces))
    default: return nil
    }
  }
}
