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
}
