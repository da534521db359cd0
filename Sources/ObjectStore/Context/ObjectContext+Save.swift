import Foundation
import ObjectModel
import SQLite

extension ObjectContext {
  // MARK: Validating

  private func validate() throws(StoreError) {
    if let (object, relationship, target) = try deniedDeletion() {
      throw fail(
        .deleteDenied,
        "cannot delete \(object): \(object.entity).\(relationship.name) still holds \(target) (delete rule Deny); delete it too, or roll back"
      )
    }
    // The same mistake is always the one named: the first in a stable order (entity, then
    // key), found without sorting every object, since only one before it can replace it.
    var first: (reference: ObjectReference, error: StoreError)?
    func check(_ object: ManagedObject) throws(StoreError) {
      if let first, !Self.stableOrder(object.reference, first.reference) { return }
      guard !object.isDeleted, let error = try problem(of: object) else { return }
      first = (object.reference, error)
    }
    for object in objectsPendingInsert { try check(object) }
    for reference in updated {
      if let object = registered[reference] { try check(object) }
    }
    if let first { throw first.error }
  }

  /// What makes `object` fail validation: a required value missing, a relationship holding
  /// too few or too many objects; nil when nothing does.
  private func problem(of object: ManagedObject) throws(StoreError) -> StoreError? {
    // A required transient attribute is validated as Core Data validates it: left nil, the
    // save fails although nothing of it is written.
    for (name, slot, isTransient) in object.traits.required
    where isTransient
      ? object.transientValue(for: name) == nil : object.attributes[slot: slot] == nil
    {
      return fail(.validation, "\(object): \(object.entity).\(name) is required and has no value")
    }
    for relationship in object.traits.checkedRelationships {
      if !relationship.isToMany {
        if object.toOne[relationship.name] == nil {
          return fail(
            .validation, "\(object): \(object.entity).\(relationship.name) is required and empty")
        }
        continue
      }
      let count = try members(of: object, relationship.name).count
      if count == 0 && !relationship.isOptional {
        // Stores hold required to-manys empty (SwiftData saves them so): an object that
        // held it empty already, in the store or where a merge took it from, is no new
        // violation.
        if acceptedEmpty[object.reference]?.contains(relationship.name) == true { continue }
        if !inserted.contains(object.reference),
          try storedMembers(of: object, relationship).isEmpty
        {
          continue
        }
        return fail(
          .validation,
          "\(object): \(object.entity).\(relationship.name) is required and holds no objects")
      }
      if count > 0 && count < relationship.minCount {
        return fail(
          .validation,
          "\(object): \(object.entity).\(relationship.name) holds \(count) objects; it takes at least \(relationship.minCount)"
        )
      }
      if relationship.maxCount > 1 && count > relationship.maxCount {
        return fail(
          .validation,
          "\(object): \(object.entity).\(relationship.name) holds \(count) objects; it takes at most \(relationship.maxCount)"
        )
      }
    }
    return nil
  }

  /// Checks the pending changes as a save would (required values, relationship counts, Deny
  /// rules), writing nothing: what a dry run promises, the save keeps.
  /// - Throws: ``StoreError`` (``StoreError/Kind/validation`` or
  ///   ``StoreError/Kind/deleteDenied``) naming the object and property.
  public func validateChanges() throws(StoreError) {
    try validate()
  }

  /// Takes `object`'s required to-many `relationship` empty without a validation error, as
  /// the store it came from held it (a merge bringing an object back as it was).
  package func acceptEmpty(_ relationship: String, of object: ManagedObject) {
    acceptedEmpty[object.reference, default: []].insert(relationship)
  }

  // MARK: Saving

  /// Writes every pending change in one transaction: deletes, inserts (`Z_OPT` 1), updates
  /// (`Z_OPT` incremented, only where it still has the value read), join-table rows, order
  /// keys, `Z_PRIMARYKEY.Z_MAX`, and, when the store keeps persistent history
  /// (``recordsHistory``), the transaction and its changes, by ``transactionAuthor``.
  /// - Throws: ``StoreError``: ``StoreError/Kind/validation`` naming the object and property,
  ///   ``StoreError/Kind/deleteDenied`` when a deleted object's Deny relationship still holds
  ///   an object that is not deleted,
  ///   ``StoreError/Kind/conflict`` when another writer changed an object meanwhile, or the
  ///   database's error. Nothing is written then, and the changes stay pending.
  public func save() throws(StoreError) {
    guard hasChanges || !reordered.isEmpty else { return }
    guard !isReadOnly else {
      throw fail(.unsupported, "the context was opened read-only; it cannot save")
    }
    guard walking == 0 else {
      throw fail(
        .unsupported, "a forEach walk is reading the store; save once it has returned")
    }
    // Hooks first, so that what they write is validated (Core Data validates before willSave,
    // and a required shadow attribute written there fails its first save).
    try runWillSave()
    try settleConstraintConflicts()
    let folded = try foldExtendedChanges()
    do {
      try validate()
      try writePendingChanges(attempt: 1)
    } catch {
      // The extended changes stay in their layer; the bucket gets its stored value back.
      for (object, bucket, value) in folded { object.attributes[bucket] = value }
      throw error
    }
    for (object, _, _) in folded {
      object.extendedSnapshot = object.pendingExtendedSnapshot
      object.pendingExtendedSnapshot = nil
      object.extendedChanges.removeAll()
    }
    if undoManager?.removesAllActionsOnSave == true { undoManager?.removeAllActions() }
    func commit(_ object: ManagedObject, version: Int64) {
      object.version = version
      object.committed = object.attributes
      if object.committedToOne != object.toOne { object.committedToOne = object.toOne }
      if !object.changedKeys.isEmpty { object.changedKeys.removeAll() }
    }
    for object in objectsPendingInsert { commit(object, version: 1) }
    for reference in updated {
      if let object = registered[reference] { commit(object, version: object.version + 1) }
    }
    // didSave hooks run in a stable order; without hooks there is nothing to sort.
    var savedObjects: [ManagedObject] = []
    if hooks[.didSave]?.isEmpty == false {
      savedObjects = inserted.union(updated).union(deleted).sorted(by: Self.stableOrder)
        .compactMap { registered[$0] }
    }
    let changes = pendingSaveChanges()
    for reference in deleted { registered.removeValue(forKey: reference) }
    clearPendingChanges()
    do {
      inDidSave = true
      defer { inDidSave = false }
      for object in savedObjects { try runHooks(.didSave, object) }
    }
    NotificationCenter.default.post(
      name: .objectContextDidSave, object: self, userInfo: [ContextDidSave.userInfoKey: changes])
  }

  /// Writes the pending changes in one transaction. When another writer changed some of the
  /// objects meanwhile, nothing is written; the merge policy then brings those objects up to
  /// date and the write is tried again (three tries at most).
  private func writePendingChanges(attempt: Int) throws(StoreError) {
    struct ConflictFound: Error {}
    let orderKeys = try pendingOrderKeys()
    var conflicts: [ManagedObject] = []
    do {
      try store.database.transaction(.immediate) { db in
        try writeDeletes(db)
        // In key order: the order they were inserted in, unless keys were given.
        var inserts = objectsPendingInsert
        if !zip(inserts, inserts.dropFirst()).allSatisfy({ $0.primaryKey < $1.primaryKey }) {
          inserts.sort { $0.primaryKey < $1.primaryKey }
        }
        for object in inserts {
          let keys = orderKeys.isEmpty ? [:] : orderKeys[object.reference] ?? [:]
          _ = try writeRow(object, insert: true, orderKeys: keys, db)
        }
        for reference in updated.sorted(by: { $0.primaryKey < $1.primaryKey }) {
          guard let object = registered[reference], !object.isDeleted else { continue }
          if try !writeRow(object, insert: false, orderKeys: orderKeys[reference] ?? [:], db) {
            conflicts.append(object)
          }
        }
        if !conflicts.isEmpty { throw ConflictFound() }
        try writeJoins(db)
        try writeMaxKeys(db)
        try writeHistory(db)
      }
    } catch is ConflictFound {
      // Rolled back; settled below.
    } catch {
      // A unique index refused a row: name the constraint and both objects.
      if let sqlite = error as? SQLiteError, sqlite.isConstraint,
        let conflict = try firstConstraintConflict()
      {
        throw StoreError(
          .constraintConflict, "\(conflict); nothing was saved", path: store.path,
          underlying: conflict)
      }
      throw wrap(error, "the save failed and was rolled back")
    }
    guard !conflicts.isEmpty else { return }
    let names = conflicts.map { "\($0) (Z_OPT \($0.version))" }.joined(separator: ", ")
    guard mergePolicy != .error, attempt < 3 else {
      throw fail(
        .conflict,
        "\(names) changed or deleted by another writer since read; nothing was saved")
    }
    for object in conflicts {
      switch mergePolicy {
      case .storeWins: try refresh(object, mergeChanges: false)
      case .mergeByKey: try refresh(object, mergeChanges: true)
      case .objectWins: try adoptStoredVersion(of: object)
      case .error: break
      }
    }
    try writePendingChanges(attempt: attempt + 1)
  }

  /// The first object being saved (entity, then key) whose values of a uniqueness constraint
  /// another object holds: one being saved too, or one in the store that is neither deleted
  /// nor changed away from them. A constraint with a nil value among its attributes holds
  /// nothing (SQLite's unique indexes let NULLs repeat).
  func firstConstraintConflict() throws(StoreError) -> ConstraintConflict? {
    let pending = inserted.union(updated).sorted(by: Self.stableOrder).compactMap {
      registered[$0]
    }.filter { !$0.isDeleted }
    let pendingKeys = Set(pending.map(\.reference))
    // Constraint values seen among the objects being saved, by entity and attributes.
    var seen: [String: ObjectReference] = [:]
    for object in pending {
      for held in heldConstraints(of: object) {
        if let other = seen[held.key] {
          return ConstraintConflict(
            entity: held.owner, attributes: held.attributes, values: held.values,
            object: object.reference, conflictingObject: other, isStored: false)
        }
        seen[held.key] = object.reference
        guard
          let stored = try storedHolder(
            of: held.attributes, held.values, in: held.owner, besides: object.primaryKey)
        else { continue }
        // A stored holder being saved with other values, or deleted, holds them no longer.
        if pendingKeys.contains(stored) || deleted.contains(stored) { continue }
        return ConstraintConflict(
          entity: held.owner, attributes: held.attributes, values: held.values,
          object: object.reference, conflictingObject: stored, isStored: true)
      }
    }
    return nil
  }

  /// The uniqueness constraints whose values `object` holds (its entity's and its ancestors'),
  /// each with the entity declaring it, its attributes, their values, and a key that every
  /// object of the hierarchy holding the same values shares. A constraint with a nil value
  /// among its attributes holds nothing.
  func heldConstraints(of object: ManagedObject) -> [(
    owner: String, attributes: [String], values: [AttributeValue], key: String
  )] {
    var held: [(owner: String, attributes: [String], values: [AttributeValue], key: String)] = []
    for owner in model.lineage(of: object.entity) {
      for attributes in owner.uniquenessConstraints where !attributes.isEmpty {
        let values = attributes.compactMap { object.attributes[$0] }
        guard values.count == attributes.count else { continue }
        let root = model.root(of: owner.name)?.name ?? owner.name
        held.append((owner.name, attributes, values, "\(root)\u{0}\(attributes)\u{0}\(values)"))
      }
    }
    return held
  }

  /// An object of the store, other than the one keyed `besides` (0: none), whose `attributes`
  /// of `entity` hold `values`.
  func storedHolder(
    of attributes: [String], _ values: [AttributeValue], in entity: String, besides: Int64
  ) throws(StoreError) -> ObjectReference? {
    let table = try table(for: entity)
    var conditions: [String] = []
    for name in attributes {
      guard let column = layout.column(ofAttribute: name, in: entity) else { return nil }
      conditions.append("\(column) = ?")
    }
    let sql =
      "SELECT Z_PK, Z_ENT FROM \(table.name) WHERE \(conditions.joined(separator: " AND ")) AND Z_PK != ? LIMIT 1"
    do {
      let statement = try statements.statement(sql)
      for (index, value) in values.enumerated() {
        try statement.bind(SQLValues.sqlite(value), at: index + 1)
      }
      try statement.bind(.integer(besides), at: values.count + 1)
      guard let row = try statement.allRows().first, let key = row[0].integerValue,
        let number = row[1].integerValue, let name = entityNames[Int(number)]
      else { return nil }
      return ObjectReference(entity: name, primaryKey: key)
    } catch {
      throw wrap(error, "cannot look for the object holding \(entity)'s constraint values")
    }
  }

  /// Takes the stored `Z_OPT` of an object whose whole local state is to be written over the
  /// store's.
  private func adoptStoredVersion(of object: ManagedObject) throws(StoreError) {
    let table = try table(for: object.entity)
    let stored: Int64?
    do {
      let statement = try statements.statement("SELECT Z_OPT FROM \(table.name) WHERE Z_PK = ?")
      try statement.bind(.integer(object.primaryKey), at: 1)
      stored = try statement.allRows().first?[0].integerValue
    } catch {
      throw wrap(error, "cannot read \(object) again")
    }
    guard let stored else {
      throw fail(.conflict, "\(object) was deleted by another writer; nothing was saved")
    }
    object.version = stored
  }

  /// Entity name, then primary key: an order that builds no strings.
  static func stableOrder(_ a: ObjectReference, _ b: ObjectReference) -> Bool {
    a.entity == b.entity ? a.primaryKey < b.primaryKey : a.entity < b.entity
  }

  /// The columns of member rows that reordered relationships set, by member and column: order
  /// keys of one-to-many relationships, and for a to-many without an inverse the owner's key
  /// (and order key) or NULL for a member it let go of; the members become updated.
  private func pendingOrderKeys() throws(StoreError) -> [ObjectReference: [String: SQLiteValue]] {
    var keys: [ObjectReference: [String: SQLiteValue]] = [:]
    for (member, names) in releasedMembers {
      for membership in reordered where names.contains(membership.relationship) {
        guard let owner = registered[membership.owner],
          let place = layout.ownerColumns(ofToMany: membership.relationship, in: owner.entity)
        else { continue }
        keys[member, default: [:]][place.column] = .null
        if let order = place.orderColumn { keys[member, default: [:]][order] = .null }
        if let object = registered[member] { markUpdated(object) }
      }
    }
    for membership in reordered {
      guard let owner = registered[membership.owner], !owner.isDeleted else { continue }
      if let place = layout.ownerColumns(ofToMany: membership.relationship, in: owner.entity) {
        for (position, member) in try members(of: owner, membership.relationship).enumerated() {
          keys[member, default: [:]][place.column] = .integer(owner.primaryKey)
          if let order = place.orderColumn {
            keys[member, default: [:]][order] = .integer(Int64(position + 1))
          }
          if let object = registered[member] { markUpdated(object) }
        }
        continue
      }
      guard
        let declaring = model.lineage(of: owner.entity).first(where: {
          $0.relationship(named: membership.relationship) != nil
        }),
        let column = layout.tables.compactMap({
          $0.orderKeys["\(declaring.name).\(membership.relationship)"]
        }).first
      else { continue }
      for (position, member) in try members(of: owner, membership.relationship).enumerated() {
        keys[member, default: [:]][column] = .integer(Int64(position + 1))
        if let object = registered[member] { markUpdated(object) }
      }
    }
    return keys
  }

  private func writeDeletes(_ db: Database) throws {
    for reference in deleted {
      let table = try table(for: reference.entity)
      let statement = try statements.statement("DELETE FROM \(table.name) WHERE Z_PK = ?")
      try statement.bind(.integer(reference.primaryKey), at: 1)
      try statement.run()
      let lineage = Set(model.lineage(of: reference.entity).map(\.name))
      for join in layout.joins {
        var columns: [String] = []
        if lineage.contains(join.entity) { columns.append(join.sourceColumn) }
        if lineage.contains(join.relationship.destination) {
          columns.append(join.destinationColumn)
        }
        for column in columns {
          let statement = try statements.statement("DELETE FROM \(join.name) WHERE \(column) = ?")
          try statement.bind(.integer(reference.primaryKey), at: 1)
          try statement.run()
        }
      }
    }
  }

  /// Writes an object's row; false when an update found the row changed or gone.
  private func writeRow(
    _ object: ManagedObject, insert: Bool, orderKeys: [String: SQLiteValue], _ db: Database
  ) throws -> Bool {
    let rows = try rowStatements(of: object.entity, traits: object.traits)
    let statement: Statement
    if !orderKeys.isEmpty {
      // Order keys, rare, get a statement of their own with their columns added.
      statement = try statements.statement(
        rows.statement(adding: orderKeys.keys.sorted(), insert: insert))
    } else if insert {
      statement = try rows.preparedInsert ?? db.prepare(rows.insert)
      rows.preparedInsert = statement
    } else {
      statement = try rows.preparedUpdate ?? db.prepare(rows.update)
      rows.preparedUpdate = statement
    }
    var index = 1
    if insert {
      try statement.bind(object.primaryKey, at: 1)
      try statement.bind(rows.entityNumber, at: 2)
      try statement.bind(Int64(1), at: 3)
      index = 4
    }
    for (_, source) in rows.columns {
      switch source {
      case .attribute(let slot):
        if let value = object.attributes[slot: slot] {
          try statement.bind(SQLValues.sqlite(value), at: index)
        } else {
          try statement.bindNull(at: index)
        }
      case .toOne(let name):
        if let target = object.toOne[name] {
          try statement.bind(target.primaryKey, at: index)
        } else {
          try statement.bindNull(at: index)
        }
      case .toOneEntity(let name):
        if let number = object.toOne[name].flatMap({ layout.entityNumbers[$0.entity] }) {
          try statement.bind(Int64(number), at: index)
        } else {
          try statement.bindNull(at: index)
        }
      }
      index += 1
    }
    for (_, key) in orderKeys.sorted(by: { $0.key < $1.key }) {
      try statement.bind(key, at: index)
      index += 1
    }
    if insert {
      try statement.run()
      return true
    }
    try statement.bind(object.version + 1, at: index)
    try statement.bind(object.primaryKey, at: index + 1)
    try statement.bind(object.version, at: index + 2)
    try statement.run()
    return db.changes == 1
  }

  private func writeJoins(_ db: Database) throws {
    for pair in joinDeletes {
      guard let join = layout.joins.first(where: { $0.name == pair.table }) else { continue }
      let statement = try statements.statement(
        "DELETE FROM \(join.name) WHERE \(join.sourceColumn) = ? AND \(join.destinationColumn) = ?")
      try statement.bind([.integer(pair.source), .integer(pair.destination)])
      try statement.run()
    }
    for pair in joinInserts {
      guard let join = layout.joins.first(where: { $0.name == pair.table }) else { continue }
      let statement = try statements.statement(
        "INSERT OR IGNORE INTO \(join.name) (\(join.sourceColumn), \(join.destinationColumn)) VALUES (?, ?)"
      )
      try statement.bind([.integer(pair.source), .integer(pair.destination)])
      try statement.run()
    }
    // Ordered many-to-many: the order column follows the owner's list.
    for membership in reordered {
      guard let owner = registered[membership.owner], !owner.isDeleted,
        let (join, ownerSide) = try? joinTable(for: owner.entity, membership.relationship),
        let orderColumn = join.orderColumn
      else { continue }
      for (position, member) in try members(of: owner, membership.relationship).enumerated() {
        let (source, destination) =
          ownerSide ? (owner.primaryKey, member.primaryKey) : (member.primaryKey, owner.primaryKey)
        let statement = try statements.statement(
          "UPDATE \(join.name) SET \(orderColumn) = ? WHERE \(join.sourceColumn) = ? AND \(join.destinationColumn) = ?"
        )
        try statement.bind([.integer(Int64(position + 1)), .integer(source), .integer(destination)])
        try statement.run()
      }
    }
  }

  private func writeMaxKeys(_ db: Database) throws {
    var highest: [String: Int64] = [:]
    for reference in inserted {
      guard let root = model.root(of: reference.entity)?.name else { continue }
      highest[root] = max(highest[root] ?? 0, reference.primaryKey)
    }
    for (root, key) in highest { try raiseMaxKey(to: key, of: root) }
  }

  /// Moves `Z_PRIMARYKEY.Z_MAX` of `root`'s hierarchy up to `key`, if it is below it.
  func raiseMaxKey(to key: Int64, of root: String) throws {
    let statement = try statements.statement(
      "UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?")
    try statement.bind([.integer(key), .integer(Int64(layout.entityNumbers[root] ?? 0))])
    try statement.run()
  }

  private func clearPendingChanges() {
    clearInserted()
    updated.removeAll()
    deleted.removeAll()
    joinInserts.removeAll()
    joinDeletes.removeAll()
    reordered.removeAll()
    releasedMembers.removeAll()
    acceptedEmpty.removeAll()
    transientChanges.removeAll()
    clearExtendedChangeList()
  }

  // MARK: Rolling back

  /// Discards every pending change: inserted objects become deleted, every other object gets
  /// its stored values back.
  public func rollback() {
    undoManager?.removeAllActions()
    for reference in inserted { registered[reference]?.isDeleted = true }
    for reference in inserted { registered.removeValue(forKey: reference) }
    clearPendingChanges()
    for object in registered.values {
      object.toMany.removeAll()
      // An object whose row cannot be read keeps its state; one whose row is gone is deleted.
      let fresh: ObjectRecord?
      do {
        fresh = try storedRecord(of: object)
      } catch {
        continue
      }
      object.transients.removeAll()
      if let fresh {
        adopt(fresh, into: object)
      } else {
        object.isDeleted = true
      }
      try? runHooks(.didTurnIntoFault, object)
    }
  }
}
