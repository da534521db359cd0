import ObjectModel
import SQLite

/// Judges, without writing a store, what SQLite would say when a restore builds the unique
/// indexes of a store's entity tables (Core Data's uniqueness constraints): the values under
/// each such index go into a table of their own in a private temporary database, with the
/// values a ``StoreLoader`` binds, and the index is built over them at the end. SQLite itself
/// decides, so its rules (numbers compared across storage classes, NULLs never equal,
/// collations) are the restore's.
///
/// Only the values under unique indexes are kept, never whole objects, and in SQLite's page
/// cache (spilled to an unnamed temporary file when large): memory stays flat.
package final class UniquenessCheck {
  /// A table of the values under one entity table's unique indexes.
  private struct Shadow {
    /// The columns kept, in order.
    let columns: [String]
    /// The statement inserting one object's values.
    let insert: Statement
  }

  private let database: Database
  private let layout: StoreLayout
  private var shadows: [String: Shadow] = [:]
  /// Where each kept column takes its value from, per entity, as the loader binds it.
  private var sources: [String: [StoreLoader.Column]] = [:]
  private let indexes: [CoreDataStore.SchemaObject]

  /// A check of the unique indexes that `schema` declares on the tables of `layout`'s model.
  /// - Throws: ``StoreError`` when the in-memory database cannot be made.
  package init(schema: CheckedSchema, layout: StoreLayout) throws(StoreError) {
    self.layout = layout
    let tables = Set(layout.tables.map { $0.name.uppercased() })
    var unique: [String: [String]] = [:]
    var indexes: [CoreDataStore.SchemaObject] = []
    for (statement, object) in zip(schema.statements, schema.objects) {
      guard case .index(let index) = statement, index.unique,
        tables.contains(index.table.uppercased())
      else { continue }
      for column in index.columns where !(unique[index.table]?.contains(column.name) ?? false) {
        unique[index.table, default: []].append(column.name)
      }
      indexes.append(object)
    }
    self.indexes = indexes
    do {
      database = try Database(path: StoreLoader.privateTemporary, mode: .readWriteCreate)
      try database.harden()
      for (table, columns) in unique.sorted(by: { $0.key < $1.key }) {
        guard let definition = schema.table(named: table) else { continue }
        let kept = columns.map { name in
          SchemaStatement.Column(name: name, type: definition.column(named: name)?.type ?? "")
        }
        let create = SchemaStatement.table(
          .init(name: table, columns: kept, primaryKey: nil, unique: []))
        try database.execute(create.sql)
        let insert = try database.prepare(
          "INSERT INTO \(SchemaStatement.quote(table)) VALUES (\(Array(repeating: "?", count: kept.count).joined(separator: ", ")))"
        )
        shadows[table.uppercased()] = Shadow(columns: columns, insert: insert)
      }
      try database.execute("BEGIN")
    } catch {
      throw StoreError(
        .database, "cannot set up the check of unique indexes", underlying: error)
    }
  }

  /// Whether objects of `entity` have values under a unique index.
  package func concerns(_ entity: String) -> Bool {
    guard let table = layout.table(for: entity) else { return false }
    return shadows[table.name.uppercased()] != nil
  }

  /// Adds an object's values under the unique indexes of its table.
  /// - Throws: ``StoreError`` when SQLite refuses a value.
  package func add(_ record: ObjectRecord) throws(StoreError) {
    guard let table = layout.table(for: record.entity),
      let shadow = shadows[table.name.uppercased()]
    else { return }
    let sources = sources(of: record.entity, table: table, shadow: shadow)
    var values: [SQLiteValue] = []
    values.reserveCapacity(shadow.columns.count)
    for (column, source) in zip(shadow.columns, sources) {
      // Values kept as stored override their column.
      values.append(
        record.extraColumns[column].map { SQLValues.sqlite(raw: $0) }
          ?? source.value(in: record, layout: layout))
    }
    do {
      try shadow.insert.bind(values)
      try shadow.insert.run()
    } catch {
      throw StoreError(
        .database, "cannot keep the values of \(record.reference)", underlying: error)
    }
  }

  /// Adds the values under unique indexes of a batch's objects, taken from its columns as the
  /// loader binds them (``StoreLoader/insert(_:)-(ObjectBatch)``).
  /// - Throws: ``StoreError`` when SQLite refuses a value.
  package func add(_ batch: ObjectBatch) throws(StoreError) {
    guard let table = layout.table(for: batch.entity),
      let shadow = shadows[table.name.uppercased()]
    else { return }
    let sources = sources(of: batch.entity, table: table, shadow: shadow)
    var rows = [[SQLiteValue]](
      repeating: [SQLiteValue](repeating: .null, count: shadow.columns.count), count: batch.count)
    for (position, (column, source)) in zip(shadow.columns, sources).enumerated() {
      switch source {
      case .attribute(let name, _):
        guard let values = batch.attributes.first(where: { $0.name == name }) else { break }
        for (value, record) in values.records.enumerated() {
          rows[record][position] = values.sqliteValue(at: value)
        }
      case .foreignKey(let name), .foreignEntity(let name):
        guard let targets = batch.toOne.first(where: { $0.name == name }) else { break }
        for (value, record) in targets.records.enumerated() {
          if case .foreignKey = source {
            rows[record][position] = .integer(targets.keys[value])
          } else {
            rows[record][position] =
              layout.entityNumbers[targets.entities[value]].map { .integer(Int64($0)) } ?? .null
          }
        }
      case .raw:
        break
      }
      // Values kept as stored override their column.
      if let stored = batch.storedColumns.first(where: { $0.name == column }) {
        for (value, record) in stored.records.enumerated() {
          rows[record][position] = stored.sqliteValue(at: value)
        }
      }
    }
    for (record, values) in rows.enumerated() {
      do {
        try shadow.insert.bind(values)
        try shadow.insert.run()
      } catch {
        throw StoreError(
          .database,
          "cannot keep the values of \(ObjectReference(entity: batch.entity, primaryKey: batch.primaryKeys[record]))",
          underlying: error)
      }
    }
  }

  /// Builds the unique indexes over the values added, as a restore builds them over its rows.
  /// - Throws: ``StoreError`` whose underlying ``SQLiteError`` is a constraint failure naming
  ///   the index and its columns, when two objects share the values of a unique index.
  package func finish() throws(StoreError) {
    for index in indexes {
      do {
        try database.execute(index.sql)
      } catch {
        throw StoreError(
          .database,
          "two objects share the values of unique index \(index.name)",
          underlying: error)
      }
    }
  }

  /// Where each kept column takes its value from, for objects of `entity`: the loader's own
  /// columns (``StoreLoader/columns(of:table:layout:)``), worked out once.
  private func sources(of entity: String, table: StoreLayout.Table, shadow: Shadow)
    -> [StoreLoader.Column]
  {
    if let known = sources[entity] { return known }
    let (columns, names) = StoreLoader.columns(of: entity, table: table, layout: layout)
    let found = shadow.columns.map { column in
      names.firstIndex(of: column).map { columns[$0] } ?? .raw(column)
    }
    sources[entity] = found
    return found
  }
}
