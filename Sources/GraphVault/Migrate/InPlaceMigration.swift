import Foundation
import Migration
import ObjectModel
import ObjectStore
import SQLite

/// A migration done in SQL on the store itself, as Core Data's lightweight migration does a
/// change that only adds, drops or renames attributes (and the indexes that go with them):
/// columns added, dropped and renamed with `ALTER TABLE`, defaults given to the objects that
/// hold no value,
/// indexes made and dropped, the metadata, model cache and `Z_PRIMARYKEY` rewritten — all in
/// one transaction under the store's write lock, so a run killed at any moment leaves the store
/// as it was or migrated. What it writes is what the migrating restore writes for the same
/// plan: the same objects and values, the same bookkeeping, the same report.
///
/// Anything else (entity renames, type changes, entities added, removed or renumbered, relationships
/// changed, triggers changed, columns the model does not describe, several hops, custom stages)
/// is not one: ``init(plan:store:current:)`` gives nil, and the store is migrated by copy.
struct InPlaceMigration {
  let plan: MigrationPlan
  private let hop: MigrationHop
  /// `DROP INDEX`, `ALTER TABLE … DROP COLUMN`, `… RENAME COLUMN`, `… ADD COLUMN`, `CREATE
  /// INDEX`, in that order.
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
    // Entities keep their numbers: rows keep their Z_ENT.
    let numbers = store.entityNumbers(for: target)
    guard target.entities.allSatisfy({ numbers[$0.name] == target.entityNumbers[$0.name] }),
      Set(present.filter { $0.type == "table" }.map(\.name))
        == Set(expected.filter { $0.type == "table" }.map(\.name))
    else { return nil }
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
        let oldColumn = oldLayout.column(ofAttribute: from, in: rule.entity),
        let newColumn = newLayout.column(ofAttribute: rule.attribute, in: rule.entity),
        renamed[table]?[newColumn].map({ $0 == oldColumn }) ?? true
      else { return nil }
      if oldColumn != newColumn { renamed[table, default: [:]][newColumn] = oldColumn }
    }
    var drops: [String] = []
    var renames: [String] = []
    var adds: [String] = []
    var dropped: Set<String> = []
    for (table, columns) in expectedSnapshot.tables.sorted(by: { $0.key < $1.key }) {
      guard let old = snapshot.tables[table] else { return nil }
      let oldTypes = Dictionary(old.map { ($0.name, $0.type) }, uniquingKeysWith: { a, _ in a })
      let newNames = Set(columns.map(\.name))
      let addable = attributeColumns(newLayout, table)
      let droppable = attributeColumns(oldLayout, table)
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
        drops.append("ALTER TABLE \(table) DROP COLUMN \(column)")
        dropped.insert(column)
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
    statements = dropIndexes + drops + renames + adds + createIndexes
    self.attributes = attributes
    entities = target.entities.filter { !$0.isAbstract }.compactMap { entity in
      guard let table = newLayout.table(for: entity.name)?.name,
        let number = target.entityNumbers[entity.name]
      else { return nil }
      return (entity.name, table, number)
    }
    var maxima: [String: Int64] = [:]
    for row in store.entityRows { maxima[row.name] = row.maxPrimaryKey }
    entityRows = schema.entityRows(maxima: maxima)
    self.historyTables = historyTables
    (metadata, hashNote) = ObjectMigration.metadata(store.metadataBytes, for: target)
  }

  /// Runs the migration on `database` (inside the transaction the caller commits).
  /// - Returns: the report the migrating restore gives, and the objects by entity.
  /// - Throws: ``MigrationError`` for an object without a value its attribute requires, as
  ///   the hop refuses it; ``SQLiteError``.
  func run(on database: Database) throws -> (report: MigrationReport, objects: [String: Int]) {
    for sql in statements { try database.execute(sql) }
    var counts: [String: MigrationHop.Counts] = [:]
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
          entity: rule.entity, primaryKey: missing, target: rule.entity, attribute: rule.attribute)
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
