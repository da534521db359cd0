/// Join-table rows an object context will insert or delete at its save
/// (``ObjectContext/JoinPair``), indexed by each end: whether an object has pending rows is a
/// lookup, not a walk over every pending row (a merge of thousands of linked objects asks it
/// for each one).
struct JoinPairSet: Sequence {
  private(set) var pairs = Set<ObjectContext.JoinPair>()
  /// How many pairs name each source key, by table.
  private var sources: [String: [Int64: Int]] = [:]
  /// How many pairs name each destination key, by table.
  private var destinations: [String: [Int64: Int]] = [:]

  var isEmpty: Bool { pairs.isEmpty }

  func makeIterator() -> Set<ObjectContext.JoinPair>.Iterator { pairs.makeIterator() }

  func contains(_ pair: ObjectContext.JoinPair) -> Bool { pairs.contains(pair) }

  /// Adds `pair`; whether it was not there yet.
  @discardableResult
  mutating func insert(_ pair: ObjectContext.JoinPair) -> Bool {
    guard pairs.insert(pair).inserted else { return false }
    sources[pair.table, default: [:]][pair.source, default: 0] += 1
    destinations[pair.table, default: [:]][pair.destination, default: 0] += 1
    return true
  }

  /// Removes `pair`, returning it when it was there.
  @discardableResult
  mutating func remove(_ pair: ObjectContext.JoinPair) -> ObjectContext.JoinPair? {
    guard let removed = pairs.remove(pair) else { return nil }
    Self.decrement(&sources, pair.table, pair.source)
    Self.decrement(&destinations, pair.table, pair.destination)
    return removed
  }

  /// The pairs `isIncluded` keeps.
  func filter(_ isIncluded: (ObjectContext.JoinPair) throws -> Bool) rethrows -> JoinPairSet {
    var kept = JoinPairSet()
    for pair in pairs where try isIncluded(pair) { kept.insert(pair) }
    return kept
  }

  mutating func removeAll() { self = JoinPairSet() }

  /// Whether a pair of `table` has `key` as its source.
  func hasSource(_ table: String, _ key: Int64) -> Bool { sources[table]?[key] != nil }

  /// Whether a pair of `table` has `key` as its destination.
  func hasDestination(_ table: String, _ key: Int64) -> Bool {
    destinations[table]?[key] != nil
  }

  private static func decrement(
    _ counts: inout [String: [Int64: Int]], _ table: String, _ key: Int64
  ) {
    guard let count = counts[table]?[key] else { return }
    counts[table]?[key] = count > 1 ? count - 1 : nil
  }
}
