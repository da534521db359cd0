import ObjectModel
import SQLite

extension ObjectContext {
  /// Deletes `object`, following each relationship's delete rule: cascade deletes the
  /// destination objects too, nullify removes the object from the destinations' inverses, no
  /// action and deny leave the destinations as they are. As in Core Data, a Deny rule is
  /// enforced when the context saves: ``save()`` refuses while a deleted object's Deny
  /// relationship still holds an object that is not deleted too.
  /// - Throws: ``StoreError`` when the object cannot be changed (a read-only context).
  public func delete(_ object: ManagedObject) throws(StoreError) {
    guard !object.isDeleted else { return }
    try checkChangeable(object)
    // Everything cascading deletes reaches, before anything changes.
    var closure = [object.reference]
    var doomed = Set(closure)
    var index = 0
    while index < closure.count {
      let current = try self.object(with: closure[index])
      index += 1
      for relationship in model.relationships(of: current.entity)
      where relationship.deleteRule == .cascade && !relationship.isTransient {
        for target in try targets(of: current, relationship) where doomed.insert(target).inserted {
          closure.append(target)
        }
      }
    }
    let step = try undoStep { () throws(StoreError) in .delete(try deletedStates(closure)) }
    defer { step.end() }
    for reference in closure {
      let current = try self.object(with: reference)
      for relationship in model.relationships(of: current.entity) where !relationship.isTransient {
        let inverse = model.inverse(of: relationship)
        let isManyToMany = relationship.isToMany && (inverse?.isToMany ?? false)
        // Deny leaves the destinations for the save to judge.
        guard relationship.deleteRule != .deny,
          relationship.deleteRule != .noAction || isManyToMany
        else { continue }
        for target in try targets(of: current, relationship) where !doomed.contains(target) {
          if relationship.isToMany {
            try removeMember(target, from: current, relationship.name)
          } else {
            try setToOne(of: current, relationship.name, to: nil)
          }
        }
      }
    }
    for reference in closure {
      registered[reference]?.isDeleted = true
      updated.remove(reference)
      if unmarkInserted(reference) {
        registered.removeValue(forKey: reference)
        joinInserts = joinInserts.filter { !involves($0, reference) }
      } else {
        deleted.insert(reference)
      }
    }
    step.commit()
  }

  /// The first object a deleted object's Deny relationship still holds that is not deleted
  /// too, with the relationship: what makes ``save()`` refuse.
  func deniedDeletion() throws(StoreError) -> (
    ManagedObject, RelationshipDescription, ObjectReference
  )? {
    for reference in deleted.sorted(by: Self.stableOrder) {
      guard let object = registered[reference] else { continue }
      for relationship in model.relationships(of: object.entity)
      where relationship.deleteRule == .deny && !relationship.isTransient {
        for target in try targets(of: object, relationship)
        where !deleted.contains(target) && registered[target]?.isDeleted != true {
          return (object, relationship, target)
        }
      }
    }
    return nil
  }

  private func targets(of object: ManagedObject, _ relationship: RelationshipDescription)
    throws(StoreError)
    -> [ObjectReference]
  {
    if relationship.isToMany {
      return try members(of: object, relationship.name)
    }
    return object.toOne[relationship.name].map { [$0] } ?? []
  }

}
