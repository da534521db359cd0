extension StoreSchema {
  /// The tables Core Data adds for persistent history tracking (`ACHANGE`, `ATRANSACTION`,
  /// `ATRANSACTIONSTRING`).
  package static let persistentHistoryTables = Set(PersistentHistory.entities.map { "A" + $0.name })

  /// Core Data's bookkeeping tables.
  package static let bookkeepingTables = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]

  /// The schema's statements as schema objects (tables, indexes, triggers), in creation order,
  /// each with its type, name and table as `sqlite_master` has them.
  package var schemaObjects: [CoreDataStore.SchemaObject] {
    statements.map { sql in
      // The generator's own text always reads.
      let statement = try? SchemaStatement(parsing: sql)
      return CoreDataStore.SchemaObject(
        type: statement?.type ?? "table", name: statement?.name ?? "",
        table: statement?.table ?? "", sql: sql)
    }
  }

  /// `Z_PRIMARYKEY` rows for this schema's entities (and the persistent-history entities when
  /// it has them), each root with its highest primary key from `maxima` (by root entity name).
  package func entityRows(maxima: [String: Int64]) -> [CoreDataStore.EntityRow] {
    var rows = model.numberedEntities.map { entity in
      CoreDataStore.EntityRow(
        number: entityNumbers[entity.name] ?? 0, name: entity.name,
        parent: entity.parent.flatMap { entityNumbers[$0] } ?? 0,
        maxPrimaryKey: entity.parent == nil ? maxima[entity.name] ?? 0 : 0)
    }
    if persistentHistory {
      rows += PersistentHistory.entities.map {
        CoreDataStore.EntityRow(number: $0.0, name: $0.1, parent: 0, maxPrimaryKey: 0)
      }
    }
    return rows
  }
}
