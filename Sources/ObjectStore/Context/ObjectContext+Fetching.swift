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
