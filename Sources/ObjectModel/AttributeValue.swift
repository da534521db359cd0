/// A typed attribute value, as a store holds it: the value of one attribute of one object, or an
/// attribute's default.
public enum AttributeValue: Hashable, Sendable, Codable {
  /// An integer (integer 16/32/64 attributes).
  case integer(Int64)
  /// A floating-point number (double and float attributes).
  case double(Double)
  /// A decimal, as its exact decimal string (`"10.11"`).
  case decimal(String)
  /// A string.
  case string(String)
  /// A boolean.
  case bool(Bool)
  /// A date, in seconds since 2001-01-01 00:00:00 UTC.
  case date(Double)
  /// Raw bytes (binary data).
  case data([UInt8])
  /// A UUID as its 16 bytes.
  case uuid([UInt8])
  /// A URI as its absolute string.
  case uri(String)
  /// The bytes a value transformer produced.
  case transformed([UInt8])
  /// A composite attribute's value: its elements' values by element name (an element without
  /// a value is absent), as Core Data keeps a composite in a dictionary.
  case composite([String: AttributeValue])

  /// Parses Xcode's `defaultValueString` for an attribute of `type` (`nil` when it does not
  /// parse as that type).
  public init?(defaultValueString text: String, type: AttributeType) {
    switch type {
    case .integer16, .integer32, .integer64:
      guard let value = Int64(text) else { return nil }
      self = .integer(value)
    case .double, .float:
      guard let value = Double(text) else { return nil }
      self = .double(value)
    case .decimal:
      guard Double(text) != nil else { return nil }
      self = .decimal(text)
    case .boolean:
      switch text.uppercased() {
      case "YES", "TRUE", "1": self = .bool(true)
      case "NO", "FALSE", "0": self = .bool(false)
      default: return nil
      }
    case .string: self = .string(text)
    case .uri: self = .uri(text)
    case .uuid:
      guard let bytes = AttributeValue.uuidBytes(text) else { return nil }
      self = .uuid(bytes)
    case .date:
      guard let seconds = Double(text) else { return nil }
      self = .date(seconds)
    case .binaryData, .transformable, .objectID, .undefined, .composite:
      return nil
    }
  }

  /// The 16 bytes of a UUID written as `8-4-4-4-12` hexadecimal digits.
  public static func uuidBytes(_ text: String) -> [UInt8]? {
    let hex = text.filter { $0 != "-" }
    guard hex.count == 32 else { return nil }
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
      let next = hex.index(index, offsetBy: 2)
      guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
      bytes.append(byte)
      index = next
    }
    return bytes
  }
}

extension AttributeValue {
  /// A binary value as a person reads it: `<N bytes: 0a1b2c3d…>`, its size and up to 8 leading
  /// bytes in hexadecimal, never every byte.
  public static func summary(ofBinary bytes: [UInt8]) -> String {
    guard !bytes.isEmpty else { return "<0 bytes>" }
    let head = bytes.prefix(8).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    return "<\(bytes.count) bytes: \(head)\(bytes.count > 8 ? "…" : "")>"
  }
}
