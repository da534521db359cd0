extension StoreLoader {
  /// A loader of a new store at `path` made for the objects of a stream whose head is `head`,
  /// before them: the head's tables, its model mapped onto them with its entity numbers, and
  /// its bookkeeping when the head knows it already (else ``finish(making:)`` writes it).
  /// What a store's sink begins with, and a partial read of an archive (the rows a selection
  /// reaches) too.
  package convenience init(making head: StoreHead, at path: String) throws(StoreError) {
    try self.init(path: path)
    try createTables(head.schemaObjects)
    try prepare(model: head.model, entityRows: head.entityRows)
    if head.finalEntityRows == nil { try writeBookkeeping(head.entityRows, of: head) }
  }

  /// Writes the bookkeeping only known at the end (when `head` says so), then creates the
  /// indexes and triggers of `head`'s schema (after the rows, and before any lookup by foreign
  /// key), sets its journal mode, commits and closes the store.
  package func finish(making head: StoreHead) throws(StoreError) {
    if let final = head.finalEntityRows { try writeBookkeeping(final(), of: head) }
    try finish(indexesAndTriggers: head.schemaObjects, journalMode: head.journalMode)
  }

  private func writeBookkeeping(_ entityRows: [CoreDataStore.EntityRow], of head: StoreHead)
    throws(StoreError)
  {
    try writeBookkeeping(
      entityRows: entityRows, uuid: head.uuid, metadata: head.metadata,
      modelCache: head.modelCache)
  }
}
