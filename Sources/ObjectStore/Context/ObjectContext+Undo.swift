import ObjectModel
import PropertyList

/// One recorded change, as what undoes it.
enum UndoAction {
  /// Set an attribute back.
  case attribute(ObjectReference, String, AttributeValue?)
  /// Set a transient value back.
  case transient(ObjectReference, String, (any Sendable)?)
  /// Put an extended key's change layer back (nil: no change; `.some(nil)`: set to nil).
  case extended(ObjectReference, String, PropertyListValue??)
  /// Point a to-one relationship back.
  case toOne(ObjectReference, String, ObjectReference?)
  /// Give a to-many relationship its members back, in order.
  case members(ObjectReference, String, [ObjectReference])
  /// Delete an inserted object.
  case insert(ObjectReference)
  /// Bring deleted objects back with their values and relationships.
  case delete([DeletedObject])
}

/// An object as it was just before a delete, to bring it back.
struct DeletedObject {
  let object: ManagedObject
  let attributes: AttributeSlots
  let toOne: [String: ObjectReference]
  let toMany: [String: [ObjectReference]]
  let transients: [String: any Sendable]
  let extendedChanges: [String: PropertyListValue?]
}

/// A change being made: records what undoes it once the change is done, if it is a top-level
/// change and an undo manager is listening. Changes it makes on the way are not recorded on
/// their own: undoing the top-level change undoes them.
struct UndoStep {
  let context: ObjectContext
  let action: UndoAction?

  /// Records the change (call when it succeeded).
  func commit() {
    if let action { context.undoManager?.register(action) }
  }

  /// Ends the step (call in a `defer`).
  func end() {
    if action != nil { context.undoDepth -= 1 }
  }
}

extension ObjectContext {
  /// Starts a change whose undo `inverse` describes (worked out before the change).
  func undoStep<Failure: Error>(_ inverse: () throws(Failure) -> UndoAction) throws(Failure)
    -> UndoStep
  {
    guard undoManager != nil, undoDepth == 0 else { return UndoStep(context: self, action: nil) }
    let action = try inverse()
    undoDepth += 1
    return UndoStep(context: self, action: action)
  }

  /// Applies a recorded change's undo, which records its own undo (the redo).
  func apply(_ action: UndoAction) throws(StoreError) {
    switch action {
    case .attribute(let reference, let key, let value):
      try setValue(value, for: key, of: object(with: reference))
    case .transient(let reference, let key, let value):
      try setTransient(value, for: key, of: object(with: reference), tracked: true)
    case .extended(let reference, let key, let change):
      try restoreExtendedChange(change, for: key, of: object(with: reference))
    case .toOne(let reference, let name, let target):
      try setToOne(of: object(with: reference), name, to: target)
    case .members(let reference, let name, let members):
      try setMembers(members, of: object(with: reference), name)
    case .insert(let reference):
      try delete(object(with: reference))
    case .delete(let objects):
      try undelete(objects)
    }
  }

  /// The states of the objects a delete is about to remove, to bring them back on undo.
  func deletedStates(_ closure: [ObjectReference]) throws(StoreError) -> [DeletedObject] {
    var states: [DeletedObject] = []
    for reference in closure {
      let object = try self.object(with: reference)
      var toMany: [String: [ObjectReference]] = [:]
      for relationship in model.relationships(of: object.entity)
      where relationship.isToMany && !relationship.isTransient
        && model.inverse(of: relationship) != nil
      {
        toMany[relationship.name] = try members(of: object, relationship.name)
      }
      states.append(
        DeletedObject(
          object: object, attributes: object.attributes, toOne: object.toOne, toMany: toMany,
          transients: object.transients, extendedChanges: object.extendedChanges))
    }
    return states
  }

  /// Brings deleted objects back: pending deletes are cancelled, saved ones (and discarded
  /// inserts) become inserts with the same keys; then their values and relationships are set
  /// again, which restores the inverses the delete emptied.
  func undelete(_ states: [DeletedObject]) throws(StoreError) {
    guard !states.isEmpty else { return }
    let step = undoStep { .insert(states[0].object.reference) }
    defer { step.end() }
    for state in states {
      let object = state.object
      let reference = object.reference
      if deleted.remove(reference) != nil {
        object.isDeleted = false
      } else {
        // Its row is gone (a saved delete) or never was (a discarded insert): insert it again.
        object.isDeleted = false
        registered[reference] = object
        markInserted(object)
        object.version = 0
        object.committed = AttributeSlots(traits: object.traits)
        object.committedToOne = [:]
        object.extendedSnapshot = nil
      }
      object.attributes = state.attributes
      object.toOne = [:]
      object.toMany = [:]
      if inserted.contains(reference) {
        for relationship in model.relationships(of: object.entity) where relationship.isToMany {
          object.toMany[relationship.name] = []
        }
      }
      object.transients = state.transients
      object.extendedChanges = state.extendedChanges
      markUpdated(object)
    }
    for state in states {
      for (name, target) in state.toOne.sorted(by: { $0.key < $1.key }) {
        try setToOne(of: state.object, name, to: target)
      }
    }
    for state in states {
      for (name, members) in state.toMany.sorted(by: { $0.key < $1.key }) {
        try setMembers(members, of: state.object, name)
      }
    }
    step.commit()
  }
}
