import ObjectModel
import SQLite

extension ObjectContext {
  /// The objects that match `request`, pending changes included.
  public func fetch(_ request: FetchRequest) throws(StoreError) -> [ManagedObject] {
    let table = try table(for: request.entity)
    let entities =
      request.includesSubentities
      ? model.hierarchy(from: request.entity).map(\.name) : [request.entity]
    let numbers = entities.compactMap { layout.entityNumbers[$0] }
    var filter = "Z_ENT IN (\(numbers.map(String.init).joined(separator: ", ")))"
    var bindings: [SQLiteValue] = []
    var formats: [String: ResolvedPredicate] = [:]
    for text in request.predicate?.formats ?? [] {
      formats[text] = try resolve(text, for: request.entity)
    }
    if let predicate = request.predicate,
      let sql = PredicateSQLTranslator(table: table, layout: layout, formats: formats).translate(
        predicate, bindings: &bindings)
    {
      filter += " AND (\(sql))"
    }
    var candidates: [ObjectReference: ManagedObject] = [:]
    for object in try load(table, filter: filter, bindings: bindings) {
      candidates[object.reference] = object
    }
    // Objects changed or inserted in memory may match now though their stored rows do not.
    let wanted = Set(entities)
    for (reference, object) in registered where wanted.contains(reference.entity) {
      candidates[reference] = object
    }
    let evaluator = request.predicate.map {
      PredicateEvaluator(predicate: $0, formats: formats, context: self)
    }
    var result: [ManagedObject] = []
    for object in candidates.values where !object.isDeleted {
      if try evaluator?.matches(object) ?? true { result.append(object) }
    }
    result.sort { a, b in
      for descriptor in request.sortDescriptors {
        let order = AttributeValue.compare(
          a.attributes[descriptor.key], b.attributes[descriptor.key])
        if order != 0 { return descriptor.ascending ? order < 0 : order > 0 }
      }
      return a.primaryKey < b.primaryKey
    }
    if request.fetchLimit > 0 && result.count > request.fetchLimit {
      result = Array(result.prefix(request.fetchLimit))
    }
    return result
  }

  /// Calls `body` with each stored object of `entity` (and its sub-entities, unless
  /// `includesSubentities` is false) in primary-key order, reading `batchSize` objects at a
  /// time. After each batch the context forgets the objects it read when nothing is pending,
  /// so memory stays flat over any number of objects (objects kept by the caller stay usable;
  /// ``object(with:)`` reads them again). Pending inserts are not visited.
  /// - Throws: ``StoreError`` when the store cannot be read, or what `body` throws.
  public func forEachObject(
    of entity: String, includesSubentities: Bool = true, batchSize: Int = 1000,
    _ body: (ManagedObject) throws -> Void
  ) throws {
    let table = try table(for: entity)
    let entities =
      includesSubentities ? model.hierarchy(from: entity).map(\.name) : [entity]
    let numbers = entities.compactMap { layout.entityNumbers[$0] }.map(String.init)
    var after: Int64 = 0
    while true {
      let batch = try load(
        table,
        filter: "Z_ENT IN (\(numbers.joined(separator: ", "))) AND Z_PK > ?",
        bindings: [.integer(after)], limit: max(1, batchSize))
      for object in batch where !object.isDeleted { try body(object) }
      guard let last = batch.last else { return }
      after = last.primaryKey
      if !hasChanges && reordered.isEmpty { registered.removeAll() }
    }
  }

  /// Runs `body` in one read transaction, so that every read inside sees the same snapshot of
  /// the store even while another process writes to it.
  public func reading<R>(_ body: () throws -> R) throws -> R {
    try store.read { _ in try body() }
  }

  /// Checks a predicate in `NSPredicate` format against the model for objects of `entity`.
  /// - Throws: ``StoreError`` of kind ``StoreError/Kind/invalidPredicate`` whose underlying
  ///   ``PredicateFormatError`` gives the position and what was expected.
  func resolve(_ text: String, for entity: String) throws(StoreError) -> ResolvedPredicate {
    do {
      return try ResolvedPredicate.resolve(
        PredicateParser.parse(text), text: text, model: model, entity: entity)
    } catch {
      throw StoreError(.invalidPredicate, error.description, path: store.path, underlying: error)
    }
  }
}
