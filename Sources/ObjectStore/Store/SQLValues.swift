import ObjectModel
import SQLite

/// Conversions between typed values and SQLite values, as Core Data stores them.
enum SQLValues {
  static func sqlite(_ value: AttributeValue) -> SQLiteValue {
    switch value {
    case .integer(let v): return .integer(v)
    case .double(let v), .date(let v): return .real(v)
    case .decimal(let v): return Double(v).map(SQLiteValue.real) ?? .text(v)
    case .string(let v), .uri(let v): return .text(v)
    case .bool(let v): return .integer(v ? 1 : 0)
    case .data(let v), .uuid(let v), .transformed(let v): return .blob(v)
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
    }
  }
}
