import ObjectModel
import SQLite

/// One batch of objects on its way into a store (``StoreLoader/insert(_:)``): its rows bound
/// column by column from the batch's buffers, several rows to a statement, and its
/// many-to-many rows gathered by join table, many to a statement.
///
/// Each statement run costs SQLite a cursor opened and closed and a program started and
/// halted, which the rows of one statement share: on a restore's rows that is a fifth of
/// SQLite's time, on many-to-many rows a third of the restore's. A statement that a row's
/// constraint fails inserted the rows before that one (`INSERT OR FAIL`, which spares SQLite
/// a statement journal: ``StoreLoader/insertStatement(for:layout:rows:)``); the rest then go
/// in one at a time, so that the error names the row, as one row at a time would. Any other
/// failure (a full disk) is the statement's, named by its first row.
struct BatchInsertion {
  /// Where each column of an entity's insert statement takes its value from in a batch.
  private enum Source {
    case attribute(Int)
    case foreignKey(Int)
    case foreignEntity(Int)
    case none
  }

  /// Where the next value of each column of the batch is: the batch's columns list their
  /// values by record, in order, and a row is bound by taking each column's next one when it
  /// is the row's.
  private struct Cursor {
    var attributes: [Int]
    var toOne: [Int]
    var stored: [Int]
  }

  /// A many-to-many row waiting for its statement: the object (by its place in the batch)
  /// whose row it is, the destination's key and the order key.
  private struct JoinRow {
    var record: Int
    var destination: Int64
    var order: Int64?
  }

  /// A join table the batch's many-to-many rows go into, and those waiting.
  private struct JoinTable {
    let join: StoreLayout.Join
    let hasOrder: Bool
    let single: Statement
    /// The statement of `groupSize` rows.
    let grouped: Statement
    let groupSize: Int
    var waiting: [JoinRow] = []
  }

  /// The most rows of an entity's table one statement takes.
  static let rowsPerStatement = 16
  /// The most many-to-many rows one statement takes (two or three keys each).
  static let joinRowsPerStatement = 64

  /// How many rows of `width` columns one statement takes: up to `most`, within the 999
  /// parameters any SQLite allows.
  static func rows(ofWidth width: Int, most: Int) -> Int { max(1, min(most, 999 / max(width, 1))) }

  private let batch: ObjectBatch
  private let loader: StoreLoader
  /// The store's connection, which tells how many rows a failed statement inserted.
  private let database: Database
  /// The entity's row and where it goes, when the loader writes its table directly.
  private var direct: (DirectLoad.Row, DirectLoad.Destination)?
  private let single: Statement
  private let grouped: Statement?
  private let groupSize: Int
  private let width: Int
  private let entityNumber: Int64
  private let sources: [Source]
  /// The batch's attribute and to-one columns, read without retaining anything (their memory
  /// kept by `pinned`).
  private let pinned: PinnedColumns
  private let attributeColumns: [PinnedColumns.Attribute]
  private let toOneColumns: [PinnedColumns.ToOne]
  private let storedColumns: [PinnedColumns.Attribute]
  /// The parameter of each stored column, in a row's.
  private let storedParameters: [Int]
  private var joinTables: [JoinTable]
  private var cursor: Cursor
  private var toManyNext: [Int]
  /// The object being inserted, by its place in the batch: the one an error names.
  private(set) var current = 0

  /// Prepares `batch`'s way into `loader`'s store, mapped by `layout`.
  /// - Throws: ``StoreError`` for a relationship without its join table or a stored column its
  ///   table lacks; what preparing a statement throws.
  init(_ batch: ObjectBatch, into loader: StoreLoader, layout: StoreLayout) throws {
    self.batch = batch
    self.loader = loader
    database = loader.database
    let (single, columns, names) = try loader.insertStatement(for: batch.entity, layout: layout)
    direct = try loader.direct?.row(
      for: batch.entity, table: layout.table(for: batch.entity)?.name ?? "", names: names)
    self.single = single
    width = names.count
    groupSize = Self.rows(ofWidth: width, most: Self.rowsPerStatement)
    grouped =
      groupSize > 1 && batch.count >= groupSize
      ? try loader.insertStatement(for: batch.entity, layout: layout, rows: groupSize) : nil
    entityNumber = Int64(layout.entityNumbers[batch.entity] ?? 0)
    var attributeIndex: [String: Int] = [:]
    for (position, attribute) in batch.attributes.enumerated() {
      attributeIndex[attribute.name] = position
    }
    var toOneIndex: [String: Int] = [:]
    for (position, column) in batch.toOne.enumerated() { toOneIndex[column.name] = position }
    sources = columns.map { column in
      switch column {
      case .attribute(let name, _): attributeIndex[name].map(Source.attribute) ?? .none
      case .foreignKey(let name): toOneIndex[name].map(Source.foreignKey) ?? .none
      case .foreignEntity(let name): toOneIndex[name].map(Source.foreignEntity) ?? .none
      case .raw: .none
      }
    }
    pinned = PinnedColumns(batch, entityNumbers: layout.entityNumbers)
    attributeColumns = pinned.attributes
    toOneColumns = pinned.toOne
    storedColumns = pinned.storedColumns
    joinTables = try batch.toMany.map { column in
      guard let join = loader.join(for: batch.entity, column.name, layout: layout) else {
        throw StoreError(
          .modelMismatch, "\(batch.entity).\(column.name) has no join table", path: loader.path)
      }
      let hasOrder = join.orderColumn != nil
      let rows = Self.rows(ofWidth: hasOrder ? 3 : 2, most: Self.joinRowsPerStatement)
      return JoinTable(
        join: join, hasOrder: hasOrder, single: try loader.joinStatement(join),
        grouped: try loader.joinStatement(join, rows: rows), groupSize: rows)
    }
    let permitted = loader.storedColumns(of: batch.entity, layout: layout)
    storedParameters = try batch.storedColumns.map { column in
      guard permitted.contains(column.name), let index = names.firstIndex(of: column.name) else {
        let first = ObjectReference(
          entity: batch.entity, primaryKey: batch.primaryKeys[column.records.first ?? 0])
        throw StoreError(
          .modelMismatch,
          "\(first) has a value for column \(column.name), which its table lacks",
          path: loader.path)
      }
      return index + 1
    }
    cursor = Cursor(
      attributes: [Int](repeating: 0, count: batch.attributes.count),
      toOne: [Int](repeating: 0, count: batch.toOne.count),
      stored: [Int](repeating: 0, count: batch.storedColumns.count))
    toManyNext = [Int](repeating: 0, count: batch.toMany.count)
  }

  /// Inserts every object of the batch and its many-to-many rows.
  mutating func run() throws {
    // Texts and blobs are bound without a copy: no binding may outlive the batch.
    defer {
      single.reset(clearBindings: true)
      grouped?.reset(clearBindings: true)
    }
    var record = 0
    if let load = loader.direct {
      if let (taken, destination) = direct {
        // Taken out while it is filled, so that its buffers are not shared.
        var row = taken
        direct = nil
        record = try insertDirectly(into: load, row: &row, destination: destination)
        direct = (row, destination)
        // The many-to-many rows of the rows written go in through SQL.
        if joinTables.contains(where: { !$0.waiting.isEmpty }) {
          try loader.handingOver {
            for index in joinTables.indices { try flushJoins(index) }
          }
        }
        if record == batch.count {
          current = batch.count
          return
        }
      }
      // A row the pages cannot take: it and the rest go through SQLite.
      try loader.endDirectWrites()
    }
    if let grouped {
      while record + groupSize <= batch.count {
        let first = cursor
        for slot in 0..<groupSize {
          current = record + slot
          var target = grouped
          try bindRow(record + slot, to: &target, base: slot * width)
        }
        do {
          try grouped.run()
        } catch  where error.isConstraint {
          // The rows before the one that failed are in; the rest go one at a time.
          let inserted = database.changes
          grouped.reset()
          cursor = first
          for row in record..<record + groupSize {
            if row < record + inserted {
              // Bound only for the columns' cursors to move past it.
              var target = single
              try bindRow(row, to: &target, base: 0)
            } else {
              try insertAlone(row)
            }
          }
        } catch {
          // Not one row's fault (the disk is full, say): named by the statement's first.
          current = record
          throw Self.named(error, by: single)
        }
        for row in record..<record + groupSize {
          current = row
          try takeJoins(of: row)
        }
        record += groupSize
      }
    }
    while record < batch.count {
      try insertAlone(record)
      try takeJoins(of: record)
      record += 1
    }
    for index in joinTables.indices { try flushJoins(index) }
    current = batch.count
  }

  /// Writes the batch's rows into `load`'s pages, from the first, until one cannot go there;
  /// returns that row's place (the batch's count when all went). Their many-to-many rows wait
  /// in the join tables' lists, for ``flushJoins(_:)``.
  private mutating func insertDirectly(
    into load: DirectLoad, row: inout DirectLoad.Row, destination: DirectLoad.Destination
  ) throws -> Int {
    for record in 0..<batch.count {
      current = record
      row.record.clear()
      row.convertible = true
      try bindRow(record, to: &row, base: 0)
      guard row.convertible, try load.take(&row, into: destination) else {
        unbind(record)
        return record
      }
      try takeJoins(of: record, keepingAll: true)
    }
    return batch.count
  }

  /// Moves the columns' cursors back over `record`, the row just bound: each moved on once
  /// for it, exactly when it lists it.
  private mutating func unbind(_ record: Int) {
    for index in cursor.attributes.indices {
      Self.moveBack(&cursor.attributes[index], over: record, in: attributeColumns[index].records)
    }
    for index in cursor.toOne.indices {
      Self.moveBack(&cursor.toOne[index], over: record, in: toOneColumns[index].records)
    }
    for index in cursor.stored.indices {
      Self.moveBack(&cursor.stored[index], over: record, in: storedColumns[index].records)
    }
  }

  /// Moves a column's cursor `next` back by one when the value before it is `record`'s (the
  /// reverse of ``PinnedColumns/lists(_:at:in:)``'s step).
  @inline(__always)
  private static func moveBack(
    _ next: inout Int, over record: Int, in records: UnsafeBufferPointer<Int>
  ) {
    if next > 0 && records[next - 1] == record { next -= 1 }
  }

  /// Inserts the row of `record` with a statement of its own.
  private mutating func insertAlone(_ record: Int) throws {
    current = record
    var statement = single
    try bindRow(record, to: &statement, base: 0)
    try single.run()
  }

  /// Binds the row of `record` to `statement`'s parameters from `base` + 1 on.
  private mutating func bindRow<Target: RowParameters>(
    _ record: Int, to statement: inout Target, base: Int
  ) throws {
    try statement.bind(batch.primaryKeys[record], at: base + 1)
    try statement.bind(entityNumber, at: base + 2)
    try statement.bind(batch.versions[record], at: base + 3)
    for (offset, source) in sources.enumerated() {
      let parameter = base + offset + 4
      switch source {
      // The batch's columns are read in place, never copied out (a copy retains each of
      // its arrays, once per value).
      case .attribute(let index):
        let column = attributeColumns[index]
        let next = cursor.attributes[index]
        guard PinnedColumns.lists(record, at: next, in: column.records) else {
          try statement.bindNull(at: parameter)
          continue
        }
        cursor.attributes[index] = next + 1
        try column.values.bind(next, decimal: column.decimal, to: &statement, at: parameter)
      case .foreignKey(let index), .foreignEntity(let index):
        let column = toOneColumns[index]
        let next = cursor.toOne[index]
        guard PinnedColumns.lists(record, at: next, in: column.records) else {
          try statement.bindNull(at: parameter)
          continue
        }
        if case .foreignKey = source {
          try statement.bind(column.keys[next], at: parameter)
        } else if let number = column.entityNumbers[next] {
          try statement.bind(number, at: parameter)
        } else {
          try statement.bindNull(at: parameter)
        }
      case .none:
        try statement.bindNull(at: parameter)
      }
    }
    // A to-one's key and entity columns read the same value: advance once both are bound.
    for index in cursor.toOne.indices
    where PinnedColumns.lists(record, at: cursor.toOne[index], in: toOneColumns[index].records) {
      cursor.toOne[index] += 1
    }
    // Values kept as stored override their column.
    for (index, column) in storedColumns.enumerated() {
      let next = cursor.stored[index]
      guard PinnedColumns.lists(record, at: next, in: column.records) else { continue }
      cursor.stored[index] = next + 1
      try column.values.bind(
        next, decimal: false, to: &statement, at: base + storedParameters[index])
    }
  }

  /// Takes the many-to-many rows of `record` (records come here in order), inserting those of
  /// a join table once they are a statement's worth, or (`keepingAll`, while the tables are
  /// written directly) keeping them all for ``flushJoins(_:)``.
  private mutating func takeJoins(of record: Int, keepingAll: Bool = false) throws {
    for (index, column) in batch.toMany.enumerated() {
      let next = toManyNext[index]
      guard PinnedColumns.lists(record, at: next, in: column.records) else { continue }
      toManyNext[index] = next + 1
      for (destination, order) in column.rows[next] {
        joinTables[index].waiting.append(
          JoinRow(record: record, destination: destination, order: order))
        if !keepingAll && joinTables[index].waiting.count == joinTables[index].groupSize {
          try flushJoins(index)
        }
      }
    }
  }

  /// Inserts the many-to-many rows waiting for join table `index`: a statement's worth at a
  /// time, the rest (and a statement's worth that fails) one at a time.
  private mutating func flushJoins(_ index: Int) throws {
    let table = joinTables[index]
    guard !table.waiting.isEmpty else { return }
    joinTables[index].waiting.removeAll(keepingCapacity: true)
    let width = table.hasOrder ? 3 : 2
    var start = 0
    while start + table.groupSize <= table.waiting.count {
      let group = table.waiting[start..<(start + table.groupSize)]
      start += table.groupSize
      for (slot, row) in group.enumerated() {
        current = row.record
        try bindJoin(row, to: table.grouped, base: slot * width, hasOrder: table.hasOrder)
      }
      do {
        try table.grouped.run()
        continue
      } catch  where error.isConstraint {
        table.grouped.reset()
      } catch {
        current = group.first?.record ?? current
        throw Self.named(error, by: table.single)
      }
      try insertJoinsAlone(group, of: table)
    }
    try insertJoinsAlone(table.waiting[start...], of: table)
  }

  /// Inserts `rows` of `table` one statement each.
  private mutating func insertJoinsAlone(_ rows: ArraySlice<JoinRow>, of table: JoinTable) throws {
    for row in rows {
      current = row.record
      try bindJoin(row, to: table.single, base: 0, hasOrder: table.hasOrder)
      try table.single.run()
    }
  }

  /// `error`, of a statement of several rows, with the SQL of `single`, the statement of one
  /// of them: what a message shows once, rather than the same row's placeholders sixteen
  /// times over.
  private static func named(_ error: SQLiteError, by single: Statement) -> SQLiteError {
    SQLiteError(code: error.code, message: error.message, sql: single.sql, path: error.path)
  }

  private func bindJoin(_ row: JoinRow, to statement: Statement, base: Int, hasOrder: Bool)
    throws
  {
    try statement.bind(batch.primaryKeys[row.record], at: base + 1)
    try statement.bind(row.destination, at: base + 2)
    guard hasOrder else { return }
    if let order = row.order {
      try statement.bind(order, at: base + 3)
    } else {
      try statement.bindNull(at: base + 3)
    }
  }
}

/// Where a row's values are bound, by 1-based parameter: a statement's parameters, or a record
/// written without SQLite (``DirectLoad/Row``).
protocol RowParameters {
  mutating func bind(_ value: Int64, at index: Int) throws
  mutating func bind(_ value: Double, at index: Int) throws
  mutating func bindNull(at index: Int) throws
  mutating func bindUnsafe(text bytes: UnsafeRawBufferPointer, at index: Int) throws
  mutating func bindUnsafe(blob bytes: UnsafeRawBufferPointer, at index: Int) throws
}

extension Statement: RowParameters {}

extension DirectLoad.Row: RowParameters {
  mutating func bind(_ value: Int64, at index: Int) {
    guard let column = columnOfParameter[index - 1] else { return }
    if !record.setInteger(value, at: column) { convertible = false }
  }

  mutating func bind(_ value: Double, at index: Int) {
    guard let column = columnOfParameter[index - 1] else { return }
    if !record.setReal(value, at: column) { convertible = false }
  }

  mutating func bindNull(at index: Int) {
    guard let column = columnOfParameter[index - 1] else { return }
    record.setNull(at: column)
  }

  mutating func bindUnsafe(text bytes: UnsafeRawBufferPointer, at index: Int) {
    guard let column = columnOfParameter[index - 1] else { return }
    if !record.setText(bytes, at: column) { convertible = false }
  }

  mutating func bindUnsafe(blob bytes: UnsafeRawBufferPointer, at index: Int) {
    guard let column = columnOfParameter[index - 1] else { return }
    record.setBlob(bytes, at: column)
  }
}
