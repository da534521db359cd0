/// A JSON value, keeping what JSON text says: integers apart from reals (so that `1` and `1.0`
/// stay different), and object members in the order they were written.
public enum JSONValue: Hashable, Sendable {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number written without a fraction or exponent that fits in 64 bits.
  case integer(Int64)
  /// Any other number.
  case real(Double)
  /// A string.
  case string(String)
  /// An array.
  case array([JSONValue])
  /// An object's members, in order.
  case object([(key: String, value: JSONValue)])

  /// The member named `key`, when this is an object that has one.
  public subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.key == key }?.value
  }

  /// The members, when this is an object.
  public var objectMembers: [(key: String, value: JSONValue)]? {
    if case .object(let members) = self { return members }
    return nil
  }

  /// The elements, when this is an array.
  public var arrayValue: [JSONValue]? {
    if case .array(let elements) = self { return elements }
    return nil
  }

  /// The string, when this is a string.
  public var stringValue: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  /// The integer, when this is an integer.
  public var integerValue: Int64? {
    if case .integer(let value) = self { return value }
    return nil
  }

  /// The number as a double, when this is a number.
  public var doubleValue: Double? {
    switch self {
    case .integer(let value): return Double(value)
    case .real(let value): return value
    default: return nil
    }
  }

  /// The boolean, when this is one.
  public var boolValue: Bool? {
    if case .bool(let value) = self { return value }
    return nil
  }

  /// A short name of the value's kind, for messages (`a string`, `an object`).
  public var kindName: String {
    switch self {
    case .null: return "null"
    case .bool: return "a boolean"
    case .integer: return "an integer"
    case .real: return "a number"
    case .string: return "a string"
    case .array: return "an array"
    case .object: return "an object"
    }
  }

  /// Whether two values are the same JSON (objects member by member in order; NaN equal to
  /// itself).
  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): return true
    case (.bool(let a), .bool(let b)): return a == b
    case (.integer(let a), .integer(let b)): return a == b
    case (.real(let a), .real(let b)): return a == b || (a.isNaN && b.isNaN)
    case (.string(let a), .string(let b)): return a == b
    case (.array(let a), .array(let b)): return a == b
    case (.object(let a), .object(let b)):
      return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    default: return false
    }
  }

  /// Hashes the value consistently with `==`.
  public func hash(into hasher: inout Hasher) {
    switch self {
    case .null: hasher.combine(0)
    case .bool(let value): hasher.combine(value)
    case .integer(let value): hasher.combine(value)
    case .real(let value): hasher.combine(value.isNaN ? .nan : value)
    case .string(let value): hasher.combine(value)
    case .array(let elements): hasher.combine(elements)
    case .object(let members):
      for (key, value) in members {
        hasher.combine(key)
        hasher.combine(value)
      }
    }
  }
}
