import ObjectModel
import ObjectStore

extension InPlaceMigration {
  /// A count of dropped objects or links by entity number: `sql` gives each number and its
  /// count; they go to `entities`' names, as objects dropped or, with a relationship, as its
  /// links dropped.
  struct Tally {
    let sql: String
    let entities: [Int: String]
    var relationship: String? = nil
  }

  /// What the hop does to tables and relationship columns besides attributes.
  struct Structure {
    /// Tables of added hierarchies and of added many-to-many relationships.
    var newTables: Set<String> = []
    /// Per table, the columns of added relationships (empty for every object there now).
    var addable: [String: Set<String>] = [:]
    /// The to-one columns of kept relationships holding a destination's entity number (the
    /// table's name and the column's, in the target).
    var entityColumns: [(String, String)] = []
    /// Kept tables by their name in the target: their name in the store (a renamed entity's,
    /// a join table named after a moved entity number).
    var tableRenames: [String: String] = [:]
    /// Tables of removed hierarchies and removed many-to-many relationships.
    var droppedTables: Set<String> = []
    /// Per table (the store's name), the columns of removed relationships.
    var droppable: [String: Set<String>] = [:]
    /// The counts of what is dropped.
    var tallies: [Tally] = []
  }

  /// How `new` (the target's layout) keeps `old`'s tables and relationship columns, `names`
  /// giving each entity of `current` kept its name in the target (`numbers`, its number in the
  /// store): each kept relationship's columns, those named after an entity number renamed into
  /// `renamed` (by table, the target's name to the store's), added relationships' columns and
  /// tables, and removed hierarchies' and relationships' tables and columns, with the counts
  /// the hop gives of what they held. Nil when a relationship is changed, a removed one keeps
  /// an owner's key in its destination's rows, or a kept to-one comes to need its
  /// destination's entity number (values the store does not hold).
  static func structure(
    old: StoreLayout, new: StoreLayout, current: ObjectModel, names: [String: String],
    relationships relationshipName: (_ entity: String, _ name: String) -> String?,
    numbers: [String: Int], renamed: inout [String: [String: String]]
  ) -> Structure? {
    var structure = Structure()
    /// The store's numbers of the concrete entities of `entity`'s hierarchy, to their names
    /// in the report (the target's, or the store's for removed ones).
    func concrete(_ entity: String) -> [Int: String] {
      var found: [Int: String] = [:]
      for member in current.hierarchy(from: entity) where !member.isAbstract {
        if let number = numbers[member.name] { found[number] = names[member.name] ?? member.name }
      }
      return found
    }
    func list(_ numbers: [Int: String]) -> String {
      numbers.keys.sorted().map(String.init).joined(separator: ", ")
    }
    for table in old.tables where names[table.rootEntity] == nil {
      structure.droppedTables.insert(table.name)
      structure.tallies.append(
        Tally(
          sql: "SELECT Z_ENT, count(*) FROM \(table.name) GROUP BY Z_ENT",
          entities: concrete(table.rootEntity)))
    }
    let sources = Dictionary(names.map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
    func newName(_ entity: String) -> String { names[entity] ?? entity }
    /// Whether the target's `entity` has `relationship` where the store's entity it comes from
    /// (if any) has none.
    func isAdded(_ entity: String, _ relationship: String) -> Bool {
      guard let source = sources[entity] else { return true }
      return !current.relationships(of: source).contains {
        relationshipName(source, $0.name) == relationship
      }
    }
    /// Whether the store's `entity` keeps `relationship` in the target (a changed one is
    /// neither kept nor removed: nil is given above).
    func isKept(_ entity: String, _ relationship: String) -> Bool {
      names[entity] != nil && relationshipName(entity, relationship) != nil
    }
    func rename(_ table: String, _ from: String?, _ to: String?) -> Bool {
      guard let from, let to else { return from == nil && to == nil }
      if from != to { renamed[table, default: [:]][to] = from }
      return true
    }
    /// Whether the store's `entity`'s relationship `kept` is the target's `relationship`.
    func same(
      _ entity: String, _ kept: RelationshipDescription, _ relationship: RelationshipDescription
    ) -> Bool {
      relationshipName(entity, kept.name) == relationship.name
        && newName(kept.destination) == relationship.destination
    }
    for table in new.tables {
      guard let root = sources[table.rootEntity] else {
        structure.newTables.insert(table.name)
        continue
      }
      guard let before = old.tables.first(where: { $0.rootEntity == root }) else { return nil }
      structure.tableRenames[table.name] = before.name
      // A removed to-one's columns go; its links are counted by the objects that hold one.
      for (entity, columns) in before.toOne {
        for column in columns
        where !(table.toOne[newName(entity)] ?? []).contains(where: {
          same(entity, column.relationship, $0.relationship)
        }) {
          let name = column.relationship.name
          guard names[entity] != nil, !isKept(entity, name) else { return nil }
          let entities = concrete(entity)
          structure.droppable[before.name, default: []].formUnion(
            [column.column] + (column.entityColumn.map { [$0] } ?? [])
              + (before.orderKeys["\(entity).\(name)"].map { [$0] } ?? []))
          structure.tallies.append(
            Tally(
              sql:
                "SELECT Z_ENT, count(*) FROM \(before.name) WHERE \(column.column) IS NOT NULL AND Z_ENT IN (\(list(entities))) GROUP BY Z_ENT",
              entities: entities, relationship: name))
        }
      }
      for (entity, columns) in table.toOne {
        for column in columns {
          let name = column.relationship.name
          guard let source = sources[entity],
            let kept = before.toOne[source]?.first(where: {
              relationshipName(source, $0.relationship.name) == name
            })
          else {
            guard isAdded(entity, name) else { return nil }
            structure.addable[table.name, default: []].formUnion(
              [column.column] + (column.entityColumn.map { [$0] } ?? []))
            continue
          }
          guard same(source, kept.relationship, column.relationship),
            rename(table.name, kept.column, column.column),
            rename(table.name, kept.entityColumn, column.entityColumn)
          else { return nil }
          if let entityColumn = column.entityColumn {
            structure.entityColumns.append((table.name, entityColumn))
          }
        }
      }
      // Order keys, and the owner's key and place of a to-many without an inverse (named
      // after the owner's entity number), by relationship (`Entity.name`).
      for (keys, kept) in [
        (table.orderKeys, before.orderKeys), (table.ownerKeys, before.ownerKeys),
        (table.ownerOrderKeys, before.ownerOrderKeys),
      ] {
        var renamedKeys: [String: String] = [:]
        for (key, column) in kept {
          let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
          guard parts.count == 2 else { return nil }
          // A removed to-one's order key goes with it (above).
          if structure.droppable[before.name]?.contains(column) == true { continue }
          let relationship = relationshipName(parts[0], parts[1]) ?? parts[1]
          renamedKeys["\(newName(parts[0])).\(relationship)"] = column
        }
        guard Set(renamedKeys.keys).isSubset(of: keys.keys) else { return nil }
        for (key, column) in keys {
          if let was = renamedKeys[key] {
            _ = rename(table.name, was, column)
            continue
          }
          let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
          guard parts.count == 2, isAdded(parts[0], parts[1]) else { return nil }
          structure.addable[table.name, default: []].insert(column)
        }
      }
    }
    for join in new.joins {
      guard
        let kept = old.joins.first(where: {
          newName($0.entity) == join.entity && same($0.entity, $0.relationship, join.relationship)
        })
      else {
        guard isAdded(join.entity, join.relationship.name) else { return nil }
        structure.newTables.insert(join.name)
        continue
      }
      guard rename(join.name, kept.sourceColumn, join.sourceColumn),
        rename(join.name, kept.destinationColumn, join.destinationColumn),
        rename(join.name, kept.orderColumn, join.orderColumn)
      else { return nil }
      structure.tableRenames[join.name] = kept.name
    }
    // A removed many-to-many's table goes; its rows are counted by their owners, when kept.
    for join in old.joins
    where !new.joins.contains(where: {
      $0.entity == newName(join.entity) && same(join.entity, join.relationship, $0.relationship)
    }) {
      guard !isKept(join.entity, join.relationship.name) else { return nil }
      structure.droppedTables.insert(join.name)
      guard names[join.entity] != nil, let owner = old.table(for: join.entity)?.name else {
        continue
      }
      let entities = concrete(join.entity)
      structure.tallies.append(
        Tally(
          sql:
            "SELECT o.Z_ENT, count(*) FROM \(join.name) AS j JOIN \(owner) AS o ON o.Z_PK = j.\(join.sourceColumn) WHERE o.Z_ENT IN (\(list(entities))) GROUP BY o.Z_ENT",
          entities: entities, relationship: join.relationship.name))
    }
    return structure
  }
}
