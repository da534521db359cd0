import ObjectModel

extension ObjectContext {
  /// Settles the uniqueness-constraint conflicts of the objects being inserted as Core Data's
  /// merge policies settle them, so that a save upserts: an inserted object whose constraint
  /// values another object already holds (in the store, or inserted before it) is merged into
  /// that object, which stays, and leaves the context.
  ///
  /// - ``MergePolicy/mergeByKey`` (`NSMergeByPropertyObjectTrumpMergePolicy`): the values the
  ///   inserted object holds win; those it leaves empty keep the other object's.
  /// - ``MergePolicy/objectWins`` (`NSOverwriteMergePolicy`): every attribute takes the
  ///   inserted object's value, empty ones included.
  /// - ``MergePolicy/storeWins`` (`NSRollbackMergePolicy`): the other object keeps its values
  ///   and takes only what it has none of.
  ///
  /// Either way the other object gets the inserted one's relationships (its to-one targets
  /// where the policy lets them win, and every member of its to-manys), and whatever pointed at
  /// the inserted object points at the one it merged into. Under ``MergePolicy/error``
  /// nothing is settled: the save fails with the conflict.
  func settleConstraintConflicts() throws(StoreError) {
    guard mergePolicy != .error, hasUniquenessConstraints else { return }
    // One pass in a stable order: each constraint's values are held by the first object to
    // hold them (a stored one, else the first inserted), and a later inserted object holding
    // them merges into it. A stored object changed to another's values is left for the
    // save to refuse.
    var holders: [String: ObjectReference] = [:]
    let candidates = inserted.sorted(by: Self.stableOrder).compactMap { registered[$0] }
    for object in candidates where !object.isDeleted {
      for held in heldConstraints(of: object) {
        var holder = holders[held.key].flatMap { registered[$0] }
        if holder == nil,
          let stored = try storedHolder(
            of: held.attributes, held.values, in: held.owner, besides: object.primaryKey),
          !deleted.contains(stored)
        {
          let found = try self.object(with: stored)
          // A stored object being saved with other values holds them no longer.
          if held.attributes.compactMap({ found.attributes[$0] }) == held.values { holder = found }
        }
        if let holder {
          try merge(object, into: holder)
          holders[held.key] = holder.reference
          break
        }
        holders[held.key] = object.reference
      }
    }
  }

  /// Whether any entity of the model has a uniqueness constraint.
  private var hasUniquenessConstraints: Bool {
    model.entities.contains { !$0.uniquenessConstraints.isEmpty }
  }

  /// Merges inserted `object` into `survivor` under the merge policy, then takes `object`
  /// out of the context.
  private func merge(_ object: ManagedObject, into survivor: ManagedObject) throws(StoreError) {
    let objectTrumps = mergePolicy != .storeWins
    for (slot, attribute) in object.traits.slotAttributes.enumerated()
    where !attribute.isDerived {
      guard let target = survivor.traits.slots[attribute.name] else { continue }
      let value = object.attributes[slot: slot]
      let current = survivor.attributes[slot: target]
      if mergePolicy.upsertTakes(value, over: current) && value != current {
        try setValue(value, slot: target, of: survivor)
      }
    }
    let survivorNames = Set(model.relationships(of: survivor.entity).map(\.name))
    for relationship in model.relationships(of: object.entity)
    where !relationship.isTransient && survivorNames.contains(relationship.name) {
      let name = relationship.name
      if relationship.isToMany {
        for member in try members(of: object, name) {
          try removeMember(member, from: object, name)
          if try !members(of: survivor, name).contains(member) {
            try addMember(member, to: survivor, name)
          }
        }
      } else if let target = object.toOne[name] {
        try setToOne(of: object, name, to: nil)
        if objectTrumps || survivor.toOne[name] == nil {
          try setToOne(of: survivor, name, to: target)
        }
      }
    }
    // What points at the object without an inverse to say so points at the survivor now.
    let lineage = Set(model.lineage(of: object.entity).map(\.name))
    for entity in model.entities {
      for relationship in entity.relationships
      where !relationship.isToMany && relationship.inverse == nil
        && lineage.contains(relationship.destination)
      {
        for holder in registered.pointing(at: object.reference, through: relationship.name) {
          try setToOne(of: holder, relationship.name, to: survivor.reference)
        }
      }
    }
    // Gone as a discarded insert is gone: never written, no longer registered.
    unmarkInserted(object.reference)
    transientChanges.remove(object.reference)
    registered.removeValue(forKey: object.reference)
    object.isDeleted = true
  }
}

extension ObjectContext.MergePolicy {
  /// Whether an upsert takes `value` (the inserted object's or the batch row's) over
  /// `current` (the value of the object already holding the constraint's values):
  /// ``mergeByKey`` a value it has, ``objectWins`` every value, nil too, ``storeWins`` only
  /// where the object has none.
  func upsertTakes(_ value: AttributeValue?, over current: AttributeValue?) -> Bool {
    switch self {
    case .objectWins: true
    case .mergeByKey: value != nil
    case .storeWins, .error: current == nil && value != nil
    }
  }
}
