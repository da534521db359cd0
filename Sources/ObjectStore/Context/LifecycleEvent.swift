/// The moments of an object's life an ``ObjectContext`` calls hooks at, as Core Data calls a
/// managed object's `awakeFromInsert`, `awakeFromFetch`, `willSave` and `didSave`.
///
/// Hooks are registered per entity with ``ObjectContext/addHook(_:for:_:)`` and also run for
/// the entity's sub-entities, ancestors' hooks first.
public enum LifecycleEvent: String, Sendable, CaseIterable {
  /// After ``ObjectContext/insert(_:)`` gave the object its defaults: set initial values here.
  case awakeFromInsert
  /// After the object was first read from the store into this context.
  case awakeFromFetch
  /// During ``ObjectContext/save()``, before validation, for every object inserted or
  /// changed (its transient values included): the place to write a shadow attribute from a
  /// transient one. The hook may change the object; validation then sees the change.
  case willSave
  /// After the save committed, for every object it wrote or deleted. The object must not be
  /// changed here (doing so is an error).
  case didSave
  /// When the context drops the object's cached state: ``ObjectContext/refresh(_:mergeChanges:)``,
  /// ``ObjectContext/reset()`` and ``ObjectContext/rollback()`` (Core Data's
  /// `didTurnIntoFault`). The place to drop caches kept beside the object.
  case didTurnIntoFault
}
