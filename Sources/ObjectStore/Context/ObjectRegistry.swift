import ObjectModel

/// The objects a context holds, one per reference, and which of them point at an object
/// through each to-one relationship: as changed in memory, and as last read or saved.
///
/// The members of a one-to-many relationship are the objects whose to-one points back, so a
/// context asks here instead of walking every object it holds: a merge or an import that reads
/// tens of thousands of objects and links each to its owner would otherwise spend its time in
/// that walk. The pointers follow ``ManagedObject``'s to-one values through their observers,
/// so no code that changes a to-one has to remember to update them. They are worked out on the
/// first question about them, not before: a fetch of a few hundred thousand objects that no
/// one asks about members pays nothing for them.
struct ObjectRegistry {
  /// A to-one relationship's name and the object it points at.
  private struct Pointer: Hashable {
    let relationship: String
    let target: ObjectReference
  }

  private var objects: [ObjectReference: ManagedObject] = [:]
  /// Who points where as changed in memory (``ManagedObject/toOne``).
  private var current: [Pointer: Set<ObjectReference>] = [:]
  /// Who points where as last read or saved (``ManagedObject/committedToOne``).
  private var committed: [Pointer: Set<ObjectReference>] = [:]
  /// Whether ``current`` and ``committed`` are kept (since the first question about them).
  private var isIndexed = false

  /// The object registered under `reference`; setting one replaces the object registered
  /// there, and nil removes it.
  subscript(reference: ObjectReference) -> ManagedObject? {
    get { objects[reference] }
    set {
      if let newValue {
        if let old = objects.updateValue(newValue, forKey: reference) {
          guard old !== newValue else { return }
          forget(old)
        }
        note(newValue)
      } else {
        removeValue(forKey: reference)
      }
    }
  }

  /// Every registered object, in no particular order.
  var values: Dictionary<ObjectReference, ManagedObject>.Values { objects.values }

  /// Every registered reference, in no particular order.
  var keys: Dictionary<ObjectReference, ManagedObject>.Keys { objects.keys }

  /// Removes the object registered under `reference`, returning it.
  @discardableResult
  mutating func removeValue(forKey reference: ObjectReference) -> ManagedObject? {
    guard let object = objects.removeValue(forKey: reference) else { return nil }
    forget(object)
    return object
  }

  /// Forgets every object.
  mutating func removeAll() {
    objects.removeAll()
    current.removeAll()
    committed.removeAll()
    isIndexed = false
  }

  /// The registered objects whose to-one `relationship` points at `target` in memory.
  mutating func pointing(at target: ObjectReference, through relationship: String)
    -> [ManagedObject]
  {
    index()
    guard let sources = current[Pointer(relationship: relationship, target: target)] else {
      return []
    }
    return sources.compactMap { objects[$0] }
  }

  /// The registered objects whose to-one `relationship` points at `target` in memory or
  /// pointed there when last read or saved.
  mutating func pointingNowOrBefore(at target: ObjectReference, through relationship: String)
    -> [ManagedObject]
  {
    index()
    let pointer = Pointer(relationship: relationship, target: target)
    let sources = (current[pointer] ?? []).union(committed[pointer] ?? [])
    return sources.compactMap { objects[$0] }
  }

  /// Follows a change of `object`'s to-one values (in memory, or as committed) from `old` to
  /// `new`; nothing for an object that is not registered.
  mutating func toOneChanged(
    of object: ManagedObject, from old: [String: ObjectReference],
    to new: [String: ObjectReference], committed isCommitted: Bool
  ) {
    guard isIndexed, objects[object.reference] === object else { return }
    for (relationship, target) in old where new[relationship] != target {
      remove(
        object.reference, from: Pointer(relationship: relationship, target: target), isCommitted)
    }
    for (relationship, target) in new where old[relationship] != target {
      add(object.reference, to: Pointer(relationship: relationship, target: target), isCommitted)
    }
  }

  /// Works out who points where, once.
  private mutating func index() {
    guard !isIndexed else { return }
    isIndexed = true
    for object in objects.values { note(object) }
  }

  private mutating func note(_ object: ManagedObject) {
    guard isIndexed else { return }
    for (relationship, target) in object.toOne {
      add(object.reference, to: Pointer(relationship: relationship, target: target), false)
    }
    for (relationship, target) in object.committedToOne {
      add(object.reference, to: Pointer(relationship: relationship, target: target), true)
    }
  }

  private mutating func forget(_ object: ManagedObject) {
    guard isIndexed else { return }
    for (relationship, target) in object.toOne {
      remove(object.reference, from: Pointer(relationship: relationship, target: target), false)
    }
    for (relationship, target) in object.committedToOne {
      remove(object.reference, from: Pointer(relationship: relationship, target: target), true)
    }
  }

  private mutating func add(_ source: ObjectReference, to pointer: Pointer, _ isCommitted: Bool) {
    if isCommitted {
      committed[pointer, default: []].insert(source)
    } else {
      current[pointer, default: []].insert(source)
    }
  }

  private mutating func remove(
    _ source: ObjectReference, from pointer: Pointer, _ isCommitted: Bool
  ) {
    func drop(_ index: inout [Pointer: Set<ObjectReference>]) {
      guard let position = index.index(forKey: pointer) else { return }
      index.values[position].remove(source)
      if index.values[position].isEmpty { index.remove(at: position) }
    }
    if isCommitted { drop(&committed) } else { drop(&current) }
  }
}
