import ObjectModel

extension AttributeValue {
  /// Orders values of comparable kinds (numbers with numbers, strings, dates, booleans, bytes);
  /// nil when the kinds cannot be compared.
  static func compare(_ lhs: AttributeValue, _ rhs: AttributeValue) -> Int? {
    func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a > b ? 1 : 0) }
    switch (lhs, rhs) {
    case (.string(let a), .string(let b)), (.uri(let a), .uri(let b)):
      // By UTF-8 bytes, as SQLite's BINARY collation orders text (and Core Data's SQL).
      return a.utf8.lexicographicallyPrecedes(b.utf8)
        ? -1 : (b.utf8.lexicographicallyPrecedes(a.utf8) ? 1 : 0)
    case (.date(let a), .date(let b)): return sign(a, b)
    case (.bool(let a), .bool(let b)): return sign(a ? 1 : 0, b ? 1 : 0)
    case (.data(let a), .data(let b)), (.uuid(let a), .uuid(let b)),
      (.transformed(let a), .transformed(let b)):
      return a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1)
    default:
      guard let a = lhs.numericValue, let b = rhs.numericValue else { return nil }
      return sign(a, b)
    }
  }

  /// Orders optional values for sorting: nil first, then by value (values of kinds that cannot
  /// be compared count as equal).
  static func compare(_ lhs: AttributeValue?, _ rhs: AttributeValue?) -> Int {
    switch (lhs, rhs) {
    case (nil, nil): return 0
    case (nil, _): return -1
    case (_, nil): return 1
    case (let a?, let b?): return compare(a, b) ?? 0
    }
  }

  var numericValue: Double? {
    switch self {
    case .integer(let v): return Double(v)
    case .double(let v): return v
    case .decimal(let v): return Double(v)
    case .bool(let v): return v ? 1 : 0
    default: return nil
    }
  }

  /// Whether the value's kind fits an attribute of `type`.
  func fits(_ type: AttributeType) -> Bool {
    switch (self, type) {
    case (.integer, .integer16), (.integer, .integer32), (.integer, .integer64): return true
    case (.double, .double), (.double, .float), (.decimal, .decimal), (.string, .string):
      return true
    case (.bool, .boolean), (.date, .date), (.data, .binaryData), (.uuid, .uuid): return true
    case (.uri, .uri), (.transformed, .transformable), (.data, .transformable): return true
    case (_, .undefined), (_, .objectID): return true
    default: return false
    }
  }
}
