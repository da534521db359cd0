/// A value decoded from an ``KeyedArchive``.
public enum KeyedArchiveValue: Sendable {
  /// `$null`, `NSNull`, or an absent object.
  case null
  /// A boolean (`NSNumber`).
  case bool(Bool)
  /// An integer (`NSNumber`).
  case integer(Int64)
  /// A real (`NSNumber`).
  case real(Double)
  /// A string (`NSString`).
  case string(String)
  /// Bytes (`NSData`).
  case data([UInt8])
  /// A date (`NSDate`).
  case date(PropertyListDate)
  /// An array (`NSArray`, `NSOrderedSet`).
  case array([KeyedArchiveValue])
  /// A set's members, in archive order (`NSSet`).
  case set([KeyedArchiveValue])
  /// A dictionary's entries, in archive order (`NSDictionary`); keys may be any value.
  case dictionary([(key: KeyedArchiveValue, value: KeyedArchiveValue)])
  /// An object of any other class.
  case object(KeyedArchiveObject)

  /// The string, when this is a string.
  public var stringValue: String? {
    if case .string(let v) = self { return v }
    return nil
  }

  /// The integer, when this is an integer (or a boolean, as 0 or 1).
  public var integerValue: Int64? {
    switch self {
    case .integer(let v): return v
    case .bool(let v): return v ? 1 : 0
    default: return nil
    }
  }

  /// The boolean, when this is a boolean or an integer.
  public var boolValue: Bool? {
    switch self {
    case .bool(let v): return v
    case .integer(let v): return v != 0
    default: return nil
    }
  }

  /// The number as a double, when this is numeric.
  public var doubleValue: Double? {
    switch self {
    case .integer(let v): return Double(v)
    case .real(let v): return v
    default: return nil
    }
  }

  /// The bytes, when this is data.
  public var dataValue: [UInt8]? {
    if case .data(let v) = self { return v }
    return nil
  }

  /// The elements, when this is an array or a set.
  public var arrayValue: [KeyedArchiveValue]? {
    switch self {
    case .array(let v), .set(let v): return v
    default: return nil
    }
  }

  /// The entries, when this is a dictionary.
  public var dictionaryEntries: [(key: KeyedArchiveValue, value: KeyedArchiveValue)]? {
    if case .dictionary(let v) = self { return v }
    return nil
  }

  /// The entries keyed by string, when this is a dictionary whose keys are all strings.
  public var stringKeyedDictionary: [String: KeyedArchiveValue]? {
    guard case .dictionary(let entries) = self else { return nil }
    var result: [String: KeyedArchiveValue] = [:]
    for (key, value) in entries {
      guard let name = key.stringValue else { return nil }
      result[name] = value
    }
    return result
  }

  /// The object, when this is an object of a non-Foundation class.
  public var objectValue: KeyedArchiveObject? {
    if case .object(let v) = self { return v }
    return nil
  }

  /// Whether this is null.
  public var isNull: Bool {
    if case .null = self { return true }
    return false
  }

  /// A short name of the value's kind, for messages.
  public var kindName: String {
    switch self {
    case .null: return "null"
    case .bool: return "bool"
    case .integer: return "integer"
    case .real: return "real"
    case .string: return "string"
    case .data: return "data"
    case .date: return "date"
    case .array: return "array"
    case .set: return "set"
    case .dictionary: return "dictionary"
    case .object(let o): return "object of class \(o.className)"
    }
  }
}
