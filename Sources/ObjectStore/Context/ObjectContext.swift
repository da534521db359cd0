import ObjectModel
import SQLite

/// A scratchpad over a store, as Core Data's managed object context: insert, fetch, change and
/// delete objects in memory, then ``save()`` them in one transaction or ``rollback()``.
///
/// Relationship changes keep inverses in step; deletes follow each relationship's delete rule
/// (nullify, cascade, deny); saves increment each changed row's `Z_OPT` (and fail when another
/// writer changed it meanwhile) and raise `Z_PRIMARYKEY.Z_MAX` past every key handed out.
///
/// ```swift
/// let context = try ObjectContext(storePath: "Library.sqlite", model: model)
/// let book = try context.insert("Book")
/// try book.setValue(.string("Dune"), for: "title")
/// try context.save()
/// ```
public final class ObjectContext {
  /// The model.
  public let model: ObjectModel
  let store: CoreDataStore
  let layout: StoreLayout
  /// The objects read or inserted, one per reference, with who points where.
  var registered = ObjectRegistry()
  /// The objects waiting for their first save, by reference; kept with ``pendingInserts``
  /// and each object's ``ManagedObject/isPendingInsert`` by ``markInserted(_:)`` and
  /// ``unmarkInserted(_:)``.
  private(set) var inserted = Set<ObjectReference>()
  /// The objects marked inserted since the last save, in the order they were: what a save
  /// walks without a lookup per object (one no longer inserted is skipped by its flag).
  private(set) var pendingInserts: [ManagedObject] = []
  var updated = Set<ObjectReference>()
  var deleted = Set<ObjectReference>()
  var joinInserts = JoinPairSet()
  var joinDeletes = JoinPairSet()
  var reordered = Set<OrderedMembership>()
  /// Members let go of by an inverse-less to-many relationship (by the relationship's name)
  /// and not taken by another owner: their owner column is cleared at the save.
  var releasedMembers: [ObjectReference: Set<String>] = [:]
  /// Required to-many relationships taken empty without a validation error, by object (see
  /// ``acceptEmpty(_:of:)``).
  var acceptedEmpty: [ObjectReference: Set<String>] = [:]
  var nextKeys: [String: Int64] = [:]
  let entityNames: [Int: String]
  /// The value transformers of the model's transformable attributes.
  public let transformers: ValueTransformerRegistry
  /// Objects with extended-attribute changes for the next save to fold into their buckets, in
  /// the order they were first changed (each once; ``ManagedObject`` marks those listed).
  /// Walking these, not every inserted and updated object, visits objects in about the order
  /// they lie in memory, and a save with no extended changes visits none.
  var extendedChangeList: [ManagedObject] = []
  /// Objects whose transient values changed (nothing to write, but a change).
  var transientChanges = Set<ObjectReference>()
  /// Lifecycle hooks by event and entity.
  var hooks: [LifecycleEvent: [String: [Hook]]] = [:]
  /// Set while `didSave` hooks run, when no object may change.
  var inDidSave = false
  /// How deep inside a recorded change the context is (changes below the top are not
  /// recorded on their own).
  var undoDepth = 0
  /// Statements run object after object (a save's writes, members, keys taken), prepared once.
  let statements: StatementCache
  /// Readers of objects by key or foreign key, prepared once (by table, filter and limit): a
  /// merge or an import asks for objects one key at a time, and preparing the statement each
  /// time cost more than running it.
  var readers: [String: TableReader] = [:]
  /// Per entity: attribute names and extended-attribute bucket, worked out once.
  var entityTraits: [String: EntityTraits] = [:]
  /// The classes registered for entities (``register(_:for:)``).
  var classes: [String: ManagedObject.Type] = [:]
  /// How many ``forEach(_:_:)`` walks are reading the store (a save is refused meanwhile).
  var walking = 0
  /// Whether the context only reads (it cannot save).
  public let isReadOnly: Bool
  /// Which local changes ``refresh(_:mergeChanges:)`` with merge keeps (Core Data's by
  /// default).
  public var mergeSemantics: MergeSemantics = .coreData
  /// What a save does about objects another writer changed meanwhile (fail, by default).
  public var mergePolicy: MergePolicy = .error
  /// The author a save records in the store's persistent history (Core Data's
  /// `transactionAuthor`), when the store keeps history; none by default.
  public var transactionAuthor: String?
  /// The context's name, recorded with each transaction in the store's persistent history
  /// (Core Data's context `name`); none by default.
  public var name: String?
  /// Whether the store keeps persistent history (has Core Data's `ATRANSACTION`, `ACHANGE`
  /// and `ATRANSACTIONSTRING` tables): each save then records a transaction and its changes.
  public let recordsHistory: Bool
  /// Records changes so that they can be undone and redone in groups; none by default (as
  /// Core Data on iOS). Set one to start recording.
  public var undoManager: ContextUndoManager? {
    didSet { undoManager?.context = self }
  }

  /// Opens a context on the store at `storePath`, which `model` must describe, with the value
  /// transformers its transformable attributes name.
  /// - Parameter readOnly: open the store only for reading, as a backup does (never
  ///   checkpointing a live store's `-wal`); ``save()`` then fails.
  /// - Throws: ``StoreError`` when the store cannot be opened (for writing, unless
  ///   `readOnly`), the model does not match it, or a transformable attribute names a value
  ///   class its registered transformer does not know (naming entity, attribute and the name).
  ///   A transformer that is not registered stops only reading or setting its attribute's
  ///   value (unless ``ValueTransformerRegistry/requiresEveryTransformer``).
  public init(
    storePath: String, model: ObjectModel,
    transformers: ValueTransformerRegistry = .standard, readOnly: Bool = false
  ) throws(StoreError) {
    if let problem = Self.checkTransformables(model, transformers) {
      throw StoreError(.invalidValue, problem, path: storePath)
    }
    self.transformers = transformers
    isReadOnly = readOnly
    store = try CoreDataStore(path: storePath, writable: !readOnly)
    self.model = model
    layout = try store.layout(for: model)
    var names: [Int: String] = [:]
    for (name, number) in layout.entityNumbers { names[number] = name }
    entityNames = names
    statements = StatementCache(database: store.database)
    do {
      let tables = try store.database.prepare(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('ACHANGE', 'ATRANSACTION', 'ATRANSACTIONSTRING')"
      ).allRows().first?.first?.integerValue
      recordsHistory = tables == 3
    } catch {
      throw StoreError(
        .database, "cannot read the store's schema", path: storePath, underlying: error)
    }
    do {
      // Another context or process on the store holds its lock only briefly: wait for it.
      store.database.setBusyTimeout(milliseconds: 10_000)
      try StandInFunctions.register(on: store.database)
      try PredicateSQL.registerFunctions(on: store.database)
    } catch {
      throw StoreError(
        .database, "cannot register Core Data's trigger functions", path: storePath,
        underlying: error)
    }
  }

  /// Leaves the store's `-wal` and `-shm` as they are when the context closes, rather than
  /// folding the log into the store (SQLite's way when the last connection closes): for a
  /// live store that an app owns, whose files a tool should leave as it found them.
  public func leaveWriteAheadLogOnClose() {
    store.database.leaveWriteAheadLogOnClose()
  }

  /// Forgets every object read so far, to keep memory flat in long batch jobs; objects held
  /// elsewhere are read again when next asked for.
  /// - Throws: ``StoreError`` when there are unsaved changes (save or roll back first).
  public func reset() throws(StoreError) {
    guard !hasChanges && reordered.isEmpty else {
      throw fail(.invalidValue, "the context has unsaved changes; save or roll back before reset")
    }
    let dropped = registered.values
    registered.removeAll()
    for object in dropped { try runHooks(.didTurnIntoFault, object) }
  }

  /// Whether there are unsaved changes.
  public var hasChanges: Bool {
    !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty || !joinInserts.isEmpty
      || !joinDeletes.isEmpty || !transientChanges.isEmpty
  }

  @usableFromInline
  func fail(_ kind: StoreError.Kind, _ detail: String) -> StoreError {
    StoreError(kind, detail, path: store.path)
  }

  func wrap(_ error: any Error, _ detail: String) -> StoreError {
    if let error = error as? StoreError { return error }
    return StoreError(.database, detail, path: store.path, underlying: error as? SQLiteError)
  }

  // MARK: Loading

  func table(for entity: String) throws(StoreError) -> StoreLayout.Table {
    guard let table = layout.table(for: entity) else {
      throw fail(.invalidValue, "the model has no entity \(entity)")
    }
    return table
  }

  /// Loads objects of `table` matching an SQL filter, registering them (objects already
  /// registered keep their in-memory state).
  func load(
    _ table: StoreLayout.Table, filter: String?, bindings: [SQLiteValue], limit: Int? = nil
  ) throws(StoreError) -> [ManagedObject] {
    var records: [ObjectRecord] = []
    do {
      let reader = try self.reader(of: table, filter: filter, limit: limit)
      try reader.bind(bindings)
      try reader.readRows { record in records.append(record) }
    } catch {
      throw wrap(error, "cannot read \(table.name)")
    }
    // Registered once the statement is done: awakeFromFetch hooks may read the store.
    var result: [ManagedObject] = []
    result.reserveCapacity(records.count)
    for record in records { result.append(try register(record)) }
    return result
  }

  /// The reader of `table`'s rows matching `filter`, prepared on first use. Readers finish
  /// (and reset) before the objects they read are registered, so one is never in use twice.
  func reader(of table: StoreLayout.Table, filter: String?, limit: Int? = nil) throws
    -> TableReader
  {
    let key = "\(table.name)|\(filter ?? "")|\(limit.map(String.init) ?? "")"
    if let known = readers[key] { return known }
    let reader = try TableReader(
      table: table, layout: layout, database: store.database, filter: filter, limit: limit)
    // Filters with lists of keys vary without end: keep a few dozen.
    if readers.count >= 64 { readers.removeAll() }
    readers[key] = reader
    return reader
  }

  func register(_ record: ObjectRecord, values: [AttributeValue?]? = nil) throws(StoreError)
    -> ManagedObject
  {
    if let existing = registered[record.reference] { return existing }
    let object = makeObject(record, values: values)
    registered[record.reference] = object
    try runHooks(.awakeFromFetch, object)
    return object
  }

  /// The object with `reference`, from memory or the store.
  public func object(with reference: ObjectReference) throws(StoreError) -> ManagedObject {
    if let object = registered[reference] { return object }
    let table = try table(for: reference.entity)
    guard
      let object = try load(table, filter: "Z_PK = ?", bindings: [.integer(reference.primaryKey)])
        .first,
      object.reference == reference
    else {
      throw fail(.invalidValue, "no object \(reference) in the store")
    }
    return object
  }
  // MARK: Inserting and changing

  /// Inserts a new object of `entity`, with its attributes' default values, and a primary key
  /// from its hierarchy's counter.
  public func insert(_ entity: String) throws(StoreError) -> ManagedObject {
    try insert(entity, primaryKey: nil)
  }

  /// Inserts a new object of `entity` with its attributes' default values and the primary key
  /// `primaryKey` (which must be positive and not used in the entity's hierarchy), or a key from
  /// the hierarchy's counter when nil. Keys handed out later come after every key given.
  /// - Throws: ``StoreError`` when the entity is unknown or abstract, or the key is taken.
  public func insert(_ entity: String, primaryKey: Int64?) throws(StoreError) -> ManagedObject {
    let traits = traits(of: entity)
    let object = makeObject(
      try newRecord(entity, traits: traits, primaryKey: primaryKey), values: traits.defaultValues,
      traits: traits)
    try adoptInserted(object)
    return object
  }

  /// The record of a new object of `entity`: its key (``insert(_:primaryKey:)``'s rules); its
  /// values are the entity's defaults, ``EntityTraits/defaultValues``, given beside it.
  func newRecord(_ entity: String, traits: EntityTraits? = nil, primaryKey: Int64?)
    throws(StoreError) -> ObjectRecord
  {
    guard !inDidSave else { throw fail(.invalidValue, "no object can be inserted in didSave") }
    let traits = traits ?? self.traits(of: entity)
    guard let root = traits.root else {
      throw fail(.invalidValue, "the model has no entity \(entity)")
    }
    guard !traits.isAbstract else {
      throw fail(.invalidValue, "entity \(entity) is abstract and cannot have objects")
    }
    let key: Int64
    if let primaryKey {
      try reserve(primaryKey, root: root)
      key = primaryKey
    } else {
      key = try nextPrimaryKey(root: root)
    }
    return ObjectRecord(entity: entity, primaryKey: key, version: 0)
  }

  /// Takes `object`, made from a ``newRecord(_:traits:primaryKey:)``, into the context as inserted:
  /// empty to-many relationships, an undo step, its `awakeFromInsert` hooks.
  func adoptInserted(_ object: ManagedObject) throws(StoreError) {
    // A new object has no members in the store: its to-many relationships start empty.
    object.toMany = object.traits.emptyToMany
    let step = undoStep { .insert(object.reference) }
    defer { step.end() }
    registered[object.reference] = object
    markInserted(object)
    try runHooks(.awakeFromInsert, object)
    step.commit()
  }

  /// Marks `object` (registered) as waiting for its first save.
  func markInserted(_ object: ManagedObject) {
    inserted.insert(object.reference)
    object.isPendingInsert = true
    if !object.isInPendingInserts {
      object.isInPendingInserts = true
      pendingInserts.append(object)
    }
  }

  /// Unmarks the object `reference` (still registered, if it was) as waiting for its first
  /// save. Returns whether it was.
  @discardableResult
  func unmarkInserted(_ reference: ObjectReference) -> Bool {
    guard inserted.remove(reference) != nil else { return false }
    registered[reference]?.isPendingInsert = false
    return true
  }

  /// Forgets every pending insert (after a save, or a rollback).
  func clearInserted() {
    for object in pendingInserts {
      object.isPendingInsert = false
      object.isInPendingInserts = false
    }
    pendingInserts.removeAll()
    inserted.removeAll()
  }

  /// The objects waiting for their first save, in the order they were inserted.
  var objectsPendingInsert: [ManagedObject] { pendingInserts.filter(\.isPendingInsert) }

  /// Takes `key` for a new object of the hierarchy under `root`, moving the counter past it.
  private func reserve(_ key: Int64, root: String) throws(StoreError) {
    guard key > 0 else { throw fail(.invalidValue, "primary key \(key) is not positive") }
    let hierarchy = model.hierarchy(from: root).map(\.name)
    var taken = hierarchy.contains {
      registered[ObjectReference(entity: $0, primaryKey: key)] != nil
    }
    if !taken {
      let table = try table(for: root)
      do {
        let statement = try statements.statement("SELECT 1 FROM \(table.name) WHERE Z_PK = ?")
        try statement.bind(.integer(key), at: 1)
        taken = try statement.scalar() != .null
      } catch {
        throw wrap(error, "cannot read \(table.name)")
      }
    }
    guard !taken else {
      throw fail(.invalidValue, "primary key \(key) of \(root)'s hierarchy is already used")
    }
    let next = try nextPrimaryKey(root: root)
    nextKeys[root] = max(next, key + 1)
  }

  /// Moves the key counter of `root`'s hierarchy past the keys the store holds now: another
  /// writer may have added rows since the counter was read (a batch insert, inside its
  /// transaction, before it hands out keys).
  func catchUpPrimaryKeys(root: String) throws(StoreError) {
    guard let known = nextKeys.removeValue(forKey: root) else { return }
    let stored = try nextPrimaryKey(root: root)
    nextKeys[root] = max(known, stored)
  }

  func nextPrimaryKey(root: String) throws(StoreError) -> Int64 {
    // One lookup for the common case: the counter is known.
    if let index = nextKeys.index(forKey: root) {
      let key = nextKeys.values[index]
      nextKeys.values[index] = key + 1
      return key
    }
    let table = try table(for: root)
    let number = layout.entityNumbers[root] ?? 0
    let key: Int64
    do {
      let statement = try store.database.prepare(
        "SELECT max((SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?), ifnull((SELECT max(Z_PK) FROM \(table.name)), 0))"
      )
      try statement.bind(.integer(Int64(number)), at: 1)
      key = (try statement.scalar().integerValue ?? 0) + 1
    } catch {
      throw wrap(error, "cannot read the primary-key counter of \(root)")
    }
    nextKeys[root] = key + 1
    return key
  }

  func markUpdated(_ object: ManagedObject) {
    if !object.isInExtendedChangeList && !object.extendedChanges.isEmpty {
      object.isInExtendedChangeList = true
      extendedChangeList.append(object)
    }
    if !object.isPendingInsert { updated.insert(object.reference) }
  }

  /// Empties ``extendedChangeList`` (a save wrote it, or a rollback dropped it).
  func clearExtendedChangeList() {
    for object in extendedChangeList { object.isInExtendedChangeList = false }
    extendedChangeList.removeAll()
  }

  func setValue(_ value: AttributeValue?, for key: String, of object: ManagedObject)
    throws(StoreError)
  {
    try checkChangeable(object)
    guard let slot = object.traits.slots[key] else {
      if let composite = model.compositeAttribute(key, of: object.entity) {
        return try setComposite(value, for: key, composite, of: object)
      }
      if object.traits.fallsThrough {
        try setExtendedValue(value.map(Self.propertyListValue), for: key, of: object)
        return
      }
      throw fail(.invalidValue, "\(object.entity) has no attribute \(key)")
    }
    try setValue(value, slot: slot, of: object)
  }

  /// Sets the attribute in `slot` of `object`'s entity (``EntityTraits/slots``).
  @usableFromInline
  func setValue(_ value: AttributeValue?, slot: Int, of object: ManagedObject) throws(StoreError) {
    try checkChangeable(object)
    // The description's fields read in place: copying it whole costs a dozen retains.
    let traits = object.traits
    guard !traits.slotAttributes[slot].isDerived else {
      throw fail(
        .invalidValue,
        "\(object.entity).\(traits.slotNames[slot]) is derived; the store computes it")
    }
    if let value, !value.fits(traits.slotAttributes[slot].type) {
      throw fail(
        .invalidValue,
        "\(object.entity).\(traits.slotNames[slot]) is \(traits.slotAttributes[slot].type.rawValue); \(value) does not fit"
      )
    }
    if undoManager != nil {
      let step = undoStep {
        .attribute(object.reference, traits.slotNames[slot], object.attributes[slot: slot])
      }
      defer { step.end() }
      object.attributes[slot: slot] = value
      step.commit()
    } else {
      object.attributes[slot: slot] = value
    }
    if traits.slotAttributes[slot].isTransient {
      transientChanges.insert(object.reference)
    } else if !object.isPendingInsert {
      // What a refresh keeps; an inserted object has no stored row to refresh from.
      object.changedKeys.insert(traits.slotNames[slot])
      markUpdated(object)
    }
  }

  /// Sets a composite attribute element by element: each a change of its own, nil for those
  /// the value leaves out.
  private func setComposite(
    _ value: AttributeValue?, for key: String, _ composite: AttributeDescription,
    of object: ManagedObject
  ) throws(StoreError) {
    for (element, elementValue) in try compositeElements(
      value, for: key, composite, of: object.entity)
    {
      try setValue(elementValue, for: element, of: object)
    }
  }

  /// Each element of composite attribute `key` of `entity` with what `value` (a dictionary of
  /// the elements, or nil) gives it, nil for those it leaves out; `place` ends the messages.
  /// - Throws: ``StoreError`` (``StoreError/Kind/invalidValue``) when `value` is not such a
  ///   dictionary or names an element the composite does not have.
  func compositeElements(
    _ value: AttributeValue?, for key: String, _ composite: AttributeDescription,
    of entity: String, place: String = ""
  ) throws(StoreError) -> [(name: String, value: AttributeValue?)] {
    var given: [String: AttributeValue] = [:]
    switch value {
    case .composite(let elements)?:
      given = RecordNesting.flattened(elements, prefix: key)
    case nil: break
    case let other?:
      throw fail(
        .invalidValue,
        "\(entity).\(key) is a composite; \(other) is not a dictionary of its elements\(place)")
    }
    let elements = composite.flattened.map(\.name)
    if let unknown = given.keys.first(where: { !elements.contains($0) }) {
      throw fail(
        .invalidValue,
        "\(entity).\(key) has no element \(unknown.dropFirst(key.count + 1))\(place)")
    }
    return elements.map { ($0, given[$0]) }
  }

  func checkChangeable(_ object: ManagedObject) throws(StoreError) {
    guard !object.isDeleted else { throw fail(.invalidValue, "\(object) is deleted") }
    guard !inDidSave else {
      throw fail(.invalidValue, "\(object) cannot change in didSave; change it in willSave")
    }
  }
}
