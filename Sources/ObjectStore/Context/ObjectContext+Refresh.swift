import ObjectModel
import SQLite

extension ObjectContext {
  /// Which local changes a refresh with merge keeps, for ordinary and extended attributes
  /// alike.
  public enum MergeSemantics: Sendable {
    /// Core Data's: a key is changed while its value differs from the stored one, so a local
    /// change that another writer happens to store too stops being a change (and the next
    /// value they store replaces it: the "hijacked change" of the extended-attributes
    /// write-up).
    case coreData
    /// A key set locally stays set until saved or rolled back, whatever others store.
    case stable
  }

  /// What a save does when another writer changed an object since it was read (its `Z_OPT`
  /// moved on), and when an inserted object holds the values of a uniqueness constraint that
  /// another object holds already: every policy but ``error`` then merges it into that object,
  /// an upsert, as Core Data's policies do: values by the policy, its relationships moved to it.
  public enum MergePolicy: Sendable {
    /// Fail, naming every such object; nothing is written (the default, as Core Data's
    /// `NSErrorMergePolicy`).
    case error
    /// The store's values win: the object's local changes are dropped (`NSRollbackMergePolicy`).
    case storeWins
    /// The object's values win: all of it is written over the store's (`NSOverwriteMergePolicy`).
    case objectWins
    /// Per key: the keys changed here win, the others take the store's values
    /// (`NSMergeByPropertyObjectTrumpMergePolicy`), with the context's ``MergeSemantics``.
    case mergeByKey
  }

  /// Brings `object` up to date with the store.
  ///
  /// Without `mergeChanges` its local changes (attributes, relationships, extended
  /// attributes) are dropped and its stored state read again. With it, the stored state is read
  /// again and the local changes are kept on top of it, key by key; which changes count as
  /// changes is ``mergeSemantics``'s choice. Either way the object's cached state is dropped
  /// (its `didTurnIntoFault` hooks run) and extended attributes are decoded again on next use.
  /// An object not saved yet is left as it is; one another writer deleted becomes deleted here.
  /// - Throws: ``StoreError`` when the store cannot be read, or a hook fails.
  public func refresh(_ object: ManagedObject, mergeChanges: Bool) throws(StoreError) {
    guard !inserted.contains(object.reference), !object.isDeleted else { return }
    let fresh = try storedRecord(of: object)
    let related = relatedCaches(of: object)
    guard let fresh, fresh.entity == object.entity else {
      object.isDeleted = true
      updated.remove(object.reference)
      registered.removeValue(forKey: object.reference)
      forgetCaches(related)
      try runHooks(.didTurnIntoFault, object)
      return
    }
    if mergeChanges {
      merge(fresh, into: object)
    } else {
      adopt(fresh, into: object)
      updated.remove(object.reference)
      joinInserts = joinInserts.filter { !involves($0, object.reference) }
      joinDeletes = joinDeletes.filter { !involves($0, object.reference) }
      reordered = reordered.filter { $0.owner != object.reference }
    }
    forgetCaches(related.union(relatedCaches(of: object)))
    try runHooks(.didTurnIntoFault, object)
  }

  /// The object's row as stored now (nil when it is gone), without registering anything.
  func storedRecord(of object: ManagedObject) throws(StoreError) -> ObjectRecord? {
    try storedRecord(of: object.reference)
  }

  /// The stored state of the object `reference` (its row as the store holds it now); nil
  /// when there is no such row.
  func storedRecord(of reference: ObjectReference) throws(StoreError) -> ObjectRecord? {
    var fresh: ObjectRecord?
    do {
      let reader = try self.reader(of: try table(for: reference.entity), filter: "Z_PK = ?")
      try reader.bind([.integer(reference.primaryKey)])
      try reader.readRows { fresh = $0 }
    } catch {
      throw wrap(error, "cannot read \(reference) again")
    }
    return fresh
  }

  /// Takes the stored state `fresh` as the object's whole state: no local changes remain.
  func adopt(_ fresh: ObjectRecord, into object: ManagedObject) {
    object.attributes = AttributeSlots(fresh.attributes, traits: object.traits)
    object.toOne = fresh.toOne
    object.version = fresh.version
    object.committed = object.attributes
    object.committedToOne = fresh.toOne
    object.changedKeys.removeAll()
    object.toMany.removeAll()
    object.transients.removeAll()
    object.extendedSnapshot = nil
    object.extendedChanges.removeAll()
    object.isDeleted = false
  }

  /// Takes the stored state `fresh` under the object's local changes, key by key.
  private func merge(_ fresh: ObjectRecord, into object: ManagedObject) {
    let bucket = object.traits.bucket
    let stored = AttributeSlots(fresh.attributes, traits: object.traits)
    var attributes = stored
    var changed = Set<String>()
    /// Whether the local value of `key` is a change to keep, as the semantics count changes.
    func isLocalChange<Value: Equatable>(
      _ key: String, _ local: Value?, _ committed: Value?,
      _ stored: Value?
    ) -> Bool {
      switch mergeSemantics {
      case .stable: return object.changedKeys.contains(key)
      case .coreData: return local != committed && local != stored
      }
    }
    for attribute in model.attributes(of: object.entity)
    where !attribute.isTransient && !attribute.isDerived && attribute.name != bucket {
      let key = attribute.name
      let local = object.attributes[key]
      if isLocalChange(key, local, object.committed[key], fresh.attributes[key]) {
        attributes[key] = local
        changed.insert(key)
      }
    }
    // Transient values are the context's own: kept.
    for attribute in model.attributes(of: object.entity) where attribute.isTransient {
      attributes[attribute.name] = object.attributes[attribute.name]
    }
    var toOne = fresh.toOne
    for relationship in model.relationships(of: object.entity)
    where !relationship.isToMany && !relationship.isTransient {
      let key = relationship.name
      let local = object.toOne[key]
      if isLocalChange(key, local, object.committedToOne[key], fresh.toOne[key]) {
        toOne[key] = local
        changed.insert(key)
      }
    }
    object.attributes = attributes
    object.toOne = toOne
    object.version = fresh.version
    object.committed = stored
    object.committedToOne = fresh.toOne
    object.changedKeys = changed
    object.toMany.removeAll()
    object.extendedSnapshot = nil
    if mergeSemantics == .coreData, let bucket {
      // A change equal to what is stored now is no change (Core Data compares values).
      let stored = (try? object.decodedBucket(fresh.attributes[bucket])) ?? .empty
      object.extendedChanges = object.extendedChanges.filter { key, value in
        value != stored[key]
      }
    }
    if changed.isEmpty && object.extendedChanges.isEmpty {
      updated.remove(object.reference)
    } else {
      markUpdated(object)
    }
  }

  /// The objects whose to-many caches list `object` through an inverse, by relationship.
  private func relatedCaches(of object: ManagedObject) -> Set<OrderedMembership> {
    var caches = Set<OrderedMembership>()
    for relationship in model.relationships(of: object.entity) where !relationship.isTransient {
      guard let inverse = model.inverse(of: relationship), inverse.isToMany else { continue }
      if relationship.isToMany {
        for member in object.toMany[relationship.name] ?? [] {
          caches.insert(OrderedMembership(owner: member, relationship: inverse.name))
        }
      } else {
        for target in [object.toOne[relationship.name], object.committedToOne[relationship.name]] {
          if let target {
            caches.insert(OrderedMembership(owner: target, relationship: inverse.name))
          }
        }
      }
    }
    return caches
  }

  private func forgetCaches(_ caches: Set<OrderedMembership>) {
    for cache in caches where !inserted.contains(cache.owner) {
      registered[cache.owner]?.toMany[cache.relationship] = nil
    }
  }

  /// Whether a pending join-table row involves `reference`.
  func involves(_ pair: JoinPair, _ reference: ObjectReference) -> Bool {
    guard let join = layout.joins.first(where: { $0.name == pair.table }) else { return false }
    let lineage = Set(model.lineage(of: reference.entity).map(\.name))
    if lineage.contains(join.entity) && pair.source == reference.primaryKey { return true }
    return lineage.contains(join.relationship.destination)
      && pair.destination == reference.primaryKey
  }
}
