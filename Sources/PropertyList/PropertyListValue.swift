/// A property-list value: what a binary (`bplist00`) or XML property list holds.
///
/// Dictionaries are unordered; writers emit their keys sorted, so equal values always encode to
/// equal bytes.
public enum PropertyListValue: Hashable, Sendable {
  /// A null (binary only; XML has no null).
  case null
  /// A boolean.
  case bool(Bool)
  /// A signed integer.
  case integer(Int64)
  /// A double-precision real.
  case real(Double)
  /// A date.
  case date(PropertyListDate)
  /// Raw bytes.
  case data([UInt8])
  /// A Unicode string.
  case string(String)
  /// An ordered array.
  case array([PropertyListValue])
  /// A dictionary with string keys.
  case dictionary([String: PropertyListValue])
  /// A keyed archiver's object reference (binary: marker `0x8`; XML: `{CF$UID = n}`).
  case uid(UInt64)
}

extension PropertyListValue {
  /// The string, when this is a string.
  public var stringValue: String? {
    if case .string(let value) = self { return value }
    return nil
  }

  /// The integer, when this is an integer.
  public var integerValue: Int64? {
    if case .integer(let value) = self { return value }
    return nil
  }

  /// The number as a double, when this is an integer or a real.
  public var doubleValue: Double? {
    switch self {
    case .integer(let value): return Double(value)
    case .real(let value): return value
    default: return nil
    }
  }

  /// The boolean, when this is a boolean.
  public var boolValue: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }

  /// The bytes, when this is data.
  public var dataValue: [UInt8]? {
    if case .data(let value) = self { return value }
    return nil
  }

  /// The date, when this is a date.
  public var dateValue: PropertyListDate? {
    if case .date(let value) = self { return value }
    return nil
  }

  /// The elements, when this is an array.
  public var arrayValue: [PropertyListValue]? {
    if case .array(let value) = self { return value }
    return nil
  }

  /// The entries, when this is a dictionary.
  public var dictionaryValue: [String: PropertyListValue]? {
    if case .dictionary(let value) = self { return value }
    return nil
  }

  /// The UID, when this is a UID.
  public var uidValue: UInt64? {
    if case .uid(let value) = self { return value }
    return nil
  }

  /// The value for `key`, when this is a dictionary that has it.
  public subscript(key: String) -> PropertyListValue? {
    dictionaryValue?[key]
  }

  /// A short name of the value's kind, for messages.
  public var kindName: String {
    switch self {
    case .null: return "null"
    case .bool: return "bool"
    case .integer: return "integer"
    case .real: return "real"
    case .date: return "date"
    case .data: return "data"
    case .string: return "string"
    case .array: return "array"
    case .dictionary: return "dictionary"
    case .uid: return "UID"
    }
  }
}

extension PropertyListValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral,
  ExpressibleByDictionaryLiteral
{
  /// A string value.
  public init(stringLiteral value: String) { self = .string(value) }
  /// An integer value.
  public init(integerLiteral value: Int64) { self = .integer(value) }
  /// A real value.
  public init(floatLiteral value: Double) { self = .real(value) }
  /// A boolean value.
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  /// An array value.
  public init(arrayLiteral elements: PropertyListValue...) { self = .array(elements) }
  /// A dictionary value; a repeated key keeps its last value.
  public init(dictionaryLiteral elements: (String, PropertyListValue)...) {
    self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
  }
}
