import ObjectModel
import SQLite

/// A fetch request made into one SQL statement over the store's real layout: the entity
/// restriction and the predicate as a `WHERE` clause, the sort descriptors as `ORDER BY` terms
/// (a to-one key path as a correlated subquery on the destination's table), `LIMIT` and
/// `OFFSET`, and the objects changed in memory left out by primary key, to be merged back in
/// SQLite's own order (``SQLValues/order(_:_:)``), so that the answer is the one the saved
/// store would give.
struct FetchPlan {
  let request: FetchRequest
  let table: StoreLayout.Table
  /// The concrete and abstract entities fetched.
  let entities: Set<String>
  /// `Z_ENT IN (…)` and what SQL tests of the predicate.
  let filter: String
  let bindings: [SQLiteValue]
  /// Whether the SQL condition is the whole predicate (no row it lets through fails in
  /// memory), so that `LIMIT`, `OFFSET` and `count(*)` may run in SQL.
  let isExact: Bool
  /// The sort keys, resolved.
  let sortKeys: [SortKey]
  let evaluator: PredicateEvaluator?

  /// One sort descriptor, resolved against the model and the layout.
  struct SortKey {
    /// The to-one relationships followed, then the attribute.
    let relationships: [String]
    let attribute: String
    let ascending: Bool
    /// The value's SQL expression for a row of the fetched table.
    let sql: String
  }

  init(_ request: FetchRequest, context: ObjectContext) throws(StoreError) {
    self.request = request
    let model = context.model
    guard model.entity(named: request.entity) != nil else {
      throw context.fail(.invalidValue, "the model has no entity \(request.entity)")
    }
    table = try context.table(for: request.entity)
    let fetched = Set(
      request.includesSubentities
        ? model.hierarchy(from: request.entity).map(\.name) : [request.entity])
    entities = fetched
    // Every entity of the table: no row to leave out, and no Z_ENT index to mislead the
    // planner away from an index that gives the sort order.
    let covers = model.hierarchy(from: table.rootEntity).allSatisfy { fetched.contains($0.name) }
    let numbers =
      request.includesSubentities
      ? context.layout.entityNumberList(request.entity)
      : context.layout.entityNumbers[request.entity].map(String.init) ?? ""
    var filter = covers ? "1" : "Z_ENT IN (\(numbers))"
    var bindings: [SQLiteValue] = []
    var formats: [Predicate.Format: ResolvedPredicate] = [:]
    for format in request.predicate?.formats ?? [] {
      formats[format] = try context.resolve(format, for: request.entity)
    }
    var exact = true
    if let predicate = request.predicate {
      let translator = PredicateSQLTranslator(
        table: table, layout: context.layout, formats: formats, entity: request.entity)
      let translated = translator.translate(predicate, bindings: &bindings)
      if let sql = translated.sql { filter += " AND (\(sql))" }
      exact = translated.isExact
    }
    self.filter = filter
    self.bindings = bindings
    isExact = exact
    evaluator = request.predicate.map {
      PredicateEvaluator(predicate: $0, formats: formats, context: context)
    }
    var keys: [SortKey] = []
    for (index, descriptor) in request.sortDescriptors.enumerated() {
      keys.append(
        try Self.sortKey(
          descriptor, entity: request.entity, table: table, context: context, alias: index))
    }
    sortKeys = keys
  }

  /// The `ORDER BY` clause: the sort keys, then the primary key.
  var order: String {
    (sortKeys.map { "\($0.sql) \($0.ascending ? "ASC" : "DESC")" } + ["Z_PK"])
      .joined(separator: ", ")
  }

  /// Resolves `descriptor`'s key path on `entity`: to-one relationships, then a stored
  /// attribute, as Core Data sorts in SQL.
  private static func sortKey(
    _ descriptor: SortDescriptor, entity: String, table: StoreLayout.Table,
    context: ObjectContext, alias: Int
  ) throws(StoreError) -> SortKey {
    let model = context.model
    let parts = descriptor.key.split(separator: ".", omittingEmptySubsequences: false).map(
      String.init)
    let layout = context.layout
    var current = entity
    // Each followed relationship: the destination's table and the foreign key's column.
    var hops: [(table: String, foreignKey: String)] = []
    func keys(of entity: String) -> String {
      let attributes = model.attributes(of: entity).filter(\.isStored).map(\.name)
      let toOne = model.relationships(of: entity).filter { !$0.isToMany && !$0.isTransient }
        .map(\.name)
      return (attributes + toOne).sorted().joined(separator: ", ")
    }
    func refuse(_ why: String) -> StoreError {
      context.fail(
        .invalidValue,
        "cannot sort \(entity) by \(descriptor.key): \(why) (\(current)'s sort keys: \(keys(of: current)))"
      )
    }
    for part in parts.dropLast() {
      guard
        let relationship = model.relationships(of: current).first(where: { $0.name == part }),
        !relationship.isToMany, !relationship.isTransient
      else {
        throw refuse("\(current) has no to-one relationship \(part)")
      }
      guard let foreignKey = layout.foreignKey(ofToOne: part, in: current),
        let destination = layout.table(for: relationship.destination)
      else {
        throw refuse("the store has no column for \(current).\(part)")
      }
      hops.append((destination.name, foreignKey))
      current = relationship.destination
    }
    let name = parts.last ?? ""
    guard let attribute = model.attributes(of: current).first(where: { $0.name == name }) else {
      throw refuse("\(current) has no attribute \(name)")
    }
    guard attribute.isStored else {
      throw refuse("\(current).\(name) is transient, so the store cannot sort by it")
    }
    guard let column = layout.column(ofAttribute: name, in: current) else {
      throw refuse("the store has no column for \(current).\(name)")
    }
    // (SELECT s.… FROM DESTINATION s WHERE s.Z_PK = OUTER.FOREIGN_KEY), nested per hop.
    func value(at level: Int, of outer: String) -> String {
      guard level < hops.count else { return "\(outer).\(column)" }
      let inner = "s\(alias)_\(level)"
      let hop = hops[level]
      return
        "(SELECT \(value(at: level + 1, of: inner)) FROM \(hop.table) \(inner) WHERE \(inner).Z_PK = \(outer).\(hop.foreignKey))"
    }
    return SortKey(
      relationships: Array(parts.dropLast()), attribute: name, ascending: descriptor.ascending,
      sql: value(at: 0, of: table.name))
  }
}
