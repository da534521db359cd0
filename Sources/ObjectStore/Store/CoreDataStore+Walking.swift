import ObjectModel
import SQLite

extension CoreDataStore {
  /// A table, index or trigger of the store, with the SQL that created it.
  package struct SchemaObject: Sendable, Equatable {
    /// `table`, `index` or `trigger`.
    public let type: String
    /// Its name.
    public let name: String
    /// The table it belongs to.
    public let table: String
    /// The SQL that created it.
    public let sql: String

    /// Creates a schema object.
    public init(type: String, name: String, table: String, sql: String) {
      self.type = type
      self.name = name
      self.table = table
      self.sql = sql
    }
  }

  /// Every table, index and trigger with its SQL, in creation order (SQLite's internal
  /// indexes, which have no SQL, left out).
  package func schemaObjects() throws(StoreError) -> [SchemaObject] {
    do {
      return try database.prepare(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
      ).allRows().map {
        SchemaObject(
          type: $0[0].textValue ?? "", name: $0[1].textValue ?? "", table: $0[2].textValue ?? "",
          sql: $0[3].textValue ?? "")
      }
    } catch {
      throw StoreError(.database, "cannot read the schema", path: path, underlying: error)
    }
  }

  /// `Z_METADATA` and `Z_PRIMARYKEY` as they are now: inside ``read(_:)``, as of its snapshot
  /// (the values read when the store was opened may be older).
  package func currentBookkeeping() throws(StoreError) -> (
    uuid: String, metadata: [UInt8], entityRows: [EntityRow]
  ) {
    try Self.readBookkeeping(database, path: path)
  }

  /// Reads `Z_METADATA`'s UUID and plist and the rows of `Z_PRIMARYKEY`.
  static func readBookkeeping(_ database: Database, path: String) throws(StoreError) -> (
    uuid: String, metadata: [UInt8], entityRows: [EntityRow]
  ) {
    do {
      let row = try database.prepare("SELECT Z_UUID, Z_PLIST FROM Z_METADATA WHERE Z_VERSION = 1")
        .allRows().first
      let rows = try database.prepare(
        "SELECT Z_ENT, Z_NAME, Z_SUPER, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT"
      ).allRows()
      return (
        row?[0].textValue ?? "", row?[1].blobValue ?? [],
        rows.map {
          EntityRow(
            number: Int($0[0].integerValue ?? 0), name: $0[1].textValue ?? "",
            parent: Int($0[2].integerValue ?? 0), maxPrimaryKey: $0[3].integerValue ?? 0)
        }
      )
    } catch {
      throw StoreError(
        .database, "cannot read Z_METADATA and Z_PRIMARYKEY", path: path, underlying: error)
    }
  }

  /// The journal mode (`wal`, `delete`, …).
  package func journalMode() throws(StoreError) -> String {
    do {
      return try database.prepare("PRAGMA journal_mode").scalar().textValue ?? ""
    } catch {
      throw StoreError(.database, "cannot read the journal mode", path: path, underlying: error)
    }
  }

  /// The tables that hold neither objects of `layout`'s model nor its many-to-many rows, nor
  /// Core Data's bookkeeping: persistent-history tables, tables an app added.
  package func otherTables(besides layout: StoreLayout) throws(StoreError) -> [String] {
    let known = Set(
      layout.tables.map(\.name) + layout.joins.map(\.name) + StoreSchema.bookkeepingTables)
    return try schemaObjects().filter { $0.type == "table" && !known.contains($0.name) }.map(\.name)
  }

  /// Streams the objects of one concrete entity (sub-entities excluded), in primary-key order.
  package func forEachObject(
    of entity: String, layout: StoreLayout, _ body: (ObjectRecord) throws -> Void
  ) throws {
    try reader(of: entity, layout: layout).readRows(body)
  }

  /// A reader of the rows of one concrete entity (its sub-entities' rows left out).
  func reader(of entity: String, layout: StoreLayout) throws -> TableReader {
    guard let table = layout.table(for: entity), let number = layout.entityNumbers[entity] else {
      throw StoreError(.modelMismatch, "the model has no entity \(entity)", path: path)
    }
    let scanning = try scansTable(for: entity, layout: layout)
    let reader = try TableReader(
      table: table, layout: layout, database: database, filter: Self.entityCondition(scanning))
    try reader.bind([.integer(Int64(number))])
    return reader
  }

  /// Whether the objects of the concrete entity `entity` are read best by reading its table
  /// in key order and passing over the rows of other entities, rather than looking each row up
  /// through the table's `Z_ENT` index, as SQLite would choose to. Looking a row up costs
  /// about ten times passing over one (64 ns against 7 ns a row, measured on a table of
  /// 880,000 rows of two entities), so the table is read in order when `entity` holds at
  /// least a tenth of its rows.
  ///
  /// `objects`, when given, is how many objects of `entity` the table holds (a backup counted
  /// them for its header, ``objectCounts(layout:)``), not counted again.
  package func scansTable(for entity: String, layout: StoreLayout, objects: Int? = nil) throws
    -> Bool
  {
    guard let table = layout.table(for: entity), let number = layout.entityNumbers[entity] else {
      throw StoreError(.modelMismatch, "the model has no entity \(entity)", path: path)
    }
    // A table of one concrete entity is read in order whatever it holds: no need to count.
    let others = layout.model.entities.contains {
      !$0.isAbstract && $0.name != entity && layout.table(for: $0.name)?.name == table.name
    }
    guard others else { return true }
    let name = "\"\(table.name)\""
    let all = try count(table: name)
    guard all > 0 else { return true }
    if let objects { return objects * 10 >= all }
    let statement = try database.prepare("SELECT count(*) FROM \(name) WHERE Z_ENT = ?")
    try statement.bind(.integer(Int64(number)), at: 1)
    let mine = Int(try statement.scalar().integerValue ?? 0)
    return mine * 10 >= all
  }

  /// The condition that keeps one entity's rows of its table (its number bound as the first
  /// parameter): with `scanning` (``scansTable(for:layout:)``), one that SQLite cannot answer
  /// through the `Z_ENT` index (the unary plus), so it reads the table in key order.
  static func entityCondition(_ scanning: Bool) -> String {
    scanning ? "+Z_ENT = ?" : "Z_ENT = ?"
  }

  /// Streams the objects of one concrete entity in primary-key order through one reused
  /// ``ObjectRow`` (valid only inside `body`): what ``forEachObject(of:layout:_:)`` reads,
  /// without a dictionary per object.
  package func forEachObjectRow(
    of entity: String, layout: StoreLayout, _ body: (ObjectRow) throws -> Void
  ) throws {
    try reader(of: entity, layout: layout).readObjectRows(body)
  }

  /// Streams the objects of one concrete entity whose keys are among `keys` (ascending), in
  /// primary-key order, as ``forEachObjectRow(of:layout:_:)`` does: what an incremental backup
  /// reads of the objects that changed.
  package func forEachObjectRow(
    of entity: String, layout: StoreLayout, keys: [Int64], _ body: (ObjectRow) throws -> Void
  ) throws {
    guard let table = layout.table(for: entity), let number = layout.entityNumbers[entity] else {
      throw StoreError(.modelMismatch, "the model has no entity \(entity)", path: path)
    }
    for part in Self.parts(of: keys) {
      let reader = try TableReader(
        table: table, layout: layout, database: database,
        filter: "Z_ENT = ? AND Z_PK IN (\(Self.placeholders(part.count)))")
      try reader.bind([.integer(Int64(number))] + part.map { .integer($0) })
      try reader.readObjectRows(body)
    }
  }

  /// How many keys one query binds (SQLite allows 32,766 parameters).
  package static let keysPerQuery = 500

  /// Streams the objects of one concrete entity whose keys are at least `from` and below
  /// `below` (when given), as ``forEachObjectRow(of:layout:_:)`` does: a segment of the
  /// entity's objects that can be read apart from the rest (on another connection, in the same
  /// snapshot).
  ///
  /// With `scanning` (what ``scansTable(for:layout:)`` tells, asked once for every segment),
  /// the segment's rows are read in key order rather than looked up through the `Z_ENT` index;
  /// with `hashing`, each row comes with its hash (``ObjectRow/hash``).
  package func forEachObjectRow(
    of entity: String, layout: StoreLayout, from: Int64, below: Int64?, scanning: Bool,
    hashing: RowHashing? = nil, _ body: (ObjectRow) throws -> Void
  ) throws {
    guard let table = layout.table(for: entity), let number = layout.entityNumbers[entity] else {
      throw StoreError(.modelMismatch, "the model has no entity \(entity)", path: path)
    }
    let range = Self.keyRange("Z_PK", from: from, below: below)!
    let reader = try TableReader(
      table: table, layout: layout, database: database,
      filter: "\(Self.entityCondition(scanning)) AND \(range.condition)", hashing: hashing)
    try reader.bind([.integer(Int64(number))] + range.bound)
    try reader.readObjectRows(body)
  }

  /// The smallest and largest `Z_PK` of the table that holds `entity`'s objects (those of
  /// other entities of its hierarchy included), nil when it is empty: where the segments of
  /// ``forEachObjectRow(of:layout:from:below:_:)`` lie.
  package func primaryKeyBounds(of entity: String, layout: StoreLayout) throws
    -> ClosedRange<Int64>?
  {
    guard let table = layout.table(for: entity) else {
      throw StoreError(.modelMismatch, "the model has no entity \(entity)", path: path)
    }
    return try integerBounds(of: "Z_PK", in: table.name)
  }

  /// The smallest and largest value of `column` in `table`, nil when the table is empty or
  /// either is no integer. Each is asked apart: SQLite reads a minimum or a maximum alone off
  /// the end of an index (or of the rowid's tree), and both in one query by a scan.
  func integerBounds(of column: String, in table: String) throws -> ClosedRange<Int64>? {
    func end(_ function: String) throws -> Int64? {
      try database.prepare("SELECT \(function)(\(column)) FROM \(table)").scalar().integerValue
    }
    guard let low = try end("min"), let high = try end("max"), low <= high else { return nil }
    return low...high
  }

  /// The condition on `column` that keeps the keys from `from` and below `below` (each when
  /// given), with its parameters; nil when neither is given.
  static func keyRange(_ column: String, from: Int64?, below: Int64?) -> (
    condition: String, bound: [SQLiteValue]
  )? {
    var conditions: [String] = []
    var bound: [SQLiteValue] = []
    if let from {
      conditions.append("\(column) >= ?")
      bound.append(.integer(from))
    }
    if let below {
      conditions.append("\(column) < ?")
      bound.append(.integer(below))
    }
    return conditions.isEmpty ? nil : (conditions.joined(separator: " AND "), bound)
  }

  /// `keys` in parts of at most ``keysPerQuery``: what one query binds.
  package static func parts(of keys: [Int64]) -> [ArraySlice<Int64>] {
    stride(from: 0, to: keys.count, by: keysPerQuery).map {
      keys[$0..<min(keys.count, $0 + keysPerQuery)]
    }
  }

  /// `?, ?, …`: `count` parameters.
  static func placeholders(_ count: Int) -> String {
    Array(repeating: "?", count: count).joined(separator: ", ")
  }

  /// Streams the rows of `table` (outside the model) whose `keyColumn` is among `keys`, in
  /// key order, as ``forEachRow(in:_:)`` gives them.
  package func forEachRow(
    in table: String, keyColumn: String, keys: [Int64],
    _ body: ([String: AttributeValue]) throws -> Void
  ) throws {
    for part in Self.parts(of: keys) {
      let statement = try database.prepare(
        "SELECT * FROM \(table) WHERE \(keyColumn) IN (\(CoreDataStore.placeholders(part.count))) ORDER BY \(keyColumn)"
      )
      try statement.bind(part.map { .integer($0) })
      try Self.forEachStoredRow(statement, body)
    }
  }

  /// Streams the rows of a table as stored, column by column (NULLs absent), in rowid order
  /// where the table has one.
  package func forEachRow(in table: String, _ body: ([String: AttributeValue]) throws -> Void)
    throws
  {
    try Self.forEachStoredRow(try rowsStatement(of: table), body)
  }

  /// Whether `table` keeps its rows by rowid (it is not `WITHOUT ROWID`).
  func keepsRowID(_ table: String) -> Bool {
    (try? database.prepare("SELECT rowid FROM \(SchemaStatement.quote(table)) LIMIT 0")) != nil
  }

  /// A statement reading every row of `table`, in rowid order where it keeps one.
  func rowsStatement(of table: String) throws -> Statement {
    try database.prepare(
      "SELECT * FROM \(SchemaStatement.quote(table))"
        + (keepsRowID(table) ? " ORDER BY rowid" : ""))
  }

  /// The row `statement` is on, by column (`names`, the statement's), as stored; NULLs absent.
  static func storedRow(of statement: Statement, names: [String]) -> [String: AttributeValue] {
    var row: [String: AttributeValue] = [:]
    for (index, name) in names.enumerated() {
      if let value = statement.storedValue(at: index) { row[name] = value }
    }
    return row
  }

  /// Steps `statement`, giving each row by column name as stored (NULLs absent).
  private static func forEachStoredRow(
    _ statement: Statement, _ body: ([String: AttributeValue]) throws -> Void
  ) throws {
    let names = statement.columnNames
    defer { statement.reset() }
    while try statement.step() { try body(storedRow(of: statement, names: names)) }
  }

  /// A cursor over a join table's rows in owner order, read one row at a time; only the rows
  /// of the owners `owners` when given (at most ``keysPerQuery``).
  package func joinCursor(_ join: StoreLayout.Join, owners: [Int64]? = nil) throws -> JoinCursor {
    try JoinCursor(
      join: join, database: database,
      condition: owners.map {
        "\(join.sourceColumn) IN (\(CoreDataStore.placeholders($0.count)))"
      },
      bound: (owners ?? []).map { .integer($0) })
  }

  /// A cursor over the rows of `join` whose owners' keys are at least `from` and below
  /// `below` (when given): the join rows of a segment of objects.
  package func joinCursor(_ join: StoreLayout.Join, ownersFrom from: Int64, below: Int64?) throws
    -> JoinCursor
  {
    let range = Self.keyRange(join.sourceColumn, from: from, below: below)!
    return try JoinCursor(
      join: join, database: database, condition: range.condition, bound: range.bound)
  }
}

/// Reads a many-to-many join table row by row, ordered by the owner's and then the
/// destination's primary key, so it can be merged with a stream of owner objects.
package final class JoinCursor {
  /// One row: the owner's and the destination's primary keys, and the order key if any.
  package struct Pair: Sendable, Equatable {
    /// The owner's primary key.
    package let source: Int64
    /// The destination's primary key.
    package let destination: Int64
    /// The order key, when the table has an order column and it is set.
    package let order: Int64?

    /// A row linking `source` to `destination`, with its order key.
    package init(source: Int64, destination: Int64, order: Int64? = nil) {
      self.source = source
      self.destination = destination
      self.order = order
    }
  }

  private let statement: Statement
  private let hasOrder: Bool
  private var peeked: Pair?
  private var finished = false

  /// A cursor over the rows of `join`, those that meet `condition` (its parameters `bound`)
  /// when given.
  init(join: StoreLayout.Join, database: Database, condition: String?, bound: [SQLiteValue])
    throws
  {
    hasOrder = join.orderColumn != nil
    let filter = condition.map { " WHERE \($0)" } ?? ""
    statement = try database.prepare(
      "SELECT \(join.sourceColumn), \(join.destinationColumn)\(join.orderColumn.map { ", \($0)" } ?? "") FROM \(join.name)\(filter) ORDER BY 1, 2"
    )
    try statement.bind(bound)
  }

  /// The next row without consuming it.
  package func peek() throws -> Pair? {
    if peeked == nil && !finished {
      if try statement.step() {
        peeked = Pair(
          source: statement.int64(at: 0), destination: statement.int64(at: 1),
          order: hasOrder && !statement.isNull(at: 2) ? statement.int64(at: 2) : nil)
      } else {
        finished = true
        statement.reset()
      }
    }
    return peeked
  }

  /// Consumes and returns the next row.
  package func next() throws -> Pair? {
    let pair = try peek()
    peeked = nil
    return pair
  }

  /// The rows whose owner is `source`, skipping rows of smaller owners.
  package func rows(for source: Int64) throws -> [Pair] {
    var result: [Pair] = []
    try rows(for: source, into: &result)
    return result
  }

  /// The rows whose owner is `source` in `rows` (emptied first, its capacity kept), skipping
  /// rows of smaller owners.
  package func rows(for source: Int64, into rows: inout [Pair]) throws {
    rows.removeAll(keepingCapacity: true)
    while let pair = try peek(), pair.source < source { _ = try next() }
    while let pair = try peek(), pair.source == source {
      rows.append(pair)
      peeked = nil
    }
  }
}

extension CoreDataStore {
  /// The objects of each concrete entity of `layout`'s model (those with any), as fast as the
  /// store allows: a table of one entity by its row count (SQLite reads its smallest index), a
  /// table of a hierarchy by `Z_ENT` (through Core Data's `Z_ENT` index). For progress: a
  /// table of one entity holding rows of another would count them too.
  package func objectCounts(layout: StoreLayout) throws(StoreError) -> [String: Int] {
    var names: [Int: String] = [:]
    for (name, number) in layout.entityNumbers { names[number] = name }
    var counts: [String: Int] = [:]
    for table in layout.tables {
      do {
        let hierarchy = layout.model.hierarchy(from: table.rootEntity)
        if hierarchy.count == 1 {
          if !hierarchy[0].isAbstract {
            counts[table.rootEntity] = Int(
              try database.prepare("SELECT count(*) FROM \(table.name)").scalar().integerValue
                ?? 0)
          }
          continue
        }
        let rows = try database.prepare(
          "SELECT Z_ENT, count(*) FROM \(table.name) GROUP BY Z_ENT"
        ).allRows()
        for row in rows {
          guard let number = row[0].integerValue, let name = names[Int(number)],
            layout.model.entity(named: name)?.isAbstract == false
          else { continue }
          counts[name] = Int(row[1].integerValue ?? 0)
        }
      } catch {
        throw StoreError(
          .database, "cannot count the rows of \(table.name)", path: path, underlying: error)
      }
    }
    return counts
  }
}
