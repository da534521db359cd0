import Foundation
import ObjectModel
import SQLite

/// Translates a ``ResolvedPredicate`` into an SQL condition over the store's real layout, with
/// its values as bindings: a to-one key path becomes a scalar subquery on the destination's
/// table, a to-many one an `EXISTS` (any), `NOT EXISTS … NOT` (all) or `NOT EXISTS` (none) over
/// the destination's foreign key or the join table, `@count` a `count(*)` subquery. String
/// tests under `[c]`/`[d]`, `LIKE` and `MATCHES` call ``functionName``, which
/// ``registerFunctions(on:)`` adds to a connection.
struct PredicateSQL {
  let layout: StoreLayout
  private var aliases = 0

  init(layout: StoreLayout) { self.layout = layout }

  static let functionName = "gv_predicate_string"

  /// The condition on `entity`'s rows (its table under `alias`) that the predicate `text`, in
  /// Core Data's format, is: parsed, checked against the model and translated in one step.
  /// - Throws: ``StoreError`` of kind ``StoreError/Kind/invalidPredicate`` naming what is wrong
  ///   (`path`: the store, for the message).
  static func condition(
    _ text: String, entity: String, layout: StoreLayout, alias: String,
    bindings: inout [SQLiteValue], path: String?
  ) throws(StoreError) -> String {
    do {
      let resolved = try ResolvedPredicate.resolve(
        PredicateParser.parse(text), text: text, model: layout.model, entity: entity)
      var translator = PredicateSQL(layout: layout)
      return try translator.condition(resolved, alias: alias, bindings: &bindings)
    } catch {
      throw StoreError(.invalidPredicate, error.description, path: path, underlying: error)
    }
  }

  /// The condition on rows of `entity`'s table under `alias`.
  mutating func condition(
    _ predicate: ResolvedPredicate, alias: String, bindings: inout [SQLiteValue]
  ) throws(PredicateFormatError) -> String {
    switch predicate {
    case .constant(let value): return value ? "1" : "0"
    case .and(let parts):
      var sql: [String] = []
      for part in parts {
        sql.append("(\(try condition(part, alias: alias, bindings: &bindings)))")
      }
      return sql.joined(separator: " AND ")
    case .or(let parts):
      var sql: [String] = []
      for part in parts {
        sql.append("(\(try condition(part, alias: alias, bindings: &bindings)))")
      }
      return sql.joined(separator: " OR ")
    case .not(let inner):
      return "NOT coalesce((\(try condition(inner, alias: alias, bindings: &bindings))), 0)"
    case .test(let test):
      return try path(test, hops: test.hops[...], alias: alias, bindings: &bindings)
    }
  }

  private mutating func nextAlias() -> String {
    aliases += 1
    return "p\(aliases)"
  }

  private func failure(_ message: String) -> PredicateFormatError {
    PredicateFormatError(text: "", position: 0, message: message)
  }

  /// The table and the entity restriction of `entity`'s objects.
  private func tableOf(_ entity: String) throws(PredicateFormatError) -> (StoreLayout.Table, String)
  {
    guard let table = layout.table(for: entity) else {
      throw failure("the store has no table for \(entity)")
    }
    return (table, layout.entityNumberList(entity))
  }

  private func column(ofAttribute name: String, in entity: String) throws(PredicateFormatError)
    -> String
  {
    guard let column = layout.column(ofAttribute: name, in: entity) else {
      throw failure("the store has no column for \(entity).\(name)")
    }
    return column
  }

  private func column(ofToOne name: String, in entity: String) throws(PredicateFormatError)
    -> String
  {
    guard let column = layout.foreignKey(ofToOne: name, in: entity) else {
      throw failure("the store has no foreign key for \(entity).\(name)")
    }
    return column
  }

  /// `FROM … WHERE` linking the destination of a to-many hop (alias `inner`) to `outer`.
  func membership(_ hop: ResolvedPredicate.Hop, outer: String, inner: String)
    throws(PredicateFormatError) -> String
  {
    let relationship = hop.relationship
    let (table, numbers) = try tableOf(relationship.destination)
    if let inverse = layout.model.inverse(of: relationship), !inverse.isToMany {
      let foreignKey = try column(ofToOne: inverse.name, in: relationship.destination)
      return
        "FROM \(table.name) \(inner) WHERE \(inner).Z_ENT IN (\(numbers)) AND \(inner).\(foreignKey) = \(outer).Z_PK"
    }
    if let owned = layout.ownerColumns(ofToMany: relationship.name, in: hop.entity) {
      return
        "FROM \(table.name) \(inner) WHERE \(inner).Z_ENT IN (\(numbers)) AND \(inner).\(owned.column) = \(outer).Z_PK"
    }
    let lineage = Set(layout.model.lineage(of: hop.entity).map(\.name))
    let inverseName = layout.model.inverse(of: relationship)?.name
    for join in layout.joins {
      if join.relationship.name == relationship.name && lineage.contains(join.entity) {
        return
          "FROM \(join.name) j\(inner) JOIN \(table.name) \(inner) ON \(inner).Z_PK = j\(inner).\(join.destinationColumn) WHERE \(inner).Z_ENT IN (\(numbers)) AND j\(inner).\(join.sourceColumn) = \(outer).Z_PK"
      }
      if let inverseName, join.relationship.name == inverseName,
        join.entity == relationship.destination
          || layout.model.lineage(of: relationship.destination).contains(where: {
            $0.name == join.entity
          })
      {
        return
          "FROM \(join.name) j\(inner) JOIN \(table.name) \(inner) ON \(inner).Z_PK = j\(inner).\(join.sourceColumn) WHERE \(inner).Z_ENT IN (\(numbers)) AND j\(inner).\(join.destinationColumn) = \(outer).Z_PK"
      }
    }
    throw failure("the store has no way to follow \(hop.entity).\(relationship.name)")
  }

  private mutating func path(
    _ test: ResolvedPredicate.Test, hops: ArraySlice<ResolvedPredicate.Hop>, alias: String,
    bindings: inout [SQLiteValue]
  ) throws(PredicateFormatError) -> String {
    guard let hop = hops.first else {
      return try final(test, alias: alias, bindings: &bindings)
    }
    let inner = nextAlias()
    if hop.relationship.isToMany {
      let from = try membership(hop, outer: alias, inner: inner)
      let rest = try path(test, hops: hops.dropFirst(), alias: inner, bindings: &bindings)
      switch test.quantifier {
      case .any: return "EXISTS (SELECT 1 \(from) AND (\(rest)))"
      case .all: return "NOT EXISTS (SELECT 1 \(from) AND coalesce((\(rest)), 0) = 0)"
      case .none: return "NOT EXISTS (SELECT 1 \(from) AND coalesce((\(rest)), 0) = 1)"
      }
    }
    // A to-one: the test on the object it points at, or, when it points nowhere, the test on
    // a missing value (so `author.name == nil` holds for a book without an author).
    let foreignKey = try column(ofToOne: hop.relationship.name, in: hop.entity)
    let (table, _) = try tableOf(hop.relationship.destination)
    let rest = try path(test, hops: hops.dropFirst(), alias: inner, bindings: &bindings)
    // What the test says of a value that is not there, a constant.
    let absent = PredicateMemory.decide(test, nil) ? "1" : "0"
    return
      "CASE WHEN \(alias).\(foreignKey) IS NULL THEN \(absent) ELSE coalesce((SELECT (\(rest)) FROM \(table.name) \(inner) WHERE \(inner).Z_PK = \(alias).\(foreignKey)), \(absent)) END"
  }

  /// The test on the final property of an object under `alias`.
  private mutating func final(
    _ test: ResolvedPredicate.Test, alias: String, bindings: inout [SQLiteValue]
  ) throws(PredicateFormatError) -> String {
    let operand: String
    switch test.target {
    case .toOne(let relationship):
      // The foreign key holds the primary key of the object pointed at.
      operand = "\(alias).\(try column(ofToOne: relationship.name, in: test.entity))"
    case .key:
      operand = "\(alias).Z_PK"
    case .count(let relationship):
      let inner = nextAlias()
      let from = try membership(
        ResolvedPredicate.Hop(entity: test.entity, relationship: relationship), outer: alias,
        inner: inner)
      operand = "(SELECT count(*) \(from))"
    case .attribute(let attribute):
      operand = "\(alias).\(try column(ofAttribute: attribute.name, in: test.entity))"
    case .extended(let key):
      throw failure(
        "extended.\(key) is kept in the bucket, not in a column: it cannot be tested in SQL")
    }
    func bind(_ value: AttributeValue?) -> String {
      bindings.append(value.map { SQLValues.sqlite($0) } ?? .null)
      return "?"
    }
    let textual = !test.options.isEmpty || test.op.isStringOperator
    if textual {
      let op = test.op == .in ? PredicateSyntax.Operator.equal : test.op
      var parts: [String] = []
      for value in test.values {
        guard case .some(let value) = value else {
          parts.append("\(operand) IS NULL")
          continue
        }
        // SQLite's GLOB rules most rows out before the exact test, which calls back into Swift
        // (in a CASE: an AND computing a value evaluates both sides).
        var filter: String?
        if test.options.isEmpty, case .string(let text) = value,
          let glob = GlobFilter.pattern(op, text)
        {
          filter = "\(operand) GLOB \(bind(.string(glob)))"
        }
        bindings.append(.text(op.rawValue))
        bindings.append(.integer(Int64(test.options.rawValue)))
        let exact = "\(Self.functionName)(?, ?, \(operand), \(bind(value)))"
        parts.append(filter.map { "CASE WHEN \($0) THEN \(exact) ELSE 0 END" } ?? exact)
      }
      return parts.map { "coalesce(\($0), 0)" }.joined(separator: " OR ")
    }
    switch test.op {
    case .equal: return "\(operand) IS \(bind(test.values[0]))"
    case .notEqual: return "\(operand) IS NOT \(bind(test.values[0]))"
    case .less: return "\(operand) < \(bind(test.values[0]))"
    case .lessOrEqual: return "\(operand) <= \(bind(test.values[0]))"
    case .greater: return "\(operand) > \(bind(test.values[0]))"
    case .greaterOrEqual: return "\(operand) >= \(bind(test.values[0]))"
    case .between:
      return "\(operand) BETWEEN \(bind(test.values[0])) AND \(bind(test.values[1]))"
    case .in:
      if test.values.isEmpty { return "0" }
      let present = test.values.compactMap { $0 }
      var parts: [String] = []
      if !present.isEmpty {
        parts.append("\(operand) IN (\(present.map { bind($0) }.joined(separator: ", ")))")
      }
      if present.count < test.values.count { parts.append("\(operand) IS NULL") }
      return parts.joined(separator: " OR ")
    default:
      throw failure("\(test.op.rawValue) is not an SQL comparison")
    }
  }

  /// Adds ``functionName`` to `database`: `(operator, options, value, operand)` → 1, 0, or NULL
  /// when the value is NULL.
  static func registerFunctions(on database: Database) throws(SQLiteError) {
    final class Cache: @unchecked Sendable {
      var patterns: [String: StringPattern] = [:]
      let lock = NSLock()
    }
    let cache = Cache()
    try database.createFunction(functionName, argumentCount: 4, deterministic: true) {
      arguments throws(FunctionError) in
      guard case .text(let name) = arguments[0],
        let op = PredicateSyntax.Operator(rawValue: name),
        case .integer(let flags) = arguments[1]
      else { throw FunctionError("\(functionName): bad operator") }
      let options = PredicateSyntax.Options(rawValue: Int(flags))
      let value: String
      switch arguments[2] {
      case .null: return .null
      case .text(let text): value = text
      default: return .integer(0)
      }
      guard case .text(let operand) = arguments[3] else { return .integer(0) }
      var pattern: StringPattern?
      if op == .like || op == .matches {
        let key = "\(op.rawValue)\u{0}\(flags)\u{0}\(operand)"
        cache.lock.lock()
        defer { cache.lock.unlock() }
        if let cached = cache.patterns[key] {
          pattern = cached
        } else {
          do {
            pattern = try StringPattern(
              op == .like ? .like(operand) : .regex(operand), options: options)
          } catch {
            throw FunctionError("\(functionName): not a valid pattern: \(operand)")
          }
          cache.patterns[key] = pattern
        }
      }
      return .integer(StringPattern.test(op, options, value, operand, pattern: pattern) ? 1 : 0)
    }
  }
}
