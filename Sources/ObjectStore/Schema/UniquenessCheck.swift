import Foundation
import ObjectModel
import SQLite

/// Judges, without writing a store, what SQLite would say when a restore builds the unique
/// indexes of a store's entity tables (Core Data's uniqueness constraints): the values under
/// each table's unique indexes go into a table of their own in a private temporary database
/// (``UniquenessShadow``), with the values a ``StoreLoader`` binds, and the indexes are built
/// over them. SQLite itself decides, so its rules (numbers compared across storage classes,
/// NULLs never equal, collations) are the restore's.
///
/// An archive's entities come one after another: once another table's objects begin, a
/// table's indexes are built on a thread of their own while the rest is added, rather than all
/// at the end. An object of a table whose indexes are built is checked against them as it is
/// added.
///
/// Only the values under unique indexes are kept, never whole objects, and in SQLite's page
/// cache (spilled to an unnamed temporary file when large): memory stays flat.
package final class UniquenessCheck {
  private let layout: StoreLayout
  /// Each table's shadow, by its name upper-cased.
  private var shadows: [String: UniquenessShadow] = [:]
  /// Where each kept column takes its value from, per entity, as the loader binds it.
  private var sources: [String: [StoreLoader.Column]] = [:]
  /// The table (upper-cased) whose objects came last.
  private var current: String?
  /// Where indexes are built in the background, one table at a time.
  private let builds = DispatchQueue(label: "graphvault.uniqueness")

  /// A check of the unique indexes that `schema` declares on the tables of `layout`'s model.
  /// - Throws: ``StoreError`` when a private database cannot be made.
  package init(schema: CheckedSchema, layout: StoreLayout) throws(StoreError) {
    self.layout = layout
    let tables = Set(layout.tables.map { $0.name.uppercased() })
    var unique: [String: [String]] = [:]
    var indexes: [String: [CoreDataStore.SchemaObject]] = [:]
    for (statement, object) in zip(schema.statements, schema.objects) {
      guard case .index(let index) = statement, index.unique,
        tables.contains(index.table.uppercased())
      else { continue }
      for column in index.columns where !(unique[index.table]?.contains(column.name) ?? false) {
        unique[index.table, default: []].append(column.name)
      }
      indexes[index.table.uppercased(), default: []].append(object)
    }
    do {
      for (table, columns) in unique.sorted(by: { $0.key < $1.key }) {
        guard let definition = schema.table(named: table) else { continue }
        let kept = columns.map { name in
          SchemaStatement.Column(name: name, type: definition.column(named: name)?.type ?? "")
        }
        shadows[table.uppercased()] = try UniquenessShadow(
          table: table, columns: kept, indexes: indexes[table.uppercased(), default: []])
      }
    } catch {
      throw StoreError(
        .database, "cannot set up the check of unique indexes", underlying: error)
    }
  }

  deinit {
    // A build still running ends before the shadows go.
    builds.sync {}
  }

  /// Adds an object's values under the unique indexes of its table.
  /// - Throws: ``StoreError`` when SQLite refuses a value, or (once the table's indexes are
  ///   built) another object has the same values.
  package func add(_ record: ObjectRecord) throws(StoreError) {
    guard let table = layout.table(for: record.entity) else { return }
    reached(table.name)
    guard let shadow = try shadow(of: table.name) else { return }
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
      throw refusal(of: record.reference, in: table.name, error)
    }
  }

  /// Where a kept column's value comes from in a batch's pinned columns.
  private enum Origin {
    case attribute(Int)
    case foreignKey(Int)
    case foreignEntity(Int)
    case none
  }

  /// Adds the values under unique indexes of a batch's objects, bound as the loader binds
  /// them (``StoreLoader/insert(_:)-(ObjectBatch)``), read where the batch keeps them.
  /// - Throws: ``StoreError`` when SQLite refuses a value, or (once the table's indexes are
  ///   built) another object has the same values.
  package func add(_ batch: ObjectBatch) throws(StoreError) {
    guard let table = layout.table(for: batch.entity) else { return }
    reached(table.name)
    guard let shadow = try shadow(of: table.name) else { return }
    let sources = sources(of: batch.entity, table: table, shadow: shadow)
    let pinned = PinnedColumns(batch, entityNumbers: layout.entityNumbers)
    let origins: [Origin] = sources.map { source in
      switch source {
      case .attribute(let name, _):
        batch.attributes.firstIndex { $0.name == name }.map { .attribute($0) } ?? .none
      case .foreignKey(let name):
        batch.toOne.firstIndex { $0.name == name }.map { .foreignKey($0) } ?? .none
      case .foreignEntity(let name):
        batch.toOne.firstIndex { $0.name == name }.map { .foreignEntity($0) } ?? .none
      case .raw: .none
      }
    }
    // Values kept as stored override their column.
    let stored = shadow.columns.map { column in
      batch.storedColumns.firstIndex { $0.name == column }
    }
    // Each kept column's next value, and its stored column's.
    var next = Array(repeating: 0, count: origins.count)
    var nextStored = Array(repeating: 0, count: origins.count)
    var insert = shadow.insert
    // Texts and blobs are bound without a copy: no binding may outlive the batch.
    defer { insert.reset(clearBindings: true) }
    for record in 0..<batch.count {
      do {
        for (position, origin) in origins.enumerated() {
          let parameter = position + 1
          var bound = false
          if let index = stored[position] {
            let column = pinned.storedColumns[index]
            if PinnedColumns.lists(record, at: nextStored[position], in: column.records) {
              try column.values.bind(
                nextStored[position], decimal: false, to: &insert, at: parameter)
              nextStored[position] += 1
              bound = true
            }
          }
          switch origin {
          case .attribute(let index):
            let column = pinned.attributes[index]
            guard PinnedColumns.lists(record, at: next[position], in: column.records) else { break }
            if !bound {
              try column.values.bind(
                next[position], decimal: column.decimal, to: &insert, at: parameter)
              bound = true
            }
            next[position] += 1
          case .foreignKey(let index), .foreignEntity(let index):
            let column = pinned.toOne[index]
            guard PinnedColumns.lists(record, at: next[position], in: column.records) else { break }
            if !bound {
              if case .foreignKey = origin {
                try insert.bind(column.keys[next[position]], at: parameter)
              } else if let number = column.entityNumbers[next[position]] {
                try insert.bind(number, at: parameter)
              } else {
                try insert.bindNull(at: parameter)
              }
              bound = true
            }
            next[position] += 1
          case .none:
            break
          }
          if !bound { try insert.bindNull(at: parameter) }
        }
        try insert.run()
      } catch {
        throw refusal(
          of: ObjectReference(entity: batch.entity, primaryKey: batch.primaryKeys[record]),
          in: table.name, error)
      }
    }
  }

  /// The shadow of `table`, if it has unique indexes, ready for values: a build of its
  /// indexes begun is waited for.
  /// - Throws: ``StoreError`` when that build found two objects sharing values.
  private func shadow(of table: String) throws(StoreError) -> UniquenessShadow? {
    guard let shadow = shadows[table.uppercased()] else { return nil }
    if shadow.building { try shadow.built() }
    return shadow
  }

  /// The error of SQLite refusing `object`'s values for `table`'s shadow: two objects sharing
  /// a unique index's values once its indexes are built, else a value SQLite refused.
  private func refusal(of object: ObjectReference, in table: String, _ error: any Error)
    -> StoreError
  {
    let underlying = error as? SQLiteError
    if underlying?.isConstraint == true, shadows[table.uppercased()]?.building == true {
      return StoreError(
        .database,
        "\(object) has the values of a unique index of \(table) that another object has",
        underlying: underlying)
    }
    return StoreError(.database, "cannot keep the values of \(object)", underlying: underlying)
  }

  /// Whether the indexes of `table` are being built, or are.
  func isBuilding(_ table: String) -> Bool { shadows[table.uppercased()]?.building == true }

  /// Notes that objects of `table` are coming: the unique indexes of the table whose objects
  /// came before begin to be built in the background.
  private func reached(_ table: String) {
    let table = table.uppercased()
    guard table != current else { return }
    if let current { shadows[current]?.buildInBackground(on: builds) }
    current = table
  }

  /// Builds the unique indexes over the values added, as a restore builds them over its rows,
  /// or waits for those being built.
  /// - Throws: ``StoreError`` whose underlying ``SQLiteError`` is a constraint failure naming
  ///   the index and its columns, when two objects share the values of a unique index (the
  ///   first table's in name order, when several do).
  package func finish() throws(StoreError) {
    for (_, shadow) in shadows.sorted(by: { $0.key < $1.key }) { try shadow.built() }
  }

  /// Where each kept column takes its value from, for objects of `entity`: the loader's own
  /// columns (``StoreLoader/columns(of:table:layout:)``), worked out once.
  private func sources(of entity: String, table: StoreLayout.Table, shadow: UniquenessShadow)
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
