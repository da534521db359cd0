import Foundation
import Migration
import ObjectModel
import ObjectStore
import SQLite

/// A migration done in SQL on the store itself, as Core Data's lightweight migration does a
/// change that only adds, drops or renames attributes, adds or removes entities and
/// relationships, or renames them (and the indexes that go with them): columns added,
/// dropped and renamed with `ALTER TABLE`, defaults given to the objects that hold no value,
/// tables made for what was added, dropped with what was removed (its objects and links
/// counted first, as the hop counts them) and renamed with a renamed entity, indexes made and
/// dropped, the metadata, model cache and `Z_PRIMARYKEY` rewritten — all in one transaction
/// under the store's write lock, so a run killed at any moment leaves the store as it was or
/// migrated. What it writes is what the migrating restore writes for the same plan: the same
/// objects and values, the same bookkeeping, the same report.
///
/// An entity added, removed or renamed where Core Data's numbering moves others' numbers
/// (`Z_ENT`): the rows' numbers, the to-one columns holding a destination's number and the
/// columns and join tables named after one follow (``structure(old:new:current:names:numbers:renamed:)``).
///
/// Relationships renamed by their renaming identifiers have their columns and join tables
/// renamed.
///
/// Anything else (a sub-entity removed from a hierarchy that stays, type
/// changes, a to-one that comes to need its destination's entity, a to-many without an inverse
/// removed, triggers changed, columns the model does not describe, several hops, custom
/// stages) is not one: ``init(plan:store:current:)`` gives nil, and the store is migrated by
/// copy.
struct InPlaceMigration {
  let plan: MigrationPlan
  private let hop: MigrationHop
  /// `DROP INDEX`, `DROP TABLE`, `ALTER TABLE … DROP COLUMN`, `… RENAME TO`, `… RENAME
  /// COLUMN`, `… ADD COLUMN`, `CREATE TABLE`, the entity numbers moved, `CREATE INDEX`, in that
  /// order.
  private let statements: [String]
  /// The attributes given a default or checked, with their table, column and entity number.
  private let attributes:
    [(rule: MigrationHop.InPlaceAttribute, table: String, column: String, entity: Int)]
  /// The concrete entities' tables and numbers, for the counts.
  private let entities: [(name: String, table: String, number: Int)]
  /// `Z_PRIMARYKEY` as the migrating restore writes it.
  private let entityRows: [CoreDataStore.EntityRow]
  private let historyTables: [String]
  private let metadata: [UInt8]
  private let hashNote: String?
  /// What the hop counts of the objects and links it drops, counted before they go.
  private let tallies: [Tally]

  /// The plan done in place on `store` (at `current`), or nil when it cannot be.
  init?(plan: MigrationPlan, store: CoreDataStore, current: ObjectModel) throws {
    guard plan.hops.count == 1, plan.stages.isEmpty, let hop = plan.hops.first,
      let rules = hop.inPlaceAttributes
    else { return nil }
    let target = plan.target
    let present = try store.schemaObjects()
    let historyTables = StoreSchema.persistentHistoryTables.filter { table in
      present.contains { $0.type == "table" && $0.name == table }
    }.sorted()
    let schema = try StoreSchema(model: target, persistentHistory: !historyTables.isEmpty)
    let expected = schema.schemaObjects
    // Every entity kept (under its name or renamed) keeps its parent, and so its table;
    // entities may be added, and whole hierarchies removed.
    let names = hop.keptEntities
    func newName(_ entity: String) -> String { names[entity] ?? entity }
    guard
      current.entities.allSatisfy({ entity in
        guard names[entity.name] != nil else {
          let root = current.root(of: entity.name)?.name ?? entity.name
          return current.hierarchy(from: root).allSatisfy { names[$0.name] == nil }
        }
        return target.entity(named: newName(entity.name))?.parent == entity.parent.map(newName)
      })
    else { return nil }
    // Entities take the target's numbers: where an added or renamed one comes before others,
    // theirs move.
    let numbers = store.entityNumbers(for: current)
    var moved: [Int: Int] = [:]
    for entity in current.entities where names[entity.name] != nil {
      guard let old = numbers[entity.name], let new = target.entityNumbers[newName(entity.name)]
      else { return nil }
      if old != new { moved[old] = new }
    }
    let snapshot = try store.schema()
    let expectedSnapshot = try SchemaSnapshot(of: schema)
    let oldLayout = try store.layout(for: current)
    let newLayout = try StoreLayout(
      model: target, snapshot: expectedSnapshot, entityNumbers: target.entityNumbers)
    func attributeColumns(_ layout: StoreLayout, _ table: String) -> Set<String> {
      Set(
        layout.tables.first { $0.name == table }?.attributes.values.flatMap { $0.map(\.column) }
          ?? [])
    }
    // Renamed attributes keep their values: their columns are renamed, by table (the entities
    // of a hierarchy rename an inherited attribute once).
    var renamed: [String: [String: String]] = [:]
    for rule in rules {
      guard let from = rule.renamedFrom else { continue }
      guard let table = newLayout.table(for: rule.entity)?.name,
        let oldColumn = oldLayout.column(ofAttribute: from, in: rule.sourceEntity ?? rule.entity),
        let newColumn = newLayout.column(ofAttribute: rule.attribute, in: rule.entity),
        renamed[table]?[newColumn].map({ $0 == oldColumn }) ?? true
      else { return nil }
      if oldColumn != newColumn { renamed[table, default: [:]][newColumn] = oldColumn }
    }
    guard
      let structure = Self.structure(
        old: oldLayout, new: newLayout, current: current, names: names,
        relationships: { hop.keptRelationship($1, of: $0) }, numbers: numbers, renamed: &renamed)
    else { return nil }
    var drops: [String] = []
    var tableRenames: [String] = []
    var renames: [String] = []
    var adds: [String] = []
    var creates: [String] = []
    var dropped: Set<String> = []
    var kept: Set<String> = []
    for (table, columns) in expectedSnapshot.tables.sorted(by: { $0.key < $1.key }) {
      let oldName = structure.tableRenames[table] ?? table
      guard let old = snapshot.tables[oldName] else {
        // A table of its own for an added hierarchy or relationship.
        guard structure.newTables.contains(table),
          let sql = expected.first(where: { $0.type == "table" && $0.name == table })?.sql
        else { return nil }
        creates.append(sql)
        continue
      }
      kept.insert(oldName)
      if oldName != table { tableRenames.append("ALTER TABLE \(oldName) RENAME TO \(table)") }
      let oldTypes = Dictionary(old.map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a })
      let newNames = Set(columns.map(\.name))
      let addable = attributeColumns(newLayout, table).union(structure.addable[table] ?? [])
      let droppable = attributeColumns(oldLayout, oldName).union(
        structure.droppable[oldName] ?? [])
      let renamedHere = renamed[table] ?? [:]
      for column in columns {
        if let type = oldTypes[column.name] {
          guard type == column.type, !renamedHere.values.contains(column.name) else { return nil }
        } else if let source = renamedHere[column.name] {
          guard oldTypes[source] == column.type, !newNames.contains(source) else { return nil }
          renames.append("ALTER TABLE \(table) RENAME COLUMN \(source) TO \(column.name)")
          dropped.insert(source)
        } else {
          guard addable.contains(column.name) else { return nil }
          adds.append("ALTER TABLE \(table) ADD COLUMN \(column.name) \(column.type)")
        }
      }
      for column in old.map(\.name)
      where !newNames.contains(column) && !renamedHere.values.contains(column) {
        guard droppable.contains(column) else { return nil }
        drops.append("ALTER TABLE \(oldName) DROP COLUMN \(column)")
        dropped.insert(column)
      }
    }
    guard Set(snapshot.tables.keys) == kept.union(structure.droppedTables),
      structure.tableRenames.allSatisfy({ $0.key == $0.value || snapshot.tables[$0.key] == nil }
      )
    else { return nil }
    // The rows' entity numbers and the to-one columns holding a destination's, moved at once.
    var renumbering: [String] = []
    if !moved.isEmpty {
      let cases = moved.sorted { $0.key < $1.key }.map { "WHEN \($0.key) THEN \($0.value)" }
        .joined(separator: " ")
      let list = moved.keys.sorted().map(String.init).joined(separator: ", ")
      for (table, column) in [(String, String)](
        newLayout.tables.map { ($0.name, "Z_ENT") } + structure.entityColumns)
      where kept.contains(structure.tableRenames[table] ?? table) {
        renumbering.append(
          "UPDATE \(table) SET \(column) = CASE \(column) \(cases) END WHERE \(column) IN (\(list))"
        )
      }
    }
    // Triggers stay as they are (derived attributes unchanged); indexes follow the model.
    let oldIndexes = Dictionary(
      present.filter { $0.type == "index" }.map { ($0.name, $0.sql) },
      uniquingKeysWith: { a, _ in a })
    let newIndexes = Dictionary(
      expected.filter { $0.type == "index" }.map { ($0.name, $0.sql) },
      uniquingKeysWith: { a, _ in a })
    let oldTriggers = present.filter { $0.type == "trigger" }.map(\.sql).sorted()
    let newTriggers = expected.filter { $0.type == "trigger" }.map(\.sql).sorted()
    guard oldTriggers == newTriggers,
      !oldTriggers.contains(where: { sql in dropped.contains { sql.contains($0) } })
    else { return nil }
    let dropIndexes = oldIndexes.filter { newIndexes[$0.key] != $0.value }.keys.sorted().map {
      "DROP INDEX \($0)"
    }
    let createIndexes = expected.filter {
      $0.type == "index" && oldIndexes[$0.name] != $0.sql
    }.map(\.sql)
    var attributes: [(MigrationHop.InPlaceAttribute, String, String, Int)] = []
    for rule in rules where rule.fill != nil || rule.isRequired {
      guard let table = newLayout.table(for: rule.entity)?.name,
        let column = newLayout.column(ofAttribute: rule.attribute, in: rule.entity),
        let number = target.entityNumbers[rule.entity]
      else { return nil }
      attributes.append((rule, table, column, number))
    }
    self.plan = plan
    self.hop = hop
    statements =
      dropIndexes + structure.droppedTables.sorted().map { "DROP TABLE \($0)" } + drops
      + tableRenames + renames + adds + creates + renumbering + createIndexes
    tallies = structure.tallies
    self.attributes = attributes
    entities = target.entities.filter { !$0.isAbstract }.compactMap { entity in
      guard let table = newLayout.table(for: entity.name)?.name,
        let number = target.entityNumbers[entity.name]
      else { return nil }
      return (entity.name, table, number)
    }
    var maxima: [String: Int64] = [:]
    for row in store.entityRows { maxima[newName(row.name)] = row.maxPrimaryKey }
    entityRows = schema.entityRows(maxima: maxima)
    self.historyTables = historyTables
    (metadata, hashNote) = ObjectMigration.metadata(store.metadataBytes, for: target)
  }

  /// Runs the migration on `database` (inside the transaction the caller commits).
  /// - Returns: the report the migrating restore gives, and the objects by entity.
  /// - Throws: ``MigrationError`` for an object without a value its attribute requires, as
  ///   the hop refuses it; ``SQLiteError``.
  func run(on database: Database) throws -> (report: MigrationReport, objects: [String: Int]) {
    var counts: [String: MigrationHop.Counts] = [:]
    for tally in tallies {
      for row in try database.prepare(tally.sql).allRows() {
        guard let number = row[0].integerValue, let count = row[1].integerValue, count > 0,
          let entity = tally.entities[Int(number)]
        else { continue }
        if let relationship = tally.relationship {
          counts[entity, default: .init()].droppedLinks[relationship, default: 0] += Int(count)
        } else {
          counts[entity, default: .init()].dropped += Int(count)
        }
      }
    }
    for sql in statements { try database.execute(sql) }
    var objects: [String: Int] = [:]
    // A table of one concrete entity is counted whole (SQLite counts the smallest index);
    // a hierarchy's by Z_ENT (which it indexes).
    for (table, members) in Dictionary(grouping: entities, by: \.table).sorted(by: {
      $0.key < $1.key
    }) {
      let sql =
        members.count == 1
        ? "SELECT \(members[0].number), count(*) FROM \(table)"
        : "SELECT Z_ENT, count(*) FROM \(table) GROUP BY Z_ENT"
      for row in try database.prepare(sql).allRows() {
        guard let number = row[0].integerValue, let count = row[1].integerValue, count > 0,
          let entity = members.first(where: { $0.number == number })
        else { continue }
        objects[entity.name] = Int(count)
        counts[entity.name, default: .init()].migrated = Int(count)
      }
    }
    for (rule, table, column, number) in attributes {
      if let fill = rule.fill {
        let update = try database.prepare(
          "UPDATE \(table) SET \(column) = ? WHERE Z_ENT = \(number) AND \(column) IS NULL")
        try update.bind([SQLValues.sqlite(fill)])
        try update.run()
        if database.changes > 0 {
          counts[rule.entity, default: .init()].filled[rule.attribute] = database.changes
        }
      } else if rule.isRequired,
        let missing = try database.prepare(
          "SELECT Z_PK FROM \(table) WHERE Z_ENT = \(number) AND \(column) IS NULL ORDER BY Z_PK LIMIT 1"
        ).allRows().first?.first?.integerValue
      {
        throw hop.missingRequiredValue(
          entity: rule.sourceEntity ?? rule.entity, primaryKey: missing, target: rule.entity,
          attribute: rule.attribute)
      }
    }
    var notes: [String] = []
    for table in historyTables {
      let count = try database.prepare("SELECT count(*) FROM \(table)").scalar().integerValue ?? 0
      guard count > 0 else { continue }
      try database.execute("DELETE FROM \(table)")
      notes.append(ObjectMigration.historyNote(table: table, count: Int(count)))
    }
    if let hashNote { notes.append(hashNote) }
    try database.execute("DELETE FROM Z_PRIMARYKEY")
    try StoreLoader.insert(entityRows: entityRows, into: database)
    let meta = try database.prepare("UPDATE Z_METADATA SET Z_PLIST = ?")
    try meta.bind([.blob(metadata)])
    try meta.run()
    try database.execute("DELETE FROM Z_MODELCACHE")
    let cache = try database.prepare("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)")
    try cache.bind([.blob(try CompiledModelWriter.modelCache(plan.target))])
    try cache.run()
    return (plan.report(counts: [counts], notes: notes), objects)
  }
}
