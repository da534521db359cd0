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
    if let predicate = request.predicate,
      let sql = PredicateSQLTranslator(table: table).translate(predicate, bindings: &bindings)
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
    let evaluator = request.predicate.map(PredicateEvaluator.init)
    var result = candidates.values.filter { object in
      !object.isDeleted && (evaluator?.matches(object) ?? true)
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
}
