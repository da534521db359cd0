/// A value stored in or read from SQLite, one case per fundamental SQLite type.
public enum SQLiteValue: Sendable, Hashable, CustomStringConvertible {
  /// SQL `NULL`.
  case null
  /// A 64-bit signed integer.
  case integer(Int64)
  /// An IEEE 754 double.
  case real(Double)
  /// UTF-8 text.
  case text(String)
  /// Raw bytes.
  case blob([UInt8])

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

  /// The text, when this is text.
  public var textValue: String? {
    if case .text(let value) = self { return value }
    return nil
  }

  /// The bytes, when this is a blob.
  public var blobValue: [UInt8]? {
    if case .blob(let value) = self { return value }
    return nil
  }

  /// Whether this is SQL `NULL`.
  public var isNull: Bool { self == .null }

  /// A short rendering for messages and debugging (blobs by size only).
  public var description: String {
    switch self {
    case .null: return "NULL"
    case .integer(let value): return String(value)
    case .real(let value): return String(value)
    case .text(let value): return "'\(value)'"
    case .blob(let value): return "<blob \(value.count) bytes>"
    }
  }
}

extension SQLiteValue: ExpressibleByNilLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByFloatLiteral, ExpressibleByStringLiteral
{
  /// SQL `NULL`.
  public init(nilLiteral: ()) { self = .null }
  /// An integer value.
  public init(integerLiteral value: Int64) { self = .integer(value) }
  /// A real value.
  public init(floatLiteral value: Double) { self = .real(value) }
  /// A text value.
  public init(stringLiteral value: String) { self = .text(value) }
}
