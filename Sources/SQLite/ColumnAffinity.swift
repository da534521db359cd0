/// A column's type affinity, decided from its declared type by SQLite's rules
/// (<https://sqlite.org/datatype3.html>, section 3.1): what a value stored in the column is
/// converted to.
package enum ColumnAffinity: Sendable, Equatable {
  /// Declared types with `INT`: numbers kept as integers where they are whole.
  case integer
  /// `CHAR`, `CLOB` or `TEXT`: numbers become text.
  case text
  /// `BLOB` or no declared type: nothing converted.
  case blob
  /// `REAL`, `FLOA` or `DOUB`: integers become reals (stored as integers when they fit in six
  /// bytes, and read back as reals).
  case real
  /// Anything else (`NUMERIC`, `DECIMAL`, `TIMESTAMP`, `BOOLEAN`): whole reals become integers.
  case numeric

  /// The affinity of a column declared as `declaredType`, by SQLite's rules in their order.
  package init(declaredType: String) {
    let type = declaredType.uppercased()
    if type.contains("INT") {
      self = .integer
    } else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") {
      self = .text
    } else if type.contains("BLOB") || type.isEmpty {
      self = .blob
    } else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") {
      self = .real
    } else {
      self = .numeric
    }
  }

  /// Whether SQLite turns numbers stored here into integers where they are whole.
  var prefersIntegers: Bool { self == .integer || self == .numeric || self == .real }
}
