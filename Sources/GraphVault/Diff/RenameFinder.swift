/// An object deleted and one inserted whose values are mostly equal: perhaps one object whose
/// key changed (renamed, re-keyed, re-created by an app), which `diff` points at without
/// deciding for the user.
public struct LikelyRename: Codable, Sendable, Equatable {
  /// The entity.
  public let entity: String
  /// How the deleted object was known (``ObjectChange/key``).
  public let old: String
  /// How the inserted object is known.
  public let new: String
  /// How many of their properties hold equal values.
  public let equal: Int
  /// How many properties either has a value for.
  public let compared: Int

  /// A pair: the deleted object `old` and the inserted `new` of `entity`, with `equal` of
  /// `compared` values equal.
  public init(entity: String, old: String, new: String, equal: Int, compared: Int) {
    self.entity = entity
    self.old = old
    self.new = new
    self.equal = equal
    self.compared = compared
  }
}

/// Watches a diff's changes go by and pairs deleted objects with inserted ones of the same
/// entity whose values are mostly equal (at least two, and at least two thirds of those either
/// has), best pairs first, each object in one pair at most. It keeps at most ``limit`` deleted
/// and inserted objects of each entity, so its memory is bounded whatever the diff's size.
struct RenameFinder {
  /// The most deleted (and inserted) objects of one entity kept for pairing.
  static let limit = 500

  private struct Seen {
    let key: String
    let values: [String: String]
  }

  private var deleted: [String: [Seen]] = [:]
  private var inserted: [String: [Seen]] = [:]
  private var order: [String] = []

  /// Takes note of `change` when it is a deleted or inserted object.
  mutating func observe(_ change: ObjectChange) {
    guard change.kind != .changed else { return }
    if deleted[change.entity] == nil {
      order.append(change.entity)
      deleted[change.entity] = []
      inserted[change.entity] = []
    }
    var values: [String: String] = [:]
    for property in change.properties {
      values[property.name] = property.new ?? property.old
    }
    let seen = Seen(key: change.key, values: values)
    if change.kind == .deleted {
      if deleted[change.entity]!.count < Self.limit { deleted[change.entity]!.append(seen) }
    } else if inserted[change.entity]!.count < Self.limit {
      inserted[change.entity]!.append(seen)
    }
  }

  /// The likely renames, entity by entity in the order they were seen, best pairs first.
  func likely() -> [LikelyRename] {
    var found: [LikelyRename] = []
    for entity in order {
      let (gone, new) = (deleted[entity] ?? [], inserted[entity] ?? [])
      var pairs: [(old: Int, new: Int, equal: Int, compared: Int)] = []
      for (i, before) in gone.enumerated() {
        for (j, after) in new.enumerated() {
          let (equal, compared) = Self.likeness(before.values, after.values)
          if Self.isAlike(equal: equal, of: compared) { pairs.append((i, j, equal, compared)) }
        }
      }
      // Best first: the larger share of equal values, then the earlier objects.
      pairs.sort {
        let share = Self.share(($0.equal, $0.compared), comparedWith: ($1.equal, $1.compared))
        return share != 0 ? share > 0 : ($0.old, $0.new) < ($1.old, $1.new)
      }
      var (usedOld, usedNew) = (Set<Int>(), Set<Int>())
      for pair in pairs where !usedOld.contains(pair.old) && !usedNew.contains(pair.new) {
        usedOld.insert(pair.old)
        usedNew.insert(pair.new)
        found.append(
          LikelyRename(
            entity: entity, old: gone[pair.old].key, new: new[pair.new].key, equal: pair.equal,
            compared: pair.compared))
      }
    }
    return found
  }

  /// Whether two objects with `equal` of `compared` values equal are alike enough to point
  /// at: at least two values, and at least two thirds of them, equal.
  static func isAlike(equal: Int, of compared: Int) -> Bool {
    equal >= 2 && equal * 3 >= compared * 2
  }

  /// How the share of equal values `a` (equal, compared) stands to `b`'s: positive when
  /// larger, zero when the same, negative when smaller.
  static func share(_ a: (equal: Int, compared: Int), comparedWith b: (equal: Int, compared: Int))
    -> Int
  {
    a.equal * b.compared - b.equal * a.compared
  }

  /// How many properties hold equal values, of how many either has a value for.
  static func likeness(_ a: [String: String], _ b: [String: String]) -> (Int, Int) {
    var equal = 0
    var compared = a.count
    for (name, value) in b {
      if let other = a[name] {
        if other == value { equal += 1 }
      } else {
        compared += 1
      }
    }
    return (equal, compared)
  }
}
