import ObjectModel

/// Evaluates a ``ResolvedPredicate`` on objects in memory, as they are now (unsaved changes
/// included), with the same meaning as its SQL: a missing value fails every test but `== nil`
/// and `!= value`; a key path through to-many relationships holds for any (or all, or none) of
/// the objects it reaches.
struct PredicateMemory {
  let context: ObjectContext

  func matches(_ predicate: ResolvedPredicate, _ object: ManagedObject) throws(StoreError) -> Bool {
    switch predicate {
    case .constant(let value): return value
    case .and(let parts):
      for part in parts where !(try matches(part, object)) { return false }
      return true
    case .or(let parts):
      for part in parts where try matches(part, object) { return true }
      return false
    case .not(let inner): return !(try matches(inner, object))
    case .test(let test): return try holds(test, test.hops[...], object)
    }
  }

  private func holds(
    _ test: ResolvedPredicate.Test, _ hops: ArraySlice<ResolvedPredicate.Hop>,
    _ object: ManagedObject?
  ) throws(StoreError) -> Bool {
    guard let object else { return Self.decide(test, nil) }
    guard let hop = hops.first else {
      switch test.target {
      case .attribute(let attribute):
        return Self.decide(test, object.attributes[attribute.name])
      case .toOne(let relationship):
        let pointed = try object.object(for: relationship.name)
        return Self.decide(test, pointed.map { .integer($0.primaryKey) })
      case .key:
        return Self.decide(test, .integer(object.primaryKey))
      case .count(let relationship):
        let count = try context.members(of: object, relationship.name).count
        return Self.decide(test, .integer(Int64(count)))
      case .extended(let key):
        let value = try object.value(forExtendedKey: key).flatMap(ObjectContext.attributeValue)
        return Self.decide(test, value)
      }
    }
    if hop.relationship.isToMany {
      let members = try object.objects(for: hop.relationship.name)
      switch test.quantifier {
      case .any:
        for member in members where try holds(test, hops.dropFirst(), member) { return true }
        return false
      case .all:
        for member in members where !(try holds(test, hops.dropFirst(), member)) { return false }
        return true
      case .none:
        for member in members where try holds(test, hops.dropFirst(), member) { return false }
        return true
      }
    }
    return try holds(test, hops.dropFirst(), try object.object(for: hop.relationship.name))
  }

  /// The test on one final value (nil: none).
  static func decide(_ test: ResolvedPredicate.Test, _ value: AttributeValue?) -> Bool {
    let textual = !test.options.isEmpty || test.op.isStringOperator
    if textual {
      let op = test.op == .in ? PredicateSyntax.Operator.equal : test.op
      return test.values.contains { operand in
        switch (value, operand) {
        case (nil, nil): return true
        case (.some(let v), .some(let o)):
          guard let text = v.text, let other = o.text else { return false }
          return StringPattern.test(op, test.options, text, other, pattern: test.pattern)
        default: return false
        }
      }
    }
    func order(_ operand: AttributeValue?) -> Int? {
      guard let value, let operand else { return nil }
      return AttributeValue.compareForPredicate(value, operand)
    }
    switch test.op {
    case .equal: return Self.same(value, test.values[0])
    case .notEqual: return !Self.same(value, test.values[0])
    case .less: return order(test.values[0]).map { $0 < 0 } ?? false
    case .lessOrEqual: return order(test.values[0]).map { $0 <= 0 } ?? false
    case .greater: return order(test.values[0]).map { $0 > 0 } ?? false
    case .greaterOrEqual: return order(test.values[0]).map { $0 >= 0 } ?? false
    case .between:
      guard let low = order(test.values[0]), let high = order(test.values[1]) else { return false }
      return low >= 0 && high <= 0
    case .in: return test.values.contains { Self.same(value, $0) }
    default: return false
    }
  }

  /// Equality as SQLite's `IS` sees stored values: numbers by value across integer and real.
  static func same(_ a: AttributeValue?, _ b: AttributeValue?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (nil, _), (_, nil): return false
    case (let x?, let y?): return AttributeValue.compareForPredicate(x, y) == 0
    }
  }
}

extension AttributeValue {
  var text: String? {
    switch self {
    case .string(let v), .uri(let v): return v
    default: return nil
    }
  }

  /// Orders two values as SQLite orders their stored forms: numbers (integers, reals, dates,
  /// booleans, decimals) by value, text by its UTF-8 bytes, blobs by bytes; nil when the kinds
  /// differ.
  static func compareForPredicate(_ lhs: AttributeValue, _ rhs: AttributeValue) -> Int? {
    func sign<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a > b ? 1 : 0) }
    func bytes(_ a: some Sequence<UInt8>, _ b: some Sequence<UInt8>) -> Int {
      let (x, y) = (Array(a), Array(b))
      return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
    }
    if let a = lhs.text, let b = rhs.text { return bytes(a.utf8, b.utf8) }
    switch (lhs, rhs) {
    case (.data(let a), .data(let b)), (.uuid(let a), .uuid(let b)),
      (.transformed(let a), .transformed(let b)):
      return bytes(a, b)
    case (.integer(let a), .integer(let b)): return sign(a, b)
    default:
      guard let a = lhs.storedNumber, let b = rhs.storedNumber else { return nil }
      return sign(a, b)
    }
  }

  private var storedNumber: Double? {
    switch self {
    case .integer(let v): return Double(v)
    case .double(let v), .date(let v): return v
    case .decimal(let v): return Double(v)
    case .bool(let v): return v ? 1 : 0
    default: return nil
    }
  }
}
