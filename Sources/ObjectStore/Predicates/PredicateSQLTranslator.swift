import ObjectModel
import SQLite

/// Translates a ``Predicate`` into an SQL condition over one table of the store's layout, with
/// its values as bindings. What does not map to a column is left to ``PredicateEvaluator``; the
/// translation says whether it left anything out (``Translation/isExact``), since only an exact
/// condition may decide `LIMIT`, `OFFSET` and counts in SQL.
struct PredicateSQLTranslator {
  /// The table whose columns the condition names.
  let table: StoreLayout.Table
  /// The store's layout, for `NSPredicate`-format parts.
  let layout: StoreLayout
  /// The `NSPredicate`-format parts, checked.
  var formats: [Predicate.Format: ResolvedPredicate] = [:]
  /// The entity fetched, whose attributes' types the typed cases' values must fit.
  var entity: String

  /// A condition, and whether it is the whole predicate.
  struct Translation {
    /// The condition; nil when nothing narrows.
    var sql: String?
    /// Whether every row the condition lets through satisfies the predicate in memory too.
    var isExact: Bool
  }

  /// The predicate as SQL over the table's columns, as far as it maps to them.
  func translate(_ predicate: Predicate, bindings: inout [SQLiteValue]) -> Translation {
    func binary(_ key: String, _ op: String, _ value: AttributeValue?) -> Translation {
      guard let column = layout.column(ofAttribute: key, in: entity),
        let attribute = layout.model.attributes(of: entity).first(where: { $0.name == key })
      else { return Translation(sql: nil, isExact: false) }
      bindings.append(value.map { SQLValues.sqlite($0) } ?? .null)
      // A value of another kind than the attribute's is compared differently in memory.
      let fits = value.map { $0.fits(attribute.type) } ?? true
      return Translation(sql: "\(column) \(op) ?", isExact: fits)
    }
    switch predicate {
    case .equal(let key, let value): return binary(key, "IS", value)
    case .notEqual(let key, let value): return binary(key, "IS NOT", value)
    case .less(let key, let value): return binary(key, "<", value)
    case .lessOrEqual(let key, let value): return binary(key, "<=", value)
    case .greater(let key, let value): return binary(key, ">", value)
    case .greaterOrEqual(let key, let value): return binary(key, ">=", value)
    case .relatedTo(let key, let reference):
      guard let column = layout.foreignKey(ofToOne: key, in: entity) else {
        return Translation(sql: nil, isExact: false)
      }
      bindings.append(reference.map { .integer($0.primaryKey) } ?? .null)
      return Translation(sql: "\(column) IS ?", isExact: true)
    case .and(let all):
      var parts: [String] = []
      var exact = true
      for part in all {
        let translated = translate(part, bindings: &bindings)
        if let sql = translated.sql { parts.append("(\(sql))") }
        exact = exact && translated.isExact
      }
      return Translation(
        sql: parts.isEmpty ? nil : parts.joined(separator: " AND "), isExact: exact)
    case .or(let any):
      var parts: [String] = []
      var local: [SQLiteValue] = []
      var exact = true
      for part in any {
        let translated = translate(part, bindings: &local)
        guard let sql = translated.sql else { return Translation(sql: nil, isExact: false) }
        parts.append("(\(sql))")
        exact = exact && translated.isExact
      }
      bindings += local
      return Translation(sql: parts.joined(separator: " OR "), isExact: exact)
    case .not(let inner):
      var local: [SQLiteValue] = []
      let translated = translate(inner, bindings: &local)
      guard let sql = translated.sql, translated.isExact else {
        return Translation(sql: nil, isExact: false)
      }
      bindings += local
      return Translation(sql: "NOT coalesce((\(sql)), 0)", isExact: true)
    case .format(let text):
      return translate(
        .formatted(Predicate.Format(text: text, arguments: [], variables: [:])),
        bindings: &bindings)
    case .formatted(let format):
      // Tests SQL cannot make (extended attributes) are left to the evaluation in memory.
      guard let resolved = formats[format], let narrowing = resolved.sqlNarrowing else {
        return Translation(sql: nil, isExact: false)
      }
      var sql = PredicateSQL(layout: layout)
      var local: [SQLiteValue] = []
      guard let condition = try? sql.condition(narrowing, alias: table.name, bindings: &local)
      else { return Translation(sql: nil, isExact: false) }
      bindings += local
      return Translation(sql: condition, isExact: !resolved.hasExtendedTest)
    }
  }
}
