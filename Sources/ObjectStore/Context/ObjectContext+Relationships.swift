import ObjectModel
import SQLite

extension ObjectContext {
  /// A to-many relationship whose order must be written.
  struct OrderedMembership: Hashable {
    let owner: ObjectReference
    let relationship: String
  }

  func relationship(_ name: String, of entity: String) throws(StoreError) -> RelationshipDescription
  {
    guard let relationship = model.relationships(of: entity).first(where: { $0.name == name })
    else {
      throw fail(.invalidValue, "\(entity) has no relationship \(name)")
    }
    guard !relationship.isTransient else {
      throw fail(
        .unsupported,
        "\(entity).\(name) is transient; the context does not keep transient relationships")
    }
    return relationship
  }

  func relatedObject(of object: ManagedObject, _ name: String) throws(StoreError) -> ManagedObject?
  {
    let relationship = try relationship(name, of: object.entity)
    guard !relationship.isToMany else {
      throw fail(.invalidValue, "\(object.entity).\(name) is to-many")
    }
    return try object.toOne[name].map { reference throws(StoreError) in
      try self.object(with: reference)
    }
  }

  /// The members of a to-many relationship, loaded from the store on first use and kept in
  /// step with in-memory changes afterwards.
  func members(of object: ManagedObject, _ name: String) throws(StoreError) -> [ObjectReference] {
    if let loaded = object.toMany[name] { return loaded }
    let relationship = try relationship(name, of: object.entity)
    guard relationship.isToMany else {
      throw fail(.invalidValue, "\(object.entity).\(name) is to-one")
    }
    guard let inverse = model.inverse(of: relationship) else {
      let members = try ownedMembers(of: object, relationship)
      object.toMany[name] = members
      return members
    }
    var members: [ObjectReference]
    let destinations = Set(model.hierarchy(from: relationship.destination).map(\.name))
    if !inverse.isToMany {
      // One-to-many: the members are the objects whose to-one points here.
      let table = try table(for: relationship.destination)
      let column = layout.foreignKey(ofToOne: inverse.name, in: relationship.destination)
      var found: [ObjectReference: ManagedObject] = [:]
      if let column, !inserted.contains(object.reference) {
        for member in try load(
          table, filter: "\(column) = ?", bindings: [.integer(object.primaryKey)])
        {
          found[member.reference] = member
        }
      }
      // In memory, objects may point here that the store does not have so, and the stored
      // ones may point elsewhere now: the registered object is the one that counts.
      for reference in Array(found.keys) {
        if let candidate = registered[reference] { found[reference] = candidate }
      }
      for candidate in registered.pointing(at: object.reference, through: inverse.name)
      where destinations.contains(candidate.entity) {
        found[candidate.reference] = candidate
      }
      // Order keys are kept under the entity that declares the relationship: a sub-entity's
      // objects inherit them.
      let orderColumn = layout.orderColumn(ofToOne: inverse, in: relationship.destination)
      var order: [ObjectReference: Int64] = [:]
      if relationship.isOrdered, let orderColumn {
        // Keys are unique within the destination's hierarchy.
        let foundByKey = Dictionary(
          found.keys.map { ($0.primaryKey, $0) }, uniquingKeysWith: { first, _ in first })
        do {
          let statement = try statements.statement(
            "SELECT Z_PK, \(orderColumn) FROM \(table.name) WHERE \(column ?? "Z_PK") = ?")
          try statement.bind(.integer(object.primaryKey), at: 1)
          for row in try statement.allRows() {
            if let pk = row[0].integerValue, let key = row[1].integerValue,
              let reference = foundByKey[pk]
            {
              order[reference] = key
            }
          }
        } catch {
          throw wrap(error, "cannot read the order of \(object.entity).\(name)")
        }
      }
      members = found.values.filter { !$0.isDeleted && $0.toOne[inverse.name] == object.reference }
        .map(\.reference)
      members.sort {
        (order[$0] ?? Int64.max, $0.primaryKey) < (order[$1] ?? Int64.max, $1.primaryKey)
      }
    } else {
      // Many-to-many: rows of the join table, plus pending pairs.
      let (join, ownerSide) = try joinTable(for: object.entity, name)
      var keys: [Int64] = []
      if !inserted.contains(object.reference) {
        let mine = ownerSide ? join.sourceColumn : join.destinationColumn
        let theirs = ownerSide ? join.destinationColumn : join.sourceColumn
        // Rows without an order key come after the others, as in a one-to-many.
        let orderBy = join.orderColumn.map { "\($0) IS NULL, \($0), \(theirs)" } ?? theirs
        do {
          let statement = try statements.statement(
            "SELECT \(theirs) FROM \(join.name) WHERE \(mine) = ? ORDER BY \(orderBy)")
          try statement.bind(.integer(object.primaryKey), at: 1)
          keys = try statement.allRows().compactMap { $0[0].integerValue }
        } catch {
          throw wrap(error, "cannot read \(join.name)")
        }
      }
      func pending(_ pair: JoinPair) -> Int64? {
        guard pair.table == join.name else { return nil }
        if ownerSide { return pair.source == object.primaryKey ? pair.destination : nil }
        return pair.destination == object.primaryKey ? pair.source : nil
      }
      let removed = Set(joinDeletes.compactMap(pending))
      keys = keys.filter { !removed.contains($0) } + joinInserts.compactMap(pending).sorted()
      members = []
      let table = try table(for: relationship.destination)
      for key in keys {
        if let known = destinations.lazy.map({ ObjectReference(entity: $0, primaryKey: key) })
          .first(where: { self.registered[$0] != nil })
        {
          members.append(known)
        } else if let loaded = try load(table, filter: "Z_PK = ?", bindings: [.integer(key)]).first
        {
          members.append(loaded.reference)
        }
      }
      members = members.filter { registered[$0]?.isDeleted != true }
    }
    object.toMany[name] = members
    return members
  }
  /// The members of a to-many relationship without an inverse, which Core Data keeps as the
  /// owner's key in a column of the destination's rows (``StoreLayout/ownerColumns(ofToMany:in:)``):
  /// the rows holding this object's key, in their order when ordered, less those another
  /// owner took in memory.
  private func ownedMembers(of object: ManagedObject, _ relationship: RelationshipDescription)
    throws(StoreError) -> [ObjectReference]
  {
    let name = relationship.name
    guard let place = layout.ownerColumns(ofToMany: name, in: object.entity) else {
      throw fail(
        .unsupported,
        "\(object.entity).\(name) has no inverse, and the store has no column keeping its members")
    }
    var found: [ManagedObject] = []
    if !inserted.contains(object.reference) {
      found = try load(
        place.table, filter: "\(place.column) = ?", bindings: [.integer(object.primaryKey)])
    }
    var order: [ObjectReference: Int64] = [:]
    if let orderColumn = place.orderColumn, !found.isEmpty {
      do {
        let statement = try statements.statement(
          "SELECT Z_PK, \(orderColumn) FROM \(place.table.name) WHERE \(place.column) = ?")
        try statement.bind(.integer(object.primaryKey), at: 1)
        var keys: [Int64: Int64] = [:]
        for row in try statement.allRows() {
          if let pk = row[0].integerValue, let key = row[1].integerValue { keys[pk] = key }
        }
        for member in found { order[member.reference] = keys[member.primaryKey] }
      } catch {
        throw wrap(error, "cannot read the order of \(object.entity).\(name)")
      }
    }
    let takenElsewhere = Set(
      reordered.filter { $0.relationship == name && $0.owner != object.reference }
        .flatMap { registered[$0.owner]?.toMany[name] ?? [] })
    return found.filter { !$0.isDeleted && !takenElsewhere.contains($0.reference) }
      .map(\.reference)
      .sorted {
        (order[$0] ?? Int64.max, $0.primaryKey) < (order[$1] ?? Int64.max, $1.primaryKey)
      }
  }

  /// Whether `member` belongs to an object through the to-many relationship `name` of
  /// `entity`, which has no inverse: as changed in memory, else as the store has it.
  package func hasOwner(_ member: ManagedObject, through name: String, of entity: String)
    throws(StoreError) -> Bool
  {
    for membership in reordered where membership.relationship == name {
      if registered[membership.owner]?.toMany[name]?.contains(member.reference) == true {
        return true
      }
    }
    if releasedMembers[member.reference]?.contains(name) == true { return false }
    guard let place = layout.ownerColumns(ofToMany: name, in: entity) else { return false }
    return try storedOwnerKey(of: member.reference, in: place) != nil
  }

  /// The owner's primary key that `member`'s row holds in an inverse-less to-many's column.
  private func storedOwnerKey(
    of member: ObjectReference,
    in place: (table: StoreLayout.Table, column: String, orderColumn: String?)
  ) throws(StoreError) -> Int64? {
    do {
      let statement = try statements.statement(
        "SELECT \(place.column) FROM \(place.table.name) WHERE Z_PK = ?")
      try statement.bind(.integer(member.primaryKey), at: 1)
      return try statement.allRows().first?[0].integerValue
    } catch {
      throw wrap(error, "cannot read the owner of \(member)")
    }
  }

  /// Adds `member` to the inverse-less to-many `name` of `object`: it leaves whichever owner
  /// held it (a destination row has one owner's key), and the owners' columns are written at
  /// the save (``OrderedMembership`` in `reordered`).
  private func addOwnedMember(
    _ member: ObjectReference, to object: ManagedObject, _ name: String
  ) throws(StoreError) {
    // Owners changed in memory, then the one the store names.
    for membership in reordered where membership.relationship == name {
      registered[membership.owner]?.toMany[name]?.removeAll { $0 == member }
    }
    if let place = layout.ownerColumns(ofToMany: name, in: object.entity),
      let declaring = model.lineage(of: object.entity).first(where: {
        $0.relationship(named: name) != nil
      })
    {
      let stored = try storedOwnerKey(of: member, in: place)
      for entity in model.hierarchy(from: declaring.name) {
        guard let stored, stored != object.primaryKey || entity.name != object.entity,
          let previous = registered[ObjectReference(entity: entity.name, primaryKey: stored)],
          previous.toMany[name]?.contains(member) == true
        else { continue }
        previous.toMany[name]?.removeAll { $0 == member }
        reordered.insert(OrderedMembership(owner: previous.reference, relationship: name))
      }
    }
    object.toMany[name]?.append(member)
    releasedMembers[member, default: []].remove(name)
    reordered.insert(OrderedMembership(owner: object.reference, relationship: name))
  }

  func setToOne(of object: ManagedObject, _ name: String, to target: ObjectReference?)
    throws(StoreError)
  {
    try checkChangeable(object)
    let relationship = try relationship(name, of: object.entity)
    guard !relationship.isToMany else {
      throw fail(.invalidValue, "\(object.entity).\(name) is to-many")
    }
    if let target {
      guard
        model.lineage(of: target.entity).contains(where: { $0.name == relationship.destination })
      else {
        throw fail(
          .invalidValue,
          "\(object.entity).\(name) points to \(relationship.destination), not \(target.entity)")
      }
    }
    let old = object.toOne[name]
    guard old != target else { return }
    let step = undoStep { .toOne(object.reference, name, old) }
    defer { step.end() }
    object.toOne[name] = target
    object.changedKeys.insert(name)
    markUpdated(object)
    guard let inverse = model.inverse(of: relationship) else { return }
    if let old, let previous = registered[old] ?? (try? self.object(with: old)) {
      if inverse.isToMany {
        previous.toMany[inverse.name]?.removeAll { $0 == object.reference }
        if inverse.isOrdered {
          reordered.insert(OrderedMembership(owner: previous.reference, relationship: inverse.name))
        }
      } else if previous.toOne[inverse.name] == object.reference {
        previous.toOne[inverse.name] = nil
        previous.changedKeys.insert(inverse.name)
        markUpdated(previous)
      }
    }
    if let target {
      let destination = try self.object(with: target)
      if inverse.isToMany {
        if destination.toMany[inverse.name] != nil,
          !destination.toMany[inverse.name]!.contains(object.reference)
        {
          destination.toMany[inverse.name]!.append(object.reference)
        }
        if inverse.isOrdered {
          reordered.insert(OrderedMembership(owner: target, relationship: inverse.name))
        }
      } else {
        // One-to-one: whatever pointed at the destination lets go of it.
        if let stolen = destination.toOne[inverse.name], stolen != object.reference,
          let holder = registered[stolen] ?? (try? self.object(with: stolen))
        {
          holder.toOne[name] = nil
          holder.changedKeys.insert(name)
          markUpdated(holder)
        }
        destination.toOne[inverse.name] = object.reference
        destination.changedKeys.insert(inverse.name)
        markUpdated(destination)
      }
    }
    step.commit()
  }

  func addMember(_ member: ObjectReference, to object: ManagedObject, _ name: String)
    throws(StoreError)
  {
    try checkChangeable(object)
    let relationship = try relationship(name, of: object.entity)
    guard relationship.isToMany else {
      throw fail(.invalidValue, "\(object.entity).\(name) is not a to-many relationship")
    }
    guard model.lineage(of: member.entity).contains(where: { $0.name == relationship.destination })
    else {
      throw fail(
        .invalidValue,
        "\(object.entity).\(name) holds \(relationship.destination), not \(member.entity)")
    }
    let current = try members(of: object, name)
    guard !(object.toMany[name]?.contains(member) ?? false) else { return }
    let step = undoStep { .members(object.reference, name, current) }
    defer { step.end() }
    let other = try self.object(with: member)
    guard let inverse = model.inverse(of: relationship) else {
      try addOwnedMember(member, to: object, name)
      markUpdated(other)
      step.commit()
      return
    }
    if !inverse.isToMany {
      try setToOne(of: other, inverse.name, to: object.reference)
      if !(object.toMany[name]?.contains(member) ?? false) { object.toMany[name]?.append(member) }
    } else {
      let pair = try joinPair(object, name, member)
      if joinDeletes.remove(pair) == nil { joinInserts.insert(pair) }
      object.toMany[name]?.append(member)
      if other.toMany[inverse.name] != nil, !other.toMany[inverse.name]!.contains(object.reference)
      {
        other.toMany[inverse.name]!.append(object.reference)
      }
      if inverse.isOrdered {
        reordered.insert(OrderedMembership(owner: member, relationship: inverse.name))
      }
    }
    if relationship.isOrdered {
      reordered.insert(OrderedMembership(owner: object.reference, relationship: name))
    }
    step.commit()
  }

  func removeMember(_ member: ObjectReference, from object: ManagedObject, _ name: String)
    throws(StoreError)
  {
    let relationship = try relationship(name, of: object.entity)
    guard relationship.isToMany else {
      throw fail(.invalidValue, "\(object.entity).\(name) is not a to-many relationship")
    }
    let current = try members(of: object, name)
    guard current.contains(member) else { return }
    let step = undoStep { .members(object.reference, name, current) }
    defer { step.end() }
    let other = try self.object(with: member)
    guard let inverse = model.inverse(of: relationship) else {
      object.toMany[name]?.removeAll { $0 == member }
      releasedMembers[member, default: []].insert(name)
      reordered.insert(OrderedMembership(owner: object.reference, relationship: name))
      markUpdated(other)
      step.commit()
      return
    }
    if !inverse.isToMany {
      try setToOne(of: other, inverse.name, to: nil)
    } else {
      let pair = try joinPair(object, name, member)
      if joinInserts.remove(pair) == nil { joinDeletes.insert(pair) }
      other.toMany[inverse.name]?.removeAll { $0 == object.reference }
    }
    object.toMany[name]?.removeAll { $0 == member }
    if relationship.isOrdered {
      reordered.insert(OrderedMembership(owner: object.reference, relationship: name))
    }
    step.commit()
  }
}
