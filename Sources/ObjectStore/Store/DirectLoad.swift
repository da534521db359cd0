import Foundation
import SQLite

/// A loader's entity tables written page by page without SQLite (``TableTreeWriter``), while
/// the rows arrive in key order: what ``StoreLoader/writeTablesDirectly()`` starts and
/// ``StoreLoader/endDirectWrites()`` ends.
///
/// SQLite inserting a restore's rows one by one was most of a restore's time; a table built
/// bottom-up costs about what encoding its records does. The file has one writer at a time:
/// the rows of many-to-many relationships (whose tables SQLite keeps an index of) go in
/// through SQL between two batches, the pages written so far handed over (``suspend()``) and
/// taken back after the connection's commit (``resume()``); the trees' pages not yet reached
/// from a root are pages SQLite never looks at. A table shared by several entities (a
/// hierarchy) gets their rows one entity after another, each in key order but interleaved
/// with the others': each entity's rows but the last's wait in a spool of their own
/// (``SpoolFile``), and the last entity's rows are merged with them by key as they come, the
/// table written then; what is left of the spools is written once another table's rows begin
/// (or at the end).
///
/// A table's indexes (Core Data's of foreign keys and `Z_ENT`, and the unique ones of its
/// uniqueness constraints) are made while it is empty and built the same way when it is
/// written (``IndexTreeWriter``), from the keys of its rows gathered as they came
/// (``IndexKeys`` for one integer column, ``SortedKeys`` for any others): `CREATE INDEX` after
/// the rows reads the whole table again and sorts what it read, which was a third of a
/// restore's time, and reads every overflow page of a row whose indexed column comes after a
/// big blob. A unique index whose keys repeat is refused as SQLite refuses it.
final class DirectLoad {
  /// What is known of an entity table that rows can be written into directly.
  struct Table {
    let name: String
    let root: UInt32
    /// Each column's index in table order, by name.
    let columns: [String: Int]
    let affinities: [ColumnAffinity]
    let rowidColumn: Int
    /// The entities that keep rows here (those that are not abstract).
    let entities: Set<String>
    /// Its indexes, built from the keys of the rows written here.
    let indexes: [Index]
    /// Whether more than one entity keeps rows here.
    var shared: Bool { entities.count > 1 }
  }

  /// An index of a table written directly: its root page and columns.
  struct Index {
    let name: String
    let root: UInt32
    /// Its columns' indexes in table order, in its order.
    let columns: [Int]
    /// Its columns' names, for the error of a unique index whose keys repeat.
    let columnNames: [String]
    let unique: Bool
    /// Whether it is on one column of integer affinity and not unique: each key two integers
    /// (``IndexKeys``), else one ``IndexSortKey`` (``SortedKeys``).
    var onOneInteger: Bool { !unique && columns.count == 1 }
  }

  /// The keys of one index's rows, gathered as the rows come, and the columns they are of.
  fileprivate enum Keys {
    case integers(IndexKeys, column: Int)
    case sorted(SortedKeys, columns: [Int])
  }

  /// One entity's rows on their way into a shared table, in key order: waiting in a spool, or
  /// (the table's last entity to come) written as they come, the spooled rows before them first.
  fileprivate struct Run {
    let entity: String
    /// Nil for the entity whose rows are written as they come.
    let spool: SpoolFile?
    var last: Int64?
  }

  /// A table's rows so far: written as they come, or (a shared table) waiting per entity.
  final class Progress {
    let table: Table
    fileprivate let writer: TableTreeWriter
    fileprivate var runs: [Run] = []
    /// The runs whose spools are being read, each at its next entry, once the table is written.
    fileprivate var unread: [Int] = []
    /// Whether the table is being written: no spool takes more rows.
    fileprivate var merging = false
    /// The keys of each of the table's indexes.
    fileprivate let keys: [Keys]
    /// Whether the table's pages are all written: it takes no more rows.
    fileprivate var finished = false

    fileprivate init(_ table: Table, file: PageFile, folder: String) {
      self.table = table
      writer = TableTreeWriter(file: file, root: table.root)
      keys = table.indexes.map {
        $0.onOneInteger
          ? .integers(IndexKeys(folder: folder), column: $0.columns[0])
          : .sorted(SortedKeys(folder: folder), columns: $0.columns)
      }
    }
  }

  /// Where one entity's rows go: its table's progress, and its run in a shared table.
  struct Destination {
    let progress: Progress
    fileprivate let run: Int?
    let entity: String
  }

  /// The row of one entity being made: its record and where each insert parameter goes.
  struct Row {
    var record: RowRecord
    /// The table column of each parameter of the entity's insert statement (nil: none).
    let columnOfParameter: [Int?]
    /// Whether every value set so far is stored as SQLite would store it.
    var convertible = true
  }

  private let file: PageFile
  private let folder: String
  /// The longest index record a leaf keeps whole (``IndexTreeWriter/longestKey(usableSize:)``).
  private let longestIndexRecord: Int
  /// An index record made to measure one.
  private var measured: [UInt8] = []
  private let tables: [String: Table]
  private var progress: [String: Progress] = [:]
  private var rows: [String: (Row, Destination)?] = [:]

  /// Reads what `database` (between transactions) says of `layout`'s entity tables, then
  /// opens its file at `path` to append pages.
  /// - Throws: ``StoreError`` when the schema cannot be read or the file opened.
  init(database: Database, path: String, layout: StoreLayout) throws(StoreError) {
    var tables: [String: Table] = [:]
    do {
      var entitiesPerTable: [String: Set<String>] = [:]
      for entity in layout.model.entities where !entity.isAbstract {
        if let table = layout.table(for: entity.name) {
          entitiesPerTable[table.name, default: []].insert(entity.name)
        }
      }
      for table in layout.tables {
        if let found = try Self.describe(
          table.name, in: database, entities: entitiesPerTable[table.name, default: []])
        {
          tables[table.name] = found
        }
      }
      file = try PageFile(path: path)
    } catch {
      throw StoreError(
        .database, "cannot write the tables directly", path: path, underlying: error)
    }
    self.tables = tables
    folder = (path as NSString).deletingLastPathComponent
    longestIndexRecord = IndexTreeWriter.longestKey(usableSize: file.usableSize)
  }

  /// `table` as a direct write needs it, or nil when its rows must go through SQLite: an
  /// empty table whose `INTEGER PRIMARY KEY` is `Z_PK`, with no column that must not be NULL,
  /// no index but those a direct write builds (``describeIndex(_:of:in:affinities:rowid:)``),
  /// no check, no generated column, and rows kept by rowid.
  static func describe(_ table: String, in database: Database, entities: Set<String>)
    throws(SQLiteError) -> Table?
  {
    let master = try database.prepare(
      "SELECT rootpage, sql FROM sqlite_master WHERE type = 'table' AND name = ?")
    try master.bind(.text(table), at: 1)
    let found = try master.allRows()
    guard let entry = found.first, let root = entry[0].integerValue,
      let sql = entry[1].textValue,
      sql.range(
        of: #"\bCHECK\s*\(|\bWITHOUT\s+ROWID\b|\)\s*STRICT\b"#,
        options: [.regularExpression, .caseInsensitive]) == nil
    else { return nil }
    let info = try database.prepare(
      "SELECT name, type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?)")
    try info.bind(.text(table), at: 1)
    var columns: [String: Int] = [:]
    var affinities: [ColumnAffinity] = []
    var rowid: Int?
    for (index, column) in try info.allRows().enumerated() {
      guard let name = column[0].textValue, column[2] == .integer(0),
        column[4] == .integer(0)
      else { return nil }
      let type = column[1].textValue ?? ""
      if column[3] != .integer(0) {
        guard rowid == nil, name == "Z_PK", type.uppercased() == "INTEGER" else { return nil }
        rowid = index
      }
      columns[name] = index
      affinities.append(ColumnAffinity(declaredType: type))
    }
    guard let rowid else { return nil }
    // Every index SQLite keeps of the table must be one built here from the rows' keys.
    let list = try database.prepare("SELECT name FROM pragma_index_list(?)")
    try list.bind(.text(table), at: 1)
    var indexes: [Index] = []
    for entry in try list.allRows() {
      guard let name = entry[0].textValue,
        let index = try Self.describeIndex(
          name, of: table, in: database, affinities: affinities, rowid: rowid)
      else { return nil }
      indexes.append(index)
    }
    // Its tree is built from nothing: a table holding rows already keeps them through SQL.
    let empty = try database.prepare(
      "SELECT NOT EXISTS (SELECT 1 FROM \(SchemaStatement.quote(table)))"
    ).scalar()
    guard empty == .integer(1) else { return nil }
    return Table(
      name: table, root: UInt32(root), columns: columns, affinities: affinities,
      rowidColumn: rowid, entities: entities, indexes: indexes)
  }

  /// Index `name` of `table` (whose columns have `affinities`, `rowid` the rowid's) as a direct
  /// write builds it, or nil when SQLite must: one made by `CREATE INDEX` (not for a
  /// constraint of the table's SQL), not partial, on columns other than the rowid, each
  /// ascending with the binary collation; one that is not unique has one column, of integer
  /// affinity. Core Data's indexes of foreign keys and of `Z_ENT`, and those of its uniqueness
  /// constraints, are such.
  private static func describeIndex(
    _ name: String, of table: String, in database: Database, affinities: [ColumnAffinity],
    rowid: Int
  ) throws(SQLiteError) -> Index? {
    let list = try database.prepare(
      "SELECT \"unique\", origin, partial FROM pragma_index_list(?) WHERE name = ?")
    try list.bind([.text(table), .text(name)])
    guard let entry = try list.allRows().first, entry[1] == .text("c"), entry[2] == .integer(0)
    else { return nil }
    let unique = entry[0] == .integer(1)
    let info = try database.prepare(
      "SELECT cid, name, \"desc\", coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno")
    try info.bind(.text(name), at: 1)
    var columns: [Int] = []
    var names: [String] = []
    for row in try info.allRows() {
      guard let column = row[0].integerValue.map(Int.init), let name = row[1].textValue,
        column >= 0, column < affinities.count, column != rowid, row[2] == .integer(0),
        row[3].textValue?.uppercased() == "BINARY"
      else { return nil }
      columns.append(column)
      names.append(name)
    }
    guard !columns.isEmpty, unique || (columns.count == 1 && affinities[columns[0]] == .integer)
    else { return nil }
    let master = try database.prepare(
      "SELECT rootpage FROM sqlite_master WHERE type = 'index' AND name = ?")
    try master.bind(.text(name), at: 1)
    guard let root = try master.allRows().first?[0].integerValue, root > 0 else { return nil }
    return Index(
      name: name, root: UInt32(root), columns: columns, columnNames: names, unique: unique)
  }

  /// A row of `entity` to fill, whose insert statement binds `names` in order, and where it
  /// goes; nil when its table takes no direct rows. Every column of the table must be among
  /// `names` (a column left out would take its default).
  ///
  /// A new entity's first row finishes the shared tables of others (``finishSharedTables(besides:)``).
  /// - Throws: ``StoreError`` when the spool of an entity in a shared table cannot be made, or
  ///   when a shared table finished now cannot be written (naming an object whose key two of
  ///   its entities share).
  func row(for entity: String, table: String, names: [String]) throws(StoreError) -> (
    Row, Destination
  )? {
    if let known = rows[entity] { return known }
    try finishSharedTables(besides: table)
    var made: (Row, Destination)?
    if let table = tables[table], Set(names) == Set(table.columns.keys),
      self.progress[table.name]?.finished != true
    {
      let progress = self.progress[table.name] ?? Progress(table, file: file, folder: folder)
      self.progress[table.name] = progress
      var run: Int?
      if table.shared {
        // The table's last entity to come: the others' rows are all spooled (an archive's
        // entities come one after another), so its own are merged with theirs as they come.
        let last = table.entities.subtracting(progress.runs.map(\.entity)) == [entity]
        progress.runs.append(
          Run(entity: entity, spool: last ? nil : try SpoolFile(in: folder)))
        run = progress.runs.count - 1
        if last { try startMerging(progress) }
      }
      made = (
        Row(
          record: RowRecord(affinities: table.affinities, rowidColumn: table.rowidColumn),
          columnOfParameter: names.map { table.columns[$0] }),
        Destination(progress: progress, run: run, entity: entity)
      )
    }
    rows[entity] = made
    return made
  }

  /// Writes `row` (filled) as a row of `destination`'s entity; false, writing nothing, when
  /// its key does not follow the last one that entity wrote there.
  /// - Throws: ``StoreError`` when a page or spool cannot be written.
  func take(_ row: inout Row, into destination: Destination) throws(StoreError) -> Bool {
    let key = row.record.rowid
    let progress = destination.progress
    if progress.finished { return false }
    guard makeKeys(of: row.record, for: progress) else { return false }
    guard let run = destination.run else {
      if let last = progress.writer.lastRowid, key <= last { return false }
      row.record.encode()
      // A row SQLite would refuse as too big goes to SQLite, which says so.
      guard row.record.bytes.count <= RowRecord.longestRecord else { return false }
      try writing(progress) {
        try row.record.bytes.withUnsafeBytes { try progress.writer.append(rowid: key, record: $0) }
      }
      try addKeys(of: row.record, to: progress)
      return true
    }
    if let last = progress.runs[run].last, key <= last { return false }
    // A spool being read takes no more rows: this one comes after the table began.
    let spool = progress.runs[run].spool
    if spool != nil && progress.merging { return false }
    row.record.encode()
    guard row.record.bytes.count <= RowRecord.longestRecord else { return false }
    if let spool {
      try spool.append(key, row.record.bytes)
    } else {
      try writing(progress) {
        try writeSpooled(of: progress, before: key, entity: destination.entity)
        try row.record.bytes.withUnsafeBytes { try progress.writer.append(rowid: key, record: $0) }
      }
    }
    progress.runs[run].last = key
    try addKeys(of: row.record, to: progress)
    return true
  }

  /// Makes the sort keys of `record` for its table's indexes that keep such keys; false when
  /// an index cannot keep the row's key, which then goes through SQLite: a value other than an
  /// integer or NULL in an index on one integer column, a real (``IndexSortKey``), or a key
  /// too long for a leaf.
  private func makeKeys(of record: RowRecord, for progress: Progress) -> Bool {
    for keys in progress.keys {
      switch keys {
      case .integers(_, let column):
        guard record.integerOrNull(at: column) != nil else { return false }
      case .sorted(let keys, let columns):
        guard makeSortKey(of: record, columns: columns, in: keys) else { return false }
      }
    }
    return true
  }

  /// Makes in `keys` the sort key of `record` in an index on `columns`; false when it cannot
  /// be kept (``makeKeys(of:for:)``).
  private func makeSortKey(of record: RowRecord, columns: [Int], in keys: SortedKeys) -> Bool {
    var length = 0
    guard
      keys.make({
        let start = $0.count
        guard record.appendIndexSortKey(of: columns, to: &$0) else { return false }
        length = $0.count - start
        return true
      })
    else { return false }
    // The record is at most the key's bytes and a header of a varint a value: measured only
    // when that could be too long.
    if length + 1 + 9 * (columns.count + 1) > longestIndexRecord {
      measured.removeAll(keepingCapacity: true)
      _ = keys.withMadeKey { IndexSortKey.appendRecord(of: $0, to: &measured) }
      guard measured.count <= longestIndexRecord else { return false }
    }
    return true
  }

  /// Adds the keys of `record`, a row written, to its table's indexes (those made by
  /// ``makeKeys(of:for:)`` before it was).
  private func addKeys(of record: RowRecord, to progress: Progress) throws(StoreError) {
    for keys in progress.keys {
      switch keys {
      case .integers(let keys, let column):
        // Checked before the row was written: an integer or NULL.
        try keys.add(record.integerOrNull(at: column)!, rowid: record.rowid)
      case .sorted(let keys, _): try keys.addMadeKey()
      }
    }
  }

  /// The entities whose rows wait in a spool for `table`, a shared table not written yet, in
  /// the order they came.
  func spooledEntities(of table: String) -> [String] {
    progress[table]?.runs.filter { $0.spool != nil }.map(\.entity) ?? []
  }

  /// Hands the file to the connection until ``resume()``: what was written so far, the
  /// pointer maps and the header are written out (``PageFile/suspend()``).
  /// - Throws: ``StoreError`` when the file cannot be written.
  func suspend() throws(StoreError) {
    try onFile("cannot write the store's pages") { () throws(SQLiteError) in try file.suspend() }
  }

  /// Takes the file back from the connection, which committed.
  /// - Throws: ``StoreError`` when the file's header cannot be read.
  func resume() throws(StoreError) {
    try onFile("cannot read the store's header") { () throws(SQLiteError) in try file.resume() }
  }

  /// Runs `body` on the file, its failure a store error saying `what` failed.
  private func onFile(_ what: String, _ body: () throws(SQLiteError) -> Void) throws(StoreError) {
    do {
      try body()
    } catch {
      throw StoreError(.database, what, path: file.path, underlying: error)
    }
  }

  /// Writes every table: the rest of each tree, and the shared tables from their entities'
  /// rows merged by key; then the file's pointer maps and header.
  /// - Throws: ``StoreError`` when a page cannot be written, or (naming the object) when two
  ///   entities of one table have the same key.
  func finish() throws(StoreError) {
    for (_, progress) in progress.sorted(by: { $0.key < $1.key }) { try finish(progress) }
    try onFile("cannot write the store's pages") { () throws(SQLiteError) in try file.finish() }
  }

  /// Writes the shared tables other than `table` whose every entity has given rows: the rows
  /// of another table have begun, so theirs are all in (an archive's entities come one after
  /// another). Merged now, while the next chunks decode, rather than after the last; a row
  /// that comes for such a table after all goes through SQL.
  private func finishSharedTables(besides table: String) throws(StoreError) {
    for (name, progress) in progress
    where name != table && progress.table.shared && !progress.finished
      && progress.table.entities.isSubset(of: Set(progress.runs.map(\.entity)))
    {
      try finish(progress)
    }
  }

  private func finish(_ progress: Progress) throws(StoreError) {
    guard !progress.finished else { return }
    progress.finished = true
    try writing(progress) {
      if progress.table.shared {
        if !progress.merging { try startMerging(progress) }
        try writeSpooled(of: progress, before: nil, entity: nil)
        progress.runs.removeAll()
      }
      try progress.writer.finish()
      for (index, keys) in zip(progress.table.indexes, progress.keys) {
        switch keys {
        case .integers(let keys, _): try write(index, from: keys)
        case .sorted(let keys, _): try write(index, of: progress.table, from: keys)
        }
      }
    }
  }

  /// Runs `body`, which writes `progress`'s table; a failure other than a ``StoreError`` is
  /// said as the table's that cannot be written.
  private func writing(_ progress: Progress, _ body: () throws -> Void) throws(StoreError) {
    do {
      try body()
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(
        .database, "cannot write the table \(progress.table.name)", path: file.path,
        underlying: error as? SQLiteError)
    }
  }

  /// Writes `index`'s tree from the keys of the rows written.
  private func write(_ index: Index, from keys: IndexKeys) throws {
    var writer = IndexTreeWriter(file: file, root: index.root)
    var ordered = try keys.inOrder()
    var key: [UInt8] = []
    while let (value, rowid) = try ordered.next() {
      key.removeAll(keepingCapacity: true)
      RowRecord.appendIndexKey(value, rowid: rowid, to: &key)
      try writer.append(key)
    }
    try writer.finish()
  }

  /// Writes `index`'s tree from the sort keys of `table`'s rows written.
  /// - Throws: ``StoreError`` when a unique index's keys repeat, as SQLite's `CREATE INDEX`
  ///   says it.
  private func write(_ index: Index, of table: Table, from keys: SortedKeys) throws {
    var writer = IndexTreeWriter(file: file, root: index.root)
    var ordered = try keys.inOrder()
    var key: [UInt8] = []
    var previous: [UInt8] = []
    var previousHasNull = true
    var record: [UInt8] = []
    while try ordered.next(into: &key) {
      record.removeAll(keepingCapacity: true)
      let hasNull = key.withUnsafeBytes { IndexSortKey.appendRecord(of: $0, to: &record) }
      if index.unique && !hasNull && !previousHasNull
        && key.withUnsafeBytes({ key in
          previous.withUnsafeBytes {
            IndexSortKey.values(of: key).elementsEqual(IndexSortKey.values(of: $0))
          }
        })
      {
        throw StoreError(
          .database, "cannot create index \(index.name)", path: file.path,
          underlying: SQLiteError.uniqueConflict(
            table: table.name, columns: index.columnNames, path: file.path))
      }
      try writer.append(record)
      swap(&key, &previous)
      previousHasNull = hasNull
    }
    try writer.finish()
  }

  /// Ends the spools of `progress`'s table and reads each one's first entry: its rows are
  /// written from here on, merged by key.
  private func startMerging(_ progress: Progress) throws(StoreError) {
    progress.merging = true
    for (index, run) in progress.runs.enumerated() {
      guard let spool = run.spool else { continue }
      try spool.flush()
      if try spool.advance() { progress.unread.append(index) }
    }
  }

  /// Writes the spooled rows of `progress`'s table whose keys are below `bound` (all of them
  /// when nil), by key; a spooled row with the key `bound` is an object of `entity` that has
  /// another's key.
  /// - Throws: ``StoreError`` when two entities of the table have the same key (naming the
  ///   later's object), or a page or spool cannot be written or read.
  private func writeSpooled(of progress: Progress, before bound: Int64?, entity: String?) throws {
    let runs = progress.runs
    while !progress.unread.isEmpty {
      var least = progress.unread[0]
      for index in progress.unread.dropFirst()
      where runs[index].spool!.key < runs[least].spool!.key {
        least = index
      }
      let spool = runs[least].spool!
      let key = spool.key
      if let bound, key > bound { return }
      if let last = progress.writer.lastRowid, key <= last {
        // The same key from two entities: the later entity's row (ties go to the earlier run)
        // is the one SQLite would refuse.
        throw conflict(at: key, of: runs[least].entity, in: progress.table)
      }
      if key == bound, let entity { throw conflict(at: key, of: entity, in: progress.table) }
      try spool.withBytes { try progress.writer.append(rowid: key, record: $0) }
      if try !spool.advance() { progress.unread.removeAll { $0 == least } }
    }
  }

  /// The error of an object of `entity` with the key `key`, which another entity's object in
  /// `table` has.
  private func conflict(at key: Int64, of entity: String, in table: Table) -> StoreError {
    StoreError(
      .database, "cannot insert \(ObjectReference(entity: entity, primaryKey: key))",
      path: file.path,
      underlying: SQLiteError.primaryKeyConflict(table: table.name, column: "Z_PK", path: file.path)
    )
  }
}
