import Foundation
import ObjectModel
import SQLite

/// Fills a new store in bulk, as a restore does: the source's tables first, then the rows (one
/// prepared statement per entity), then the source's indexes and triggers, so that
/// derived-attribute triggers do not count rows that arrive with their counts already set.
/// Everything happens in one transaction; nothing is visible until ``finish(journalMode:)``.
package final class StoreLoader {
  /// The file being filled.
  package let path: String
  let database: Database
  /// The model mapped onto the new tables, once ``prepare(model:entityRows:)`` ran.
  package private(set) var layout: StoreLayout?
  private var inserts: [String: (Statement, [Column], [String])] = [:]
  private var groupedInserts: [String: Statement] = [:]
  private var joinsByRelationship: [String: StoreLayout.Join?] = [:]
  private var storedColumnsByEntity: [String: Set<String>] = [:]
  private var rowInserts: [String: Statement] = [:]
  private var joinInserts: [String: Statement] = [:]
  /// The threads SQLite's sorter may start besides the connection's own when it builds an
  /// index, as SQLite granted them (none where it was built without).
  package private(set) var sorterThreads = 0
  /// Links stored on rows other than the one being inserted (see ``link(_:_:to:order:)``).
  var deferred = DeferredLinks()
  /// The entity tables being written without SQLite, between ``writeTablesDirectly()`` and
  /// ``endDirectWrites()``.
  var direct: DirectLoad?
  /// The indexes made before the rows, for direct writes to build
  /// (``writeTablesDirectly(indexes:)``).
  var indexesMade: Set<String> = []

  /// Where a column of an entity's table takes its value from.
  enum Column {
    case attribute(String, AttributeType)
    case foreignKey(String)
    case foreignEntity(String)
    case raw(String)

    /// The value `record` gives this column (NULL for a raw column: only a value the record
    /// keeps as stored sets it).
    func value(in record: ObjectRecord, layout: StoreLayout) -> SQLiteValue {
      switch self {
      case .attribute(let name, _):
        return record.attributes[name].map { SQLValues.sqlite($0) } ?? .null
      case .foreignKey(let name):
        return record.toOne[name].map { .integer($0.primaryKey) } ?? .null
      case .foreignEntity(let name):
        return record.toOne[name].flatMap { layout.entityNumbers[$0.entity] }.map {
          .integer(Int64($0))
        } ?? .null
      case .raw:
        return .null
      }
    }
  }

  /// The path of a private temporary database (SQLite's empty file name): kept in its page
  /// cache and spilled to an unnamed temporary file when large, deleted when closed. What
  /// `verify` loads rows into to have SQLite judge them, with memory bounded.
  package static let privateTemporary = ""

  /// Creates an empty database at `path` (which must not exist, or be an empty file), or a
  /// private temporary one (``privateTemporary``).
  package init(path: String, pageSize: Int = 4096, autoVacuum: Int = 2) throws(StoreError) {
    let size =
      path == Self.privateTemporary
      ? nil : (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber
    guard size == nil || size?.int64Value == 0 else {
      throw StoreError(.destinationExists, "the file exists", path: path)
    }
    self.path = path
    do {
      database = try Database(path: path, mode: .readWriteCreate)
      // The indexes are built after the rows, when the other cores have nothing left to
      // decode: SQLite's sorter may use them.
      let granted = try database.prepare("PRAGMA threads = \(Self.threadsWanted)").scalar()
      if case .integer(let threads) = granted { sorterThreads = Int(threads) }
      // What fills this store comes from an archive: the connection refuses anything the
      // loader does not ask for itself.
      try database.harden()
      try database.execute("PRAGMA page_size = \(pageSize)")
      try database.execute("PRAGMA auto_vacuum = \(autoVacuum)")
      try database.execute("PRAGMA journal_mode = DELETE")
      try StandInFunctions.register(on: database)
      try database.execute("BEGIN IMMEDIATE")
    } catch {
      throw StoreError(.database, "cannot create the store", path: path, underlying: error)
    }
  }

  /// The threads a loader asks SQLite's sorter to start besides the connection's own when it
  /// builds an index: one per other core, up to three.
  static let threadsWanted = min(max(ProcessInfo.processInfo.activeProcessorCount - 1, 0), 3)

  /// Runs `body`, turning a SQLite error into a store error saying `what` failed (built only
  /// then: this runs once per row).
  func run<R>(_ what: @autoclosure () -> String, _ body: () throws -> R) throws(StoreError) -> R {
    do {
      return try body()
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(.database, what(), path: path, underlying: error as? SQLiteError)
    }
  }

  /// Creates the tables among `objects` (indexes and triggers come in ``finish(journalMode:)``).
  package func createTables(_ objects: [CoreDataStore.SchemaObject]) throws(StoreError) {
    try run("cannot create the tables") {
      for object in objects where object.type == "table" { try database.execute(object.sql) }
    }
  }

  /// Maps `model` onto the tables created, with the source's entity numbers.
  package func prepare(model: ObjectModel, entityRows: [CoreDataStore.EntityRow]) throws(StoreError)
  {
    let snapshot = try run("cannot read the new schema") { try SchemaSnapshot(database) }
    layout = try StoreLayout(
      model: model, snapshot: snapshot,
      entityNumbers: CoreDataStore.entityNumbers(for: model, rows: entityRows))
  }

  /// Writes `Z_PRIMARYKEY`, `Z_METADATA` and, when given, `Z_MODELCACHE` (ending the direct
  /// writes first: SQLite allocates pages for them).
  package func writeBookkeeping(
    entityRows: [CoreDataStore.EntityRow], uuid: String, metadata: [UInt8], modelCache: [UInt8]?
  ) throws(StoreError) {
    try endDirectWrites()
    try run("cannot write Z_PRIMARYKEY and Z_METADATA") {
      try Self.insert(entityRows: entityRows, into: database)
      let meta = try database.prepare(
        "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)")
      try meta.bind([.text(uuid), .blob(metadata)])
      try meta.run()
      if let modelCache {
        let cache = try database.prepare("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)")
        try cache.bind([.blob(modelCache)])
        try cache.run()
      }
    }
  }

  /// Writes `entityRows` into `Z_PRIMARYKEY` of `database`.
  package static func insert(entityRows: [CoreDataStore.EntityRow], into database: Database)
    throws(SQLiteError)
  {
    let keys = try database.prepare(
      "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)")
    for row in entityRows {
      try keys.bind([
        .integer(Int64(row.number)), .text(row.name), .integer(Int64(row.parent)),
        .integer(row.maxPrimaryKey),
      ])
      try keys.run()
    }
  }

  /// Inserts one object, with its many-to-many rows (`manyToMany` by relationship name:
  /// destination primary keys and order keys).
  package func insert(_ record: ObjectRecord, manyToMany: [String: [(Int64, Int64?)]] = [:])
    throws(StoreError)
  {
    guard let layout else {
      throw StoreError(.unsupported, "prepare(model:entityRows:) first", path: path)
    }
    try endDirectWrites()
    try run("cannot insert \(record.reference)") {
      try insertRecord(record, manyToMany: manyToMany, layout: layout)
    }
  }

  private func insertRecord(
    _ record: ObjectRecord, manyToMany: [String: [(Int64, Int64?)]], layout: StoreLayout
  ) throws {
    let (statement, columns, names) = try insertStatement(for: record.entity, layout: layout)
    var values: [SQLiteValue] = [
      .integer(record.primaryKey), .integer(Int64(layout.entityNumbers[record.entity] ?? 0)),
      .integer(record.version),
    ]
    for column in columns { values.append(column.value(in: record, layout: layout)) }
    // Values kept as stored override their column.
    let permitted =
      record.extraColumns.isEmpty ? [] : storedColumns(of: record.entity, layout: layout)
    for (column, value) in record.extraColumns {
      guard permitted.contains(column), let index = names.firstIndex(of: column) else {
        throw StoreError(
          .modelMismatch,
          "\(record.reference) has a value for column \(column), which its table lacks", path: path)
      }
      values[index] = SQLValues.sqlite(raw: value)
    }
    try statement.bind(values)
    try statement.run()
    for (name, rows) in manyToMany where !rows.isEmpty {
      guard let join = join(for: record.entity, name, layout: layout) else {
        throw StoreError(.modelMismatch, "\(record.entity).\(name) has no join table", path: path)
      }
      let insert = try joinStatement(join)
      for (destination, order) in rows {
        var bindings: [SQLiteValue] = [.integer(record.primaryKey), .integer(destination)]
        if join.orderColumn != nil { bindings.append(order.map(SQLiteValue.integer) ?? .null) }
        try insert.bind(bindings)
        try insert.run()
      }
    }
  }

  /// Inserts a row into a table the model does not describe.
  package func insertRow(into table: String, _ row: [String: AttributeValue]) throws(StoreError) {
    try endDirectWrites()
    try run("cannot insert a row into \(table)") {
      let columns = row.keys.sorted()
      let key = table + "\u{0}" + columns.joined(separator: "\u{0}")
      let statement: Statement
      if let cached = rowInserts[key] {
        statement = cached
      } else {
        let quoted = columns.map(SchemaStatement.quote)
        statement = try database.prepare(
          "INSERT INTO \(SchemaStatement.quote(table)) (\(quoted.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
        )
        rowInserts[key] = statement
      }
      try statement.bind(columns.map { SQLValues.sqlite(raw: row[$0]!) })
      try statement.run()
    }
  }

  /// Creates the indexes and triggers among `objects`, commits, sets the journal mode and
  /// closes the file.
  package func finish(indexesAndTriggers objects: [CoreDataStore.SchemaObject], journalMode: String)
    throws(StoreError)
  {
    try endDirectWrites()
    try applyDeferredLinks()
    // Those a direct write builds first, whether it built them or not, so that the schema
    // lists them in one order however the rows came.
    let first = buildsWithPages(objects)
    let firstNames = Set(first.map(\.name))
    let rest = objects.filter { $0.type != "table" && !firstNames.contains($0.name) }
    for object in first + rest where !indexesMade.contains(object.name) {
      try run("cannot create \(object.type) \(object.name)") { try database.execute(object.sql) }
    }
    try run("cannot finish the store") {
      try database.execute("COMMIT")
      if journalMode.lowercased() == "wal" && path != Self.privateTemporary {
        try database.execute("PRAGMA journal_mode = WAL")
      }
      inserts.removeAll()
      groupedInserts.removeAll()
      rowInserts.removeAll()
      joinInserts.removeAll()
    }
  }

  /// The join table `entity`'s hierarchy owns for relationship `name`, looked up once.
  func join(for entity: String, _ name: String, layout: StoreLayout) -> StoreLayout.Join? {
    let key = entity + "." + name
    if let known = joinsByRelationship[key] { return known }
    let found = layout.join(for: entity, relationship: name)
    joinsByRelationship[key] = found
    return found
  }

  /// The columns a record of `entity` may carry as stored values, looked up once.
  func storedColumns(of entity: String, layout: StoreLayout) -> Set<String> {
    if let known = storedColumnsByEntity[entity] { return known }
    let found = layout.storedColumns(of: entity)
    storedColumnsByEntity[entity] = found
    return found
  }

  /// The insert statement of `entity`, its columns, and every column's name (with `Z_PK`,
  /// `Z_ENT`, `Z_OPT` first), prepared once.
  func insertStatement(for entity: String, layout: StoreLayout) throws -> (
    Statement, [Column], [String]
  ) {
    if let cached = inserts[entity] { return cached }
    guard let table = layout.table(for: entity) else {
      throw StoreError(.modelMismatch, "the model has no entity \(entity)", path: path)
    }
    let (columns, columnNames) = Self.columns(of: entity, table: table, layout: layout)
    let names = ["Z_PK", "Z_ENT", "Z_OPT"] + columnNames
    let statement = try database.prepare(Self.insertSQL(table.name, names, rows: 1))
    inserts[entity] = (statement, columns, names)
    return (statement, columns, names)
  }

  /// The insert statement of `entity` taking `rows` rows at once (their parameters one row
  /// after the other, each row's as ``insertStatement(for:layout:)`` takes them), prepared
  /// once.
  ///
  /// `INSERT OR FAIL`: a row's failed constraint stops the statement with the rows before it
  /// in (``Database/changes`` says how many), rather than undoing them. A statement of
  /// several rows that may undo its own needs SQLite to copy every page it changes into a
  /// statement journal first: on a restore that wrote about twice the store's size into a
  /// temporary file, and took a seventh of its time.
  func insertStatement(for entity: String, layout: StoreLayout, rows: Int) throws -> Statement {
    let key = "\(entity)\u{0}\(rows)"
    if let cached = groupedInserts[key] { return cached }
    let (_, _, names) = try insertStatement(for: entity, layout: layout)
    guard let table = layout.table(for: entity) else {
      throw StoreError(.modelMismatch, "the model has no entity \(entity)", path: path)
    }
    let statement = try database.prepare(
      Self.insertSQL(table.name, names, rows: rows, verb: "INSERT OR FAIL"))
    groupedInserts[key] = statement
    return statement
  }

  /// `INSERT INTO table (names) VALUES (?, …), …` for `rows` rows.
  private static func insertSQL(
    _ table: String, _ names: [String], rows: Int, verb: String = "INSERT"
  ) -> String {
    let row = "(" + Array(repeating: "?", count: names.count).joined(separator: ", ") + ")"
    return "\(verb) INTO \(table) (\(names.joined(separator: ", "))) VALUES "
      + Array(repeating: row, count: rows).joined(separator: ", ")
  }

  /// The columns of `entity`'s table besides `Z_PK`, `Z_ENT` and `Z_OPT`, with their names, in
  /// the order the loader binds them: the entity's own and inherited attributes and to-one keys
  /// (root first), then the columns no property maps and those of sibling entities (raw).
  static func columns(of entity: String, table: StoreLayout.Table, layout: StoreLayout)
    -> (columns: [Column], names: [String])
  {
    var columns: [Column] = []
    var names: [String] = []
    let lineage = layout.model.lineage(of: entity).map(\.name)
    for owner in lineage.reversed() {
      for column in table.attributes[owner] ?? [] {
        columns.append(.attribute(column.attribute.name, column.attribute.type))
        names.append(column.column)
      }
      for column in table.toOne[owner] ?? [] {
        columns.append(.foreignKey(column.relationship.name))
        names.append(column.column)
        if let entityColumn = column.entityColumn {
          columns.append(.foreignEntity(column.relationship.name))
          names.append(entityColumn)
        }
      }
    }
    for column in table.unmappedColumns {
      columns.append(.raw(column))
      names.append(column)
    }
    // Columns of sibling entities in the same table stay NULL; they can still arrive raw.
    for columnsOfOthers in table.attributes where !lineage.contains(columnsOfOthers.key) {
      for column in columnsOfOthers.value where !names.contains(column.column) {
        columns.append(.raw(column.column))
        names.append(column.column)
      }
    }
    return (columns, names)
  }

  /// The insert statement of `join`'s rows, taking `rows` rows at once, prepared once.
  func joinStatement(_ join: StoreLayout.Join, rows: Int = 1) throws -> Statement {
    let key = "\(join.name)\u{0}\(rows)"
    if let cached = joinInserts[key] { return cached }
    var columns = [join.sourceColumn, join.destinationColumn]
    if let order = join.orderColumn { columns.append(order) }
    // A link may reach a join table from both of its ends: the second one changes nothing.
    let statement = try database.prepare(
      Self.insertSQL(join.name, columns, rows: rows, verb: "INSERT OR IGNORE"))
    joinInserts[key] = statement
    return statement
  }
}

extension SQLValues {
  /// A value kept as stored (integer, double, string or data) back to its storage class.
  static func sqlite(raw value: AttributeValue) -> SQLiteValue {
    switch value {
    case .integer(let v): return .integer(v)
    case .double(let v), .date(let v): return .real(v)
    case .string(let v), .decimal(let v), .uri(let v): return .text(v)
    case .bool(let v): return .integer(v ? 1 : 0)
    case .data(let v), .uuid(let v), .transformed(let v): return .blob(v)
    case .composite:
      preconditionFailure("a composite value has no column of its own; store its elements")
    }
  }
}
