import ObjectModel

extension ObjectContext {
  /// A lifecycle hook: receives the object; a thrown error stops what the context was doing
  /// (a save is then not written).
  public typealias Hook = (ManagedObject) throws -> Void

  /// Calls `hook` at `event` for every object of `entity` and of its sub-entities.
  /// - Throws: ``StoreError`` when the model has no entity `entity`.
  public func addHook(_ event: LifecycleEvent, for entity: String, _ hook: @escaping Hook)
    throws(StoreError)
  {
    guard model.entity(named: entity) != nil else {
      throw fail(.invalidValue, "the model has no entity \(entity)")
    }
    hooks[event, default: [:]][entity, default: []].append(hook)
  }

  /// Runs the hooks of `event` for `object`, ancestors' first.
  func runHooks(_ event: LifecycleEvent, _ object: ManagedObject) throws(StoreError) {
    guard let byEntity = hooks[event], !byEntity.isEmpty else { return }
    for entity in model.lineage(of: object.entity).reversed() {
      for hook in byEntity[entity.name] ?? [] {
        do {
          try hook(object)
        } catch {
          throw fail(.validation, "\(object): \(event.rawValue) failed: \(error)")
        }
      }
    }
  }

  /// Runs `willSave` for every pending object, then for the ones the hooks changed, until
  /// none is left (at most 100 rounds).
  func runWillSave() throws(StoreError) {
    guard let byEntity = hooks[.willSave], !byEntity.isEmpty else { return }
    var done = Set<ObjectReference>()
    for _ in 0..<100 {
      let pending = inserted.union(updated).union(transientChanges).subtracting(done)
        .sorted(by: Self.stableOrder)
      if pending.isEmpty { return }
      for reference in pending {
        done.insert(reference)
        guard let object = registered[reference], !object.isDeleted else { continue }
        try runHooks(.willSave, object)
      }
    }
    throw fail(.validation, "willSave hooks kept changing objects after 100 rounds")
  }

  func setTransient(
    _ value: (any Sendable)?, for key: String, of object: ManagedObject, tracked: Bool
  ) throws(StoreError) {
    if tracked { try checkChangeable(object) }
    guard
      let attribute = model.attributes(of: object.entity).first(where: { $0.name == key }),
      attribute.isTransient
    else {
      throw fail(.invalidValue, "\(object.entity) has no transient attribute \(key)")
    }
    let step =
      tracked
      ? undoStep {
        .transient(object.reference, key, object.transients[key] ?? object.attributes[key])
      } : UndoStep(context: self, action: nil)
    defer { step.end() }
    object.transients[key] = value
    object.attributes[key] = nil
    if tracked { transientChanges.insert(object.reference) }
    step.commit()
  }
}
