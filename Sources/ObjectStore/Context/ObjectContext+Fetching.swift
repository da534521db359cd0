import Foundation
import ObjectModel
import SQLite

extension ObjectContext {
  /// The objects that match `request`, in its order, unsaved changes included: what the store
  /// would give if the context saved now, as Core Data's fetch gives.
  ///
  /// SQLite does the work: the predicate (where it maps to columns), the sort descriptors
  /// (attributes and to-one key paths such as `author.alias`), ``FetchRequest/fetchOffset``
  /// and ``FetchRequest/fetchLimit`` run in one statement, so a limited fetch reads only the
  /// rows it returns. Objects inserted, changed or deleted in the context are left out of the
  /// statement and merged back in the store's order (strings in binary order, nil first
  /// ascending, as SQLite sorts). A predicate part SQL cannot test (extended attributes) is
  /// evaluated in memory on the rows the rest lets through.
  /// - Throws: ``StoreError``: ``StoreError/Kind/invalidPredicate`` for a predicate the model
  ///   refuses; ``StoreError/Kind/invalidValue`` for an unknown entity or a sort key that is
  ///   not an attribute or a to-one key path ending in one, naming the entity's keys.
  public func fetch(_ request: FetchRequest) throws(StoreError) -> [ManagedObject] {
    var result: [ManagedObject] = []
    if request.fetchLimit > 0 { result.reserveCapacity(request.fetchLimit) }
    let plan = try FetchPlan(request, context: self)
    do {
      try walk(plan, batchSize: nil) { object in result.append(object) }
    } catch {
      throw wrap(error, "cannot fetch \(request.entity) objects")
    }
    return result
  }

  /// How many objects `request` would fetch (its limit and offset applied), unsaved changes
  /// included, counted by SQLite without reading the objects when the whole predicate maps
  /// to SQL.
  /// - Throws: as ``fetch(_:)``.
  public func count(for request: FetchRequest) throws(StoreError) -> Int {
    let plan = try FetchPlan(request, context: self)
    guard plan.isExact else { return try fetch(request).count }
    let dirty = try pending(for: plan)
    var filter = plan.filter
    var bindings = plan.bindings
    excludeStored(dirty.keys, from: &filter, bindings: &bindings)
    var stored: Int
    do {
      let statement = try store.database.prepare(
        "SELECT count(*) FROM \(plan.table.name) WHERE \(filter)")
      try statement.bind(bindings)
      stored = Int(try statement.scalar().integerValue ?? 0)
    } catch {
      throw wrap(error, "cannot count \(request.entity) objects")
    }
    let total = stored + dirty.matches.count
    let afterOffset = max(0, total - request.fetchOffset)
    return request.fetchLimit > 0 ? min(afterOffset, request.fetchLimit) : afterOffset
  }

  /// Calls `body` with each object `request` fetches, in its order, reading
  /// ``FetchRequest/fetchBatchSize`` objects at a time (1,000 when it is 0) from one
  /// statement; after each batch the context forgets the objects it read when nothing is
  /// pending, so memory stays flat over any number of objects. Objects kept by the caller
  /// stay usable.
  ///
  /// The walk reads one snapshot of the store: `body` may change objects, but a save inside it
  /// is refused.
  /// - Throws: as ``fetch(_:)``, or what `body` throws.
  public func forEach(
    _ request: FetchRequest, _ body: (ManagedObject) throws -> Void
  ) throws {
    let plan = try FetchPlan(request, context: self)
    walking += 1
    defer { walking -= 1 }
    let batchSize = request.fetchBatchSize > 0 ? request.fetchBatchSize : 1000
    // Inside a caller's transaction (``reading(_:)``) the snapshot is already the caller's.
    guard !store.database.isInTransaction else {
      return try walk(plan, batchSize: batchSize, body)
    }
    try store.read { _ in try walk(plan, batchSize: batchSize, body) }
  }

  /// Calls `body` with each stored object of `entity` (and its sub-entities, unless
  /// `includesSubentities` is false) in primary-key order, `batchSize` objects at a time:
  /// ``forEach(_:_:)`` without a predicate or sort.
  public func forEachObject(
    of entity: String, includesSubentities: Bool = true, batchSize: Int = 1000,
    _ body: (ManagedObject) throws -> Void
  ) throws {
    var request = FetchRequest(entity: entity, includesSubentities: includesSubentities)
    request.fetchBatchSize = batchSize
    try forEach(request, body)
  }

  /// Runs `body` in one read transaction, so that every read inside sees the same snapshot of
  /// the store even while another process writes to it.
  public func reading<R>(_ body: () throws -> R) throws -> R {
    try store.read { _ in try body() }
  }

  /// Checks a predicate in `NSPredicate` format, with its arguments, against the model for
  /// objects of `entity`.
  /// - Throws: ``StoreError`` of kind ``StoreError/Kind/invalidPredicate`` whose underlying
  ///   ``PredicateFormatError`` gives the position and what was expected.
  func resolve(_ format: Predicate.Format, for entity: String) throws(StoreError)
    -> ResolvedPredicate
  {
    let text = format.text
    do {
      return try ResolvedPredicate.resolve(
        PredicateParser.parse(text, arguments: format.arguments, variables: format.variables),
        text: text, model: model, entity: entity)
    } catch {
      throw StoreError(.invalidPredicate, error.description, path: store.path, underlying: error)
    }
  }

  // MARK: The statement and the objects changed in memory

  /// The fetched entities' objects whose stored rows may no longer say what they hold (by
  /// reference), and those of them that match, sorted as the statement sorts.
  private func pending(for plan: FetchPlan) throws(StoreError) -> (
    keys: Set<ObjectReference>, matches: [(ManagedObject, [SQLiteValue])]
  ) {
    var references = inserted.union(updated).union(deleted)
    // Through relationships the stored rows of unchanged objects may be stale too.
    if plan.evaluator != nil
      && (!joinInserts.isEmpty || !joinDeletes.isEmpty || !reordered.isEmpty)
    {
      references.formUnion(registered.keys)
    }
    references = references.filter { plan.entities.contains($0.entity) }
    var matches: [(ManagedObject, [SQLiteValue])] = []
    for reference in references {
      guard let object = registered[reference], !object.isDeleted,
        try plan.evaluator?.matches(object) ?? true
      else { continue }
      matches.append((object, try sortValues(of: object, plan)))
    }
    matches.sort { Self.precedes($0.1, $0.0.primaryKey, $1.1, $1.0.primaryKey, plan) }
    return (references, matches)
  }

  /// Leaves the stored rows of `references` out of `filter`.
  private func excludeStored(
    _ references: Set<ObjectReference>, from filter: inout String,
    bindings: inout [SQLiteValue]
  ) {
    let keys = references.filter { !inserted.contains($0) }.map(\.primaryKey)
    guard !keys.isEmpty else { return }
    filter += " AND Z_PK NOT IN (SELECT value FROM json_each(?))"
    bindings.append(.text("[" + keys.map(String.init).joined(separator: ",") + "]"))
  }

  /// An object's sort values as SQLite would compute them from its row now.
  private func sortValues(of object: ManagedObject, _ plan: FetchPlan) throws(StoreError)
    -> [SQLiteValue]
  {
    var values: [SQLiteValue] = []
    for key in plan.sortKeys {
      var current: ManagedObject? = object
      for relationship in key.relationships {
        guard let from = current else { break }
        current = try relatedObject(of: from, relationship)
      }
      if let value = current?.attributes[key.attribute] {
        values.append(SQLValues.sqlite(value))
      } else {
        values.append(.null)
      }
    }
    return values
  }

  /// Whether an object with sort values `a` and key `aKey` comes before one with `b`, `bKey`.
  private static func precedes(
    _ a: [SQLiteValue], _ aKey: Int64, _ b: [SQLiteValue], _ bKey: Int64, _ plan: FetchPlan
  ) -> Bool {
    for (index, key) in plan.sortKeys.enumerated() {
      let order = SQLValues.order(a[index], b[index])
      if order != 0 { return key.ascending ? order < 0 : order > 0 }
    }
    return aKey < bKey
  }

  /// Runs the plan's statement, merging the objects changed in memory back in, and calls
  /// `body` with each object in order, after the offset and up to the limit. With a batch
  /// size, the statement is read that many rows at a time, forgetting objects between batches
  /// when nothing is pending.
  private func walk(
    _ plan: FetchPlan, batchSize: Int?, _ body: (ManagedObject) throws -> Void
  ) throws {
    let request = plan.request
    let dirty = try pending(for: plan)
    var filter = plan.filter
    var bindings = plan.bindings
    excludeStored(dirty.keys, from: &filter, bindings: &bindings)
    var limit: Int?
    var offset = request.fetchOffset
    if plan.isExact && request.fetchLimit > 0 {
      limit = request.fetchLimit + (dirty.matches.isEmpty ? 0 : offset)
    }
    var sqlOffset = 0
    if plan.isExact && dirty.matches.isEmpty {
      sqlOffset = offset
      offset = 0
    }
    var remaining = request.fetchLimit > 0 ? request.fetchLimit : Int.max
    var memory = dirty.matches[...]
    func emit(_ object: ManagedObject) throws -> Bool {
      guard remaining > 0 else { return false }
      if offset > 0 {
        offset -= 1
      } else {
        remaining -= 1
        try body(object)
      }
      return remaining > 0
    }
    func reading<T>(_ step: () throws -> T) throws(StoreError) -> T {
      do { return try step() } catch { throw wrap(error, "cannot read \(plan.table.name)") }
    }
    let reader = try reading {
      let reader = try TableReader(
        table: plan.table, layout: layout, database: store.database, filter: filter,
        extraColumns: plan.sortKeys.map(\.sql), order: plan.order, limit: limit,
        offset: sqlOffset)
      try reader.bind(bindings)
      return reader
    }
    defer { reader.statement.reset() }
    // Values are read into each entity's slots, not a dictionary per row.
    let slots = { (entity: String) -> (places: [String: Int], count: Int) in
      let traits = self.traits(of: entity)
      return (traits.slots, traits.slotNames.count)
    }
    var more = true
    while more {
      // Records first: awakeFromFetch hooks may read the store once they are registered. A
      // whole fetch reads them a thousand at a time too, so that it never holds every
      // record beside every object.
      var batch: [(ObjectRecord, [AttributeValue?], [SQLiteValue])] = []
      // The reader starts over after its last row: stop at the first false.
      while batch.count < (batchSize ?? 1000) {
        guard try reading({ try reader.step() }) else {
          more = false
          break
        }
        let (record, values) = try reading { try reader.currentRecord(slots: slots) }
        batch.append(
          (
            record, values,
            plan.sortKeys.indices.map { reader.statement.value(at: reader.extraStart + $0) }
          ))
      }
      for (record, attributes, values) in batch {
        let object = try register(record, values: attributes)
        guard !object.isDeleted, try plan.isExact || plan.evaluator?.matches(object) ?? true
        else { continue }
        while let (first, firstValues) = memory.first,
          Self.precedes(firstValues, first.primaryKey, values, object.primaryKey, plan)
        {
          memory.removeFirst()
          guard try emit(first) else { return }
        }
        guard try emit(object) else { return }
      }
      if more && batchSize != nil && !hasChanges && reordered.isEmpty { registered.removeAll() }
    }
    for (object, _) in memory {
      guard try emit(object) else { return }
    }
  }
}
