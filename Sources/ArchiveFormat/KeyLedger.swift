import ObjectModel
import ObjectStore

/// The primary keys an archive holds, per entity hierarchy, and the keys its references point
/// at, per relationship: enough to tell that every key is positive and unique in its hierarchy,
/// every entity's keys ascend, every reference resolves inside the archive and `Z_MAX` covers
/// every key, without holding any object. Memory follows the number of keys (``KeySet``).
package struct KeyLedger {
  /// The keys of one hierarchy.
  struct Hierarchy {
    var keys = KeySet()
    var highest: Int64 = 0
  }

  /// The keys one relationship points at, and the hierarchy they must be in.
  struct Targets {
    let entity: String
    let label: String
    let root: String
    var keys = KeySet()
  }

  private var hierarchies: [String: Hierarchy] = [:]
  private var targets: [Targets] = []
  private var targetIndex: [String: Int] = [:]
  /// The last key of each entity, which the next must exceed.
  private var lastKey: [String: Int64] = [:]
  /// Each entity's root, and each relationship's destination hierarchy, looked up once.
  private var roots: [String: String] = [:]

  /// A ledger for objects of `model`.
  package init(model: ObjectModel) {
    for entity in model.entities {
      roots[entity.name] = model.root(of: entity.name)?.name ?? entity.name
    }
  }

  /// The hierarchy `entity` belongs to (its root's name).
  package func root(of entity: String) -> String { roots[entity] ?? entity }

  /// Records the primary keys of a chunk of `entity`'s objects.
  /// - Returns: what is wrong with the first key that is not positive, not above the entity's
  ///   previous key, or already in the hierarchy; nil when every key is new.
  package mutating func add(keys: [Int64], of entity: String) -> String? {
    let root = root(of: entity)
    var hierarchy = hierarchies.removeValue(forKey: root) ?? Hierarchy()
    defer { hierarchies[root] = hierarchy }
    var previous = lastKey[entity] ?? 0
    defer { lastKey[entity] = previous }
    for key in keys {
      guard key > 0 else { return "\(entity) has primary key \(key): keys are positive" }
      guard key > previous else {
        return
          "\(entity) p\(key) comes after p\(previous): an entity's objects are in ascending key order"
      }
      guard hierarchy.keys.insert(key) else {
        return "p\(key) is a second object with that key in the \(root) hierarchy"
      }
      previous = key
      hierarchy.highest = max(hierarchy.highest, key)
    }
    return nil
  }

  /// Records the keys `entity`'s relationship `relationship` points at (to-one targets, or
  /// many-to-many destinations), which must all be objects of `destination`'s hierarchy.
  package mutating func add(
    references keys: some Sequence<Int64>, from entity: String, through relationship: String,
    to destination: String
  ) {
    let label = "\(entity).\(relationship)"
    let index: Int
    if let known = targetIndex[label] {
      index = known
    } else {
      index = targets.count
      targets.append(Targets(entity: entity, label: label, root: root(of: destination)))
      targetIndex[label] = index
    }
    for key in keys { targets[index].keys.insert(key) }
  }

  /// The keys held of the hierarchy whose root is `root`.
  package func keys(ofRoot root: String) -> KeySet { hierarchies[root]?.keys ?? KeySet() }

  /// Each hierarchy whose highest key is above its `Z_MAX` in `store`'s `Z_PRIMARYKEY` rows,
  /// said as a problem of that member (the app's next insert would reuse a key).
  package func keysAboveMaximum(in store: ArchivedStore) -> [String] {
    highestKeys.sorted(by: { $0.key < $1.key }).compactMap { root, highest in
      let number = store.layout.entityNumbers[root]
      let maximum = store.entityRows.first { $0.number == number }?.maxPrimaryKey ?? 0
      guard maximum < highest else { return nil }
      return
        "Z_MAX of \(root) is \(maximum), below its highest key p\(highest): the app's next insert would reuse a key"
    }
  }

  /// The highest key of each hierarchy that has objects.
  package var highestKeys: [String: Int64] { hierarchies.mapValues(\.highest) }

  /// Every relationship that points at keys the archive does not hold: the entity whose
  /// objects point, and a sentence naming the relationship, the first few keys and how many
  /// there are.
  package func unresolvedReferences() -> [(entity: String, problem: String)] {
    targets.compactMap { target in
      let present = hierarchies[target.root]?.keys ?? KeySet()
      let (count, first) = target.keys.subtracting(present, limit: 3)
      guard count > 0 else { return nil }
      let keys = first.map { "p\($0)" }.joined(separator: ", ")
      return (
        target.entity,
        "\(target.label) points at \(count) object\(count == 1 ? "" : "s") of the \(target.root) hierarchy that the archive does not hold (\(keys)\(count > first.count ? ", …" : ""))"
      )
    }
  }
}
