import ObjectModel
import SQLite

extension ObjectContext {
  /// Runs a batch insert (Core Data's `execute(_:)` of an `NSBatchInsertRequest`): every row
  /// the request gives is checked and written straight into the store, in one transaction,
  /// each a new object keyed from its hierarchy's counter, `Z_OPT` 1, `Z_PRIMARYKEY.Z_MAX`
  /// moved past the keys, and one persistent-history transaction when the store keeps history.
  /// No object is made or registered, so memory stays flat however many rows there are.
  ///
  /// A row holding values of a uniqueness constraint that an object of the store (or an
  /// earlier row) already holds is settled by ``mergePolicy``, as a save settles an inserted
  /// object (``ConstraintConflict``):
  /// - ``MergePolicy/mergeByKey`` (`NSMergeByPropertyObjectTrumpMergePolicy`): the existing
  ///   object takes the row's values; those the row leaves empty keep the object's.
  /// - ``MergePolicy/objectWins``: the existing object takes every value of the row.
  /// - ``MergePolicy/storeWins``: the existing object takes only what it has none of.
  /// - ``MergePolicy/error``: the insert fails with the conflict.
  ///
  /// Like Core Data's, the context's objects are left as they were: refresh those the batch
  /// changed (``refresh(_:mergeChanges:)``) to see its values.
  /// - Throws: ``StoreError``: ``StoreError/Kind/invalidValue`` for an unknown, abstract or
  ///   read-only target or a value that does not fit, ``StoreError/Kind/validation`` naming
  ///   the row and the required attribute it leaves empty,
  ///   ``StoreError/Kind/constraintConflict`` (under ``MergePolicy/error``), or what the
  ///   request's handler threw. Nothing is written then.
  @discardableResult
  public func execute(_ request: BatchInsertRequest) throws(StoreError) -> BatchInsertResult {
    guard !isReadOnly else {
      throw fail(.unsupported, "the context was opened read-only; it cannot insert")
    }
    guard walking == 0, !inDidSave else {
      throw fail(.unsupported, "a batch insert cannot run inside a forEach walk or a didSave hook")
    }
    let traits = traits(of: request.entity)
    guard let root = traits.root else {
      throw fail(.invalidValue, "the model has no entity \(request.entity)")
    }
    guard !traits.isAbstract else {
      throw fail(.invalidValue, "entity \(request.entity) is abstract and cannot have objects")
    }
    let statements = try rowStatements(of: request.entity, traits: traits)
    let constraints = try uniquenessConstraints(
      of: request.entity, traits: traits, table: statements.table)
    var batch = BatchRun(statements: statements, constraints: constraints)
    var row = BatchInsertRow(context: self, traits: traits)
    var references: [ObjectReference]? = request.resultType == .objectReferences ? [] : nil
    let keysBefore = nextKeys[root]
    do {
      try store.database.transaction(.immediate) { db in
        let history = recordsHistory ? HistoryRecorder(self, db) : nil
        try catchUpPrimaryKeys(root: root)
        var index = 0
        while true {
          row.reset(index: index)
          do {
            if try request.next(&row) { break }
          } catch let error as StoreError {
            throw error
          } catch {
            throw fail(
              .invalidValue,
              "the batch insert's handler failed at row \(index): \(error); nothing was inserted")
          }
          index += 1
          if let missing = traits.required.first(where: {
            !$0.isTransient && row.values[$0.slot] == nil
          }) {
            throw fail(
              .validation,
              "\(request.entity) row \(row.index): \(missing.name) is required and has no value; nothing was inserted"
            )
          }
          if let holder = try constraintHolder(of: row, batch: batch, checkingIndexed: false) {
            try upsert(row, into: holder, batch: &batch, db)
            references?.append(holder)
            if !batch.inserted(holder.primaryKey) {
              try history?.record(.update, holder)
            }
            continue
          }
          let key = try nextPrimaryKey(root: root)
          do {
            try batch.insert(row, key: key, db)
          } catch let error as SQLiteError where error.isConstraint {
            // A unique index refused the row: name the constraint and the object holding it.
            _ = try constraintHolder(of: row, batch: batch, checkingIndexed: true)
            throw error
          }
          let reference = ObjectReference(entity: request.entity, primaryKey: key)
          references?.append(reference)
          try history?.record(.insert, reference)
        }
        if let highest = batch.highestKey { try raiseMaxKey(to: highest, of: root) }
        try history?.finish()
      }
    } catch {
      // Keys handed out to rows that were not written are handed out again.
      nextKeys[root] = keysBefore
      if let sqlite = error as? SQLiteError, sqlite.isConstraint {
        throw fail(
          .constraintConflict,
          "a unique index of \(statements.table) refused a row of the batch; nothing was inserted: \(sqlite)"
        )
      }
      throw wrap(error, "the batch insert failed and was rolled back")
    }
    return BatchInsertResult(
      inserted: batch.inserted, updated: batch.updated, objects: references)
  }

  /// What one batch insert writes with and has written.
  private struct BatchRun {
    let statements: RowStatements
    /// The entity's uniqueness constraints (its own and its ancestors').
    let constraints: [Constraint]
    var inserted = 0
    var updated = 0
    var highestKey: Int64?
    /// The key of the first row inserted: the batch's keys come from its hierarchy's counter,
    /// past every key the store held before it.
    var firstKey: Int64?

    /// Whether the object keyed `key` (of the batch's hierarchy) was inserted by the batch.
    func inserted(_ key: Int64) -> Bool { firstKey.map { key >= $0 } ?? false }

    init(statements: RowStatements, constraints: [Constraint]) {
      self.statements = statements
      self.constraints = constraints
    }

    mutating func insert(_ row: BatchInsertRow, key: Int64, _ db: Database) throws {
      let statement = try statements.preparedInsert ?? db.prepare(statements.insert)
      statements.preparedInsert = statement
      try statement.bind(key, at: 1)
      try statement.bind(statements.entityNumber, at: 2)
      try statement.bind(Int64(1), at: 3)
      var index = 4
      for (_, source) in statements.columns {
        if case .attribute(let slot) = source, let value = row.values[slot] {
          try statement.bind(SQLValues.sqlite(value), at: index)
        } else {
          // A batch insert sets no relationship.
          try statement.bindNull(at: index)
        }
        index += 1
      }
      try statement.run()
      inserted += 1
      highestKey = max(highestKey ?? key, key)
      if firstKey == nil { firstKey = key }
    }
  }

  /// A uniqueness constraint a batch insert checks: the entity declaring it, its attributes
  /// and their slots, and whether a unique index of the table holds SQLite to it.
  private struct Constraint {
    let owner: String
    let attributes: [String]
    let slots: [Int]
    let isIndexed: Bool
  }

  /// How a save or a batch insert writes `entity`'s rows, made once per entity.
  func rowStatements(of entity: String, traits: EntityTraits) throws(StoreError)
    -> RowStatements
  {
    if let known = traits.rows { return known }
    let rows = RowStatements(
      entity: entity, table: try table(for: entity), model: model, slots: traits.slots,
      entityNumber: layout.entityNumbers[entity] ?? 0)
    traits.rows = rows
    return rows
  }

  /// `entity`'s uniqueness constraints (its own and its ancestors'), each with whether a
  /// unique index of `table` over exactly its columns enforces it.
  private func uniquenessConstraints(of entity: String, traits: EntityTraits, table: String)
    throws(StoreError) -> [Constraint]
  {
    let constraints = model.lineage(of: entity).flatMap { owner in
      owner.uniquenessConstraints.filter { !$0.isEmpty }.map { (owner.name, $0) }
    }
    guard !constraints.isEmpty else { return [] }
    var indexed: [Set<String>] = []
    do {
      for index in try store.database.prepare("PRAGMA index_list(\(table))").allRows()
      where index.count > 2 && index[2].integerValue == 1 {
        guard case .text(let name) = index[1] else { continue }
        let columns = try store.database.prepare("PRAGMA index_info(\"\(name)\")").allRows()
          .compactMap { row -> String? in
            guard row.count > 2, case .text(let column) = row[2] else { return nil }
            return column.uppercased()
          }
        indexed.append(Set(columns))
      }
    } catch {
      throw wrap(error, "cannot read the indexes of \(table)")
    }
    return constraints.compactMap { owner, attributes in
      let slots = attributes.compactMap { traits.slots[$0] }
      let columns = attributes.compactMap { layout.column(ofAttribute: $0, in: owner) }
      guard slots.count == attributes.count, columns.count == attributes.count else { return nil }
      return Constraint(
        owner: owner, attributes: attributes, slots: slots,
        isIndexed: indexed.contains(Set(columns.map { $0.uppercased() })))
    }
  }

  /// The object (in the store, or written by an earlier row) holding the values of one of
  /// `row`'s uniqueness constraints; nil when none does. Under ``MergePolicy/error`` such an
  /// object is a conflict, thrown; there, constraints a unique index enforces are left to it
  /// unless `checkingIndexed` (it refused the row, and the conflict is named).
  private func constraintHolder(
    of row: BatchInsertRow, batch: BatchRun, checkingIndexed: Bool
  ) throws(StoreError) -> ObjectReference? {
    for constraint in batch.constraints
    where mergePolicy != .error || checkingIndexed || !constraint.isIndexed {
      let values = constraint.slots.compactMap { row.values[$0] }
      // A constraint with an empty value among its attributes holds nothing.
      guard values.count == constraint.slots.count,
        let holder = try storedHolder(
          of: constraint.attributes, values, in: constraint.owner, besides: 0)
      else { continue }
      guard mergePolicy != .error else {
        let conflict = ConstraintConflict(
          entity: constraint.owner, attributes: constraint.attributes, values: values,
          object: ObjectReference(entity: row.entity, primaryKey: 0),
          conflictingObject: holder, isStored: !batch.inserted(holder.primaryKey))
        throw StoreError(
          .constraintConflict,
          "row \(row.index) of the batch: \(conflict); nothing was inserted", path: store.path,
          underlying: conflict)
      }
      return holder
    }
    return nil
  }

  /// Writes `row` over the object `holder`, which holds the same values of a uniqueness
  /// constraint, as ``mergePolicy`` settles it; `Z_OPT` moves on for an object that was in
  /// the store before the batch.
  private func upsert(
    _ row: BatchInsertRow, into holder: ObjectReference, batch: inout BatchRun, _ db: Database
  ) throws {
    guard let stored = try storedRecord(of: holder) else { return }
    let holderAttributes = Set(model.attributes(of: holder.entity).map(\.name))
    var columns: [String] = []
    var values: [SQLiteValue] = []
    for (column, source) in batch.statements.columns {
      guard case .attribute(let slot) = source else { continue }
      let name = row.traits.slotNames[slot]
      guard holderAttributes.contains(name) else { continue }
      let mine = row.values[slot]
      let theirs = stored.attributes[name]
      guard mergePolicy.upsertTakes(mine, over: theirs), mine != theirs else { continue }
      columns.append("\(column) = ?")
      values.append(mine.map { SQLValues.sqlite($0) } ?? .null)
    }
    batch.updated += 1
    let isNew = batch.inserted(holder.primaryKey)
    guard !columns.isEmpty || !isNew else { return }
    if !isNew { columns.append("Z_OPT = Z_OPT + 1") }
    let statement = try self.statements.statement(
      "UPDATE \(batch.statements.table) SET \(columns.joined(separator: ", ")) WHERE Z_PK = ?")
    values.append(.integer(holder.primaryKey))
    try statement.bind(values)
    try statement.run()
  }
}
