import ObjectModel
import SQLite

/// Conversions between typed values and SQLite values, as Core Data stores them.
package enum SQLValues {
  package static func sqlite(_ value: AttributeValue) -> SQLiteValue {
    switch value {
    case .integer(let v): return .integer(v)
    case .double(let v), .date(let v): return .real(v)
    case .decimal(let v): return Double(v).map(SQLiteValue.real) ?? .text(v)
    case .string(let v), .uri(let v): return .text(v)
    case .bool(let v): return .integer(v ? 1 : 0)
    case .data(let v), .uuid(let v), .transformed(let v): return .blob(v)
    case .composite:
      // A composite has no column: each element has its own (see ObjectModel.attributes(of:)).
      preconditionFailure("a composite value has no column of its own; store its elements")
    }
  }

  /// A stored value typed by an attribute's type, as ``TableReader`` reads it; nil for NULL.
  static func attribute(_ value: SQLiteValue, type: AttributeType) -> AttributeValue? {
    func number() -> Double? {
      switch value {
      case .integer(let v): return Double(v)
      case .real(let v): return v
      case .text(let v): return Double(v)
      default: return nil
      }
    }
    func bytes() -> [UInt8] {
      switch value {
      case .blob(let v): return v
      case .text(let v): return Array(v.utf8)
      default: return []
      }
    }
    switch (type, value) {
    case (_, .null): return nil
    case (.integer16, _), (.integer32, _), (.integer64, _):
      if case .integer(let v) = value { return .integer(v) }
      return number().map { .integer(Int64($0)) }
    case (.boolean, _): return number().map { .bool($0 != 0) }
    case (.double, _), (.float, _): return number().map(AttributeValue.double)
    case (.decimal, .text(let v)): return .decimal(v)
    case (.decimal, _): return number().map { .decimal(DecimalText.format($0)) }
    case (.date, _): return number().map(AttributeValue.date)
    case (.string, .text(let v)): return .string(v)
    case (.uri, .text(let v)): return .uri(v)
    case (.string, _), (.uri, _): return nil
    case (.uuid, _): return .uuid(bytes())
    case (.binaryData, _), (.objectID, _), (.undefined, _): return .data(bytes())
    case (.transformable, _): return .transformed(bytes())
    case (.composite, _): return nil
    }
  }

  /// Orders two values as SQLite's `ORDER BY` does with the `BINARY` collation: NULL first,
  /// then numbers (integers and reals by value), then text (by UTF-8 bytes), then blobs (by
  /// bytes).
  static func order(_ a: SQLiteValue, _ b: SQLiteValue) -> Int {
    func rank(_ value: SQLiteValue) -> Int {
      switch value {
      case .null: return 0
      case .integer, .real: return 1
      case .text: return 2
      case .blob: return 3
      }
    }
    func sign<T: Comparable>(_ x: T, _ y: T) -> Int { x < y ? -1 : (x > y ? 1 : 0) }
    func bytes<S: Sequence<UInt8>>(_ x: S, _ y: S) -> Int {
      x.lexicographicallyPrecedes(y) ? -1 : (y.lexicographicallyPrecedes(x) ? 1 : 0)
    }
    switch (a, b) {
    case (.integer(let x), .integer(let y)): return sign(x, y)
    case (.integer(let x), .real(let y)): return sign(Double(x), y)
    case (.real(let x), .integer(let y)): return sign(x, Double(y))
    case (.real(let x), .real(let y)): return sign(x, y)
    case (.text(let x), .text(let y)): return bytes(x.utf8, y.utf8)
    case (.blob(let x), .blob(let y)): return bytes(x, y)
    default: return sign(rank(a), rank(b))
    }
  }
}
