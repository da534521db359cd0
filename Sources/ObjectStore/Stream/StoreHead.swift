import ObjectModel

/// What an object stream's objects make a store of, given before them: the model, the schema,
/// the bookkeeping rows, and how the objects come. An archive's head says it of the store the
/// archive was taken from; a migration's, of the store at its target version.
package struct StoreHead {
  /// The model the objects are in.
  package var model: ObjectModel
  /// The schema: its tables are created before the objects, its indexes and triggers after.
  package var schemaObjects: [CoreDataStore.SchemaObject]
  /// The schema as the model is mapped onto it (a migration's source layout).
  package var snapshot: SchemaSnapshot
  /// Whether the schema has Core Data's persistent-history tables.
  package var hasPersistentHistory: Bool
  /// The `Z_PRIMARYKEY` rows: entity numbers and the highest keys handed out.
  package var entityRows: [CoreDataStore.EntityRow]
  /// The `Z_PRIMARYKEY` rows to write once the stream has ended, when only then known (a
  /// migration hands out keys for the objects it makes); nil when ``entityRows`` are final.
  package var finalEntityRows: (() -> [CoreDataStore.EntityRow])?
  /// `Z_METADATA.Z_PLIST`: a property list dictionary.
  package var metadata: [UInt8]
  /// `Z_MODELCACHE`, when the store keeps one.
  package var modelCache: [UInt8]?
  /// `Z_METADATA.Z_UUID`.
  package var uuid: String
  /// The journal mode the store is left in (`wal`, `delete`, …).
  package var journalMode: String
  /// How many objects the stream holds, when its source knows.
  package var expectedObjects: Int?
  /// Whether the objects come table by table in key order, as a whole archive at its own
  /// version gives them: a store sink then writes the tables' pages itself, until an object
  /// comes that cannot go that way (it and the rest then go through SQL).
  package var comesInKeyOrder: Bool

  /// A head from its parts; ``finalEntityRows`` and ``expectedObjects`` unset, and the
  /// objects not known to come in key order.
  package init(
    model: ObjectModel, schemaObjects: [CoreDataStore.SchemaObject], snapshot: SchemaSnapshot,
    hasPersistentHistory: Bool, entityRows: [CoreDataStore.EntityRow], metadata: [UInt8],
    modelCache: [UInt8]?, uuid: String, journalMode: String
  ) {
    self.model = model
    self.schemaObjects = schemaObjects
    self.snapshot = snapshot
    self.hasPersistentHistory = hasPersistentHistory
    self.entityRows = entityRows
    self.metadata = metadata
    self.modelCache = modelCache
    self.uuid = uuid
    self.journalMode = journalMode
    self.comesInKeyOrder = false
  }
}
