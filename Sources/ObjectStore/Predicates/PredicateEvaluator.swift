import ObjectModel

/// Evaluates a ``Predicate`` on an object's values in memory, as they are now (unsaved changes
/// included). The store's SQL only narrows which rows are read (``PredicateSQLTranslator``);
/// this decides.
struct PredicateEvaluator {
  let predicate: Predicate
  /// The `NSPredicate`-format parts, checked.
  var formats: [Predicate.Format: ResolvedPredicate] = [:]
  let context: ObjectContext

  /// Whether `object` satisfies the predicate.
  func matches(_ object: ManagedObject) throws(StoreError) -> Bool {
    try matches(predicate, object)
  }

  private func matches(_ predicate: Predicate, _ object: ManagedObject) throws(StoreError) -> Bool {
    func compare(_ key: String, _ value: AttributeValue, _ test: (Int) -> Bool) -> Bool {
      guard let current = object.attributes[key], let order = AttributeValue.compare(current, value)
      else {
        return false
      }
      return test(order)
    }
    switch predicate {
    case .equal(let key, let value): return object.attributes[key] == value
    case .notEqual(let key, let value): return object.attributes[key] != value
    case .less(let key, let value): return compare(key, value) { $0 < 0 }
    case .lessOrEqual(let key, let value): return compare(key, value) { $0 <= 0 }
    case .greater(let key, let value): return compare(key, value) { $0 > 0 }
    case .greaterOrEqual(let key, let value): return compare(key, value) { $0 >= 0 }
    case .relatedTo(let key, let reference): return object.toOne[key] == reference
    case .and(let all):
      for part in all where !(try matches(part, object)) { return false }
      return true
    case .or(let any):
      for part in any where try matches(part, object) { return true }
      return false
    case .not(let inner): return !(try matches(inner, object))
    case .format(let text):
      let format = Predicate.Format(text: text, arguments: [], variables: [:])
      guard let resolved = formats[format] else { return false }
      return try PredicateMemory(context: context).matches(resolved, object)
    case .formatted(let format):
      guard let resolved = formats[format] else { return false }
      return try PredicateMemory(context: context).matches(resolved, object)
    }
  }
}
