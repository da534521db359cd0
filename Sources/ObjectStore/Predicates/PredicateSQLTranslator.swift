import ObjectModel
import SQLite

/// Translates a ``Predicate`` into an SQL condition over one table of the store's layout, with
/// its values as bindings. Only what maps to a column is translated; the rest is left to
/// ``PredicateEvaluator``, which decides every match, so the SQL may narrow but never wrongly
/// exclude.
struct PredicateSQLTranslator {
  /// The table whose columns the condition names.
  let table: StoreLayout.Table
  /// The store's layout, for `NSPredicate`-format parts.
  let layout: StoreLayout
  /// The `NSPredicate`-format parts, checked.
  var formats: [String: ResolvedPredicate] = [:]

  /// The predicate as SQL over the table's columns, when every key maps to a column; it only
  /// narrows the rows read (the predicate is evaluated again in memory).
  func translate(_ predicate: Predicate, bindings: inout [SQLiteValue]) -> String? {
    func column(_ key: String) -> String? {
      for columns in table.attributes.values {
        if let match = columns.first(where: { $0.attribute.name == key }) { return match.column }
      }
      for columns in table.toOne.values {
        if let match = columns.first(where: { $0.relationship.name == key }) { return match.column }
      }
      return nil
    }
    func binary(_ key: String, _ op: String, _ value: AttributeValue?) -> String? {
      guard let column = column(key) else { return nil }
      bindings.append(value.map { SQLValues.sqlite($0) } ?? .null)
      return "\(column) \(op) ?"
    }
    switch predicate {
    case .equal(let key, let value): return binary(key, "IS", value)
    case .notEqual(let key, let value): return binary(key, "IS NOT", value)
    case .less(let key, let value): return binary(key, "<", value)
    case .lessOrEqual(let key, let value): return binary(key, "<=", value)
    case .greater(let key, let value): return binary(key, ">", value)
    case .greaterOrEqual(let key, let value): return binary(key, ">=", value)
    case .relatedTo(let key, let reference):
      guard let column = column(key) else { return nil }
      bindings.append(reference.map { .integer($0.primaryKey) } ?? .null)
      return "\(column) IS ?"
    case .and(let all):
      var parts: [String] = []
      for part in all {
        if let sql = translate(part, bindings: &bindings) { parts.append("(\(sql))") }
      }
      return parts.isEmpty ? nil : parts.joined(separator: " AND ")
    case .or(let any):
      var parts: [String] = []
      var local: [SQLiteValue] = []
      for part in any {
        guard let sql = translate(part, bindings: &local) else { return nil }
        parts.append("(\(sql))")
      }
      bindings += local
      return parts.joined(separator: " OR ")
    case .not:
      return nil
    case .format(let text):
      // Tests SQL cannot make (extended attributes) are left to the evaluation in memory.
      guard let resolved = formats[text]?.sqlNarrowing else { return nil }
      var sql = PredicateSQL(layout: layout)
      var local: [SQLiteValue] = []
      guard let condition = try? sql.condition(resolved, alias: table.name, bindings: &local)
      else { return nil }
      bindings += local
      return condition
    }
  }
}
