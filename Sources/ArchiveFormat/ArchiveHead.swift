import ObjectModel
import ObjectStore

/// What an archive's writer (``ArchiveSink``) is told before the objects: the members it
/// writes ahead of them, as data, and what the index counts even when none of it comes.
package struct ArchiveHead {
  /// The header (`graphvault.plist`).
  package var header: ArchiveHeader
  /// The model the objects are written with (its descriptor is written).
  package var model: ObjectModel
  /// The store's metadata (`Z_METADATA.Z_PLIST`), as stored.
  package var metadata: [UInt8]
  /// The store's schema, as `sqlite_master` lists it.
  package var schemaObjects: [CoreDataStore.SchemaObject]
  /// The store's `Z_PRIMARYKEY` rows.
  package var entityRows: [CoreDataStore.EntityRow]
  /// The store's `Z_MODELCACHE`, when the archive carries it.
  package var modelCache: [UInt8]?
  /// The change ledger (format 3 and later).
  package var changes: ChangeLedger?
  /// The entities and the tables outside the model the index counts even when no object or
  /// row of them comes (a full archive's every one).
  package var counted: (entities: [String], tables: [String]) = ([], [])

  /// A head of these members, counting nothing ahead.
  package init(
    header: ArchiveHeader, model: ObjectModel, metadata: [UInt8],
    schemaObjects: [CoreDataStore.SchemaObject], entityRows: [CoreDataStore.EntityRow],
    modelCache: [UInt8]?, changes: ChangeLedger?
  ) {
    self.header = header
    self.model = model
    self.metadata = metadata
    self.schemaObjects = schemaObjects
    self.entityRows = entityRows
    self.modelCache = modelCache
    self.changes = changes
  }
}

extension ArchivedStore {
  /// What the archive held before its objects, as the head of an archive written from its
  /// stream: the same members, a full archive counting every concrete entity and table.
  package var archiveHead: ArchiveHead {
    var head = ArchiveHead(
      header: header, model: model, metadata: metadata, schemaObjects: schema.objects,
      entityRows: entityRows, modelCache: modelCache, changes: changes)
    if header.parent == nil {
      head.counted = (
        model.numberedEntities.filter { !$0.isAbstract }.map(\.name), otherTables.sorted()
      )
    }
    return head
  }
}
