import Foundation
import ObjectModel
import SQLite

extension ManagedObject {
  /// Whether the object was inserted and is not saved yet (`isInserted` in Core Data).
  public var isInserted: Bool { isPendingInsert }

  /// Whether the object, stored already, has unsaved changes: values, relationships (its own
  /// or its to-many members', a one-to-many whose members were moved to or from it included),
  /// or transient values (`isUpdated` in Core Data). It agrees with ``changedValues()``: a
  /// to-many that lists is an update.
  public var isUpdated: Bool {
    guard !isInserted, !context.deleted.contains(reference) else { return false }
    if context.updated.contains(reference) || context.transientChanges.contains(reference)
      || context.hasMembershipChanges(reference)
    {
      return true
    }
    // Members moved in memory (their to-one set): an update when the members now differ from
    // the stored ones; one whose stored members cannot be read may have changed.
    return context.model.relationships(of: entity).contains { relationship in
      guard relationship.isToMany && !relationship.isTransient,
        context.membersMayHaveChanged(of: self, relationship)
      else { return false }
      // `try?` would flatten "no change" and "cannot tell" into one nil.
      do { return try changedMembers(relationship) != nil } catch { return true }
    }
  }

  /// Whether the object is inserted, updated or deleted and not saved yet.
  public var hasChanges: Bool { isInserted || isUpdated || context.deleted.contains(reference) }

  /// The persistent properties whose values differ from those last read or saved, with their
  /// values now, as Core Data's `changedValues()`: attributes, to-one relationships, and to-many
  /// relationships whose members differ from the stored ones. Extended attributes reach their
  /// bucket attribute when the context saves.
  /// - Throws: ``StoreError`` when the stored members cannot be read.
  public func changedValues() throws(StoreError) -> [String: PropertyValue] {
    var result: [String: PropertyValue] = [:]
    for attribute in context.model.attributes(of: entity) where attribute.isStored {
      let name = attribute.name
      if attributes[name] != committed[name] { result[name] = .attribute(attributes[name]) }
    }
    for relationship in context.model.relationships(of: entity) where !relationship.isTransient {
      let name = relationship.name
      if !relationship.isToMany {
        if toOne[name] != committedToOne[name] { result[name] = .toOne(toOne[name]) }
        continue
      }
      // A stored object's members change only with links made in memory.
      guard isInserted || context.membersMayHaveChanged(of: self, relationship) else { continue }
      if let now = try changedMembers(relationship) { result[name] = .toMany(now) }
    }
    return result
  }

  /// The members of the to-many `relationship` now, when they differ from the stored ones
  /// (in order, for an ordered relationship); nil when they are the same.
  private func changedMembers(_ relationship: RelationshipDescription) throws(StoreError)
    -> [ObjectReference]?
  {
    let now = try context.members(of: self, relationship.name)
    let stored = isInserted ? [] : try context.storedMembers(of: self, relationship)
    let differ = relationship.isOrdered ? now != stored : Set(now) != Set(stored)
    return differ ? now : nil
  }

  /// The values of `keys` (every persistent property when nil) as last read from or written to
  /// the store, unsaved changes left out, as Core Data's `committedValues(forKeys:)`.
  /// - Throws: ``StoreError`` naming a key the entity does not have, or when the stored members
  ///   cannot be read.
  public func committedValues(forKeys keys: [String]? = nil) throws(StoreError)
    -> [String: PropertyValue]
  {
    let model = context.model
    let attributes = model.attributes(of: entity).filter(\.isStored)
    let relationships = model.relationships(of: entity).filter { !$0.isTransient }
    var result: [String: PropertyValue] = [:]
    for key in keys ?? (attributes.map(\.name) + relationships.map(\.name)) {
      if attributes.contains(where: { $0.name == key }) {
        result[key] = .attribute(committed[key])
      } else if let relationship = relationships.first(where: { $0.name == key }) {
        if relationship.isToMany {
          result[key] = .toMany(isInserted ? [] : try context.storedMembers(of: self, relationship))
        } else {
          result[key] = .toOne(committedToOne[key])
        }
      } else {
        throw context.fail(.invalidValue, "\(entity) has no persistent property \(key)")
      }
    }
    return result
  }
}

extension ObjectContext {
  /// The objects inserted and not saved yet.
  public var insertedObjects: Set<ManagedObject> {
    Set(inserted.compactMap { registered[$0] })
  }

  /// The stored objects with unsaved changes (``ManagedObject/isUpdated``).
  public var updatedObjects: Set<ManagedObject> {
    Set(registered.values.filter(\.isUpdated))
  }

  /// The objects deleted and not saved yet.
  public var deletedObjects: Set<ManagedObject> {
    Set(deleted.compactMap { registered[$0] })
  }

  /// Brings this context's objects up to date with a save another context made on the same
  /// store (its ``Notification/Name/objectContextDidSave`` notification), as Core Data's
  /// `mergeChanges(fromContextDidSave:)`: objects it deleted leave this context (their
  /// `didTurnIntoFault` hooks run), objects it changed are read again with this context's own
  /// unsaved changes kept (``refresh(_:mergeChanges:)``), and to-many members are read again
  /// when next asked for. Objects it inserted are found by the next fetch.
  /// - Throws: ``StoreError`` when the store cannot be read.
  public func mergeChanges(fromContextDidSave changes: ContextDidSave) throws(StoreError) {
    for reference in changes.deleted.sorted(by: Self.stableOrder) {
      guard let object = registered.removeValue(forKey: reference) else { continue }
      object.isDeleted = true
      updated.remove(reference)
      deleted.remove(reference)
      transientChanges.remove(reference)
      try runHooks(.didTurnIntoFault, object)
    }
    for reference in changes.updated.union(changes.inserted).sorted(by: Self.stableOrder) {
      guard let object = registered[reference], !inserted.contains(reference) else { continue }
      try refresh(object, mergeChanges: true)
    }
    for object in registered.values
    where !inserted.contains(object.reference) && !hasMembershipChanges(object.reference) {
      object.toMany.removeAll()
    }
  }

  /// ``mergeChanges(fromContextDidSave:)`` with the changes a did-save notification carries.
  /// - Throws: ``StoreError`` when `notification` is not a did-save notification, or as the
  ///   merge does.
  public func mergeChanges(fromContextDidSave notification: Notification) throws(StoreError) {
    guard let changes = ContextDidSave(notification) else {
      throw fail(.invalidValue, "\(notification.name.rawValue) is not a did-save notification")
    }
    try mergeChanges(fromContextDidSave: changes)
  }

  /// What the pending changes will have saved, for the did-save notification.
  func pendingSaveChanges() -> ContextDidSave {
    // Shared with the pending sets, not copied, unless something must be added or removed.
    var changed = updated
    if !joinInserts.isEmpty || !joinDeletes.isEmpty || !reordered.isEmpty {
      for reference in registered.keys
      where !inserted.contains(reference) && hasMembershipChanges(reference) {
        changed.insert(reference)
      }
    }
    if !deleted.isEmpty { changed.subtract(deleted) }
    return ContextDidSave(inserted: inserted, updated: changed, deleted: deleted)
  }

  /// Whether a many-to-many link of `reference` was made or broken, or an ordered relationship
  /// of its reordered, in memory.
  func hasMembershipChanges(_ reference: ObjectReference) -> Bool {
    if !reordered.isEmpty {
      for relationship in model.relationships(of: reference.entity) {
        if reordered.contains(OrderedMembership(owner: reference, relationship: relationship.name))
        {
          return true
        }
      }
    }
    guard !joinInserts.isEmpty || !joinDeletes.isEmpty else { return false }
    let lineage = Set(model.lineage(of: reference.entity).map(\.name))
    let key = reference.primaryKey
    for join in layout.joins {
      if lineage.contains(join.entity)
        && (joinInserts.hasSource(join.name, key) || joinDeletes.hasSource(join.name, key))
      {
        return true
      }
      if lineage.contains(join.relationship.destination)
        && (joinInserts.hasDestination(join.name, key)
          || joinDeletes.hasDestination(join.name, key))
      {
        return true
      }
    }
    return false
  }

  /// Whether the members of `object`'s to-many `relationship` may differ from the stored ones:
  /// a link made or broken in memory, here or on an object that points here.
  func membersMayHaveChanged(of object: ManagedObject, _ relationship: RelationshipDescription)
    -> Bool
  {
    if hasMembershipChanges(object.reference) { return true }
    guard let inverse = model.inverse(of: relationship), !inverse.isToMany else { return false }
    return registered.pointingNowOrBefore(at: object.reference, through: inverse.name)
      .contains { member in
        member.toOne[inverse.name] != member.committedToOne[inverse.name] || member.isDeleted
      }
  }

  /// The members of `object`'s to-many `relationship` as the store has them, in order (ordered
  /// relationships) or by primary key.
  func storedMembers(of object: ManagedObject, _ relationship: RelationshipDescription)
    throws(StoreError) -> [ObjectReference]
  {
    let inverse = model.inverse(of: relationship)
    let sql: String
    if inverse == nil {
      guard let place = layout.ownerColumns(ofToMany: relationship.name, in: object.entity) else {
        throw fail(
          .unsupported,
          "\(object.entity).\(relationship.name) has no inverse, and the store has no column keeping its members"
        )
      }
      sql =
        "SELECT Z_PK, Z_ENT FROM \(place.table.name) WHERE \(place.column) = ? ORDER BY \(place.orderColumn.map { "\($0), " } ?? "")Z_PK"
    } else if let inverse, !inverse.isToMany {
      let table = try table(for: relationship.destination)
      guard let column = layout.foreignKey(ofToOne: inverse.name, in: relationship.destination)
      else {
        throw fail(
          .invalidValue, "the store has no column for \(relationship.destination).\(inverse.name)")
      }
      let order = layout.orderColumn(ofToOne: inverse, in: relationship.destination)
      sql =
        "SELECT Z_PK, Z_ENT FROM \(table.name) WHERE \(column) = ? ORDER BY \(order.map { "\($0), " } ?? "")Z_PK"
    } else {
      let (join, ownerSide) = try joinTable(for: object.entity, relationship.name)
      let mine = ownerSide ? join.sourceColumn : join.destinationColumn
      let theirs = ownerSide ? join.destinationColumn : join.sourceColumn
      let members = try table(for: relationship.destination)
      let order = ownerSide && relationship.isOrdered ? join.orderColumn.map { "j.\($0), " } : nil
      sql =
        "SELECT m.Z_PK, m.Z_ENT FROM \(join.name) j JOIN \(members.name) m ON m.Z_PK = j.\(theirs) WHERE j.\(mine) = ? ORDER BY \(order ?? "")m.Z_PK"
    }
    do {
      let statement = try statements.statement(sql)
      try statement.bind(.integer(object.primaryKey), at: 1)
      return try statement.allRows().compactMap { row in
        guard let key = row[0].integerValue, let number = row[1].integerValue,
          let entity = entityNames[Int(number)]
        else { return nil }
        return ObjectReference(entity: entity, primaryKey: key)
      }
    } catch {
      throw wrap(error, "cannot read the stored members of \(object).\(relationship.name)")
    }
  }
}
