import ObjectModel
import SQLite

extension ObjectContext {
  /// Deletes `object`, following each relationship's delete rule: cascade deletes the
  /// destination objects too, nullify removes the object from the destinations' inverses, deny
  /// refuses while the relationship is not empty, no action leaves the destinations as they are.
  /// - Throws: ``StoreError`` (``StoreError/Kind/deleteDenied``) naming the object and the
  ///   relationship when a Deny rule refuses; nothing is changed then.
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
    for reference in closure {
      let current = try self.object(with: reference)
      for relationship in model.relationships(of: current.entity)
      where relationship.deleteRule == .deny && !relationship.isTransient {
        let blocking = try targets(of: current, relationship).filter { !doomed.contains($0) }
        if let first = blocking.first {
          throw fail(
            .deleteDenied,
            "cannot delete \(current): \(current.entity).\(relationship.name) still holds \(first) (delete rule Deny)"
          )
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
        guard relationship.deleteRule != .noAction || isManyToMany else { continue }
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
      if inserted.remove(reference) != nil {
        registered.removeValue(forKey: reference)
        joinInserts = joinInserts.filter { !involves($0, reference) }
      } else {
        deleted.insert(reference)
      }
    }
    step.commit()
  }

  private func targets(of object: ManagedObject, _ relationship: RelationshipDescription)
    throws(StoreError)
    -> [ObjectReference]
  {
    if relationship.isToMany {
      guard model.inverse(of: relationship) != nil else { return [] }
      return try members(of: object, relationship.name)
    }
    return object.toOne[relationship.name].map { [$0] } ?? []
  }

}
