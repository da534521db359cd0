import ArchiveFormat
import Foundation
import ObjectStore

extension StoreLoader {
  /// A new store at `path` made as a restore of `archived` at its own version makes it before
  /// its rows: the source's schema, entity numbers, metadata and model cache, and `uuid` (by
  /// default the source's, or a new one when the archive records none). What a whole restore
  /// fills with every row, and a partial read with the rows a selection reaches
  /// (``SelectionArchive``, ``PartialArchive``).
  static func restoring(_ archived: ArchivedStore, at path: String, uuid: String? = nil) throws
    -> StoreLoader
  {
    let uuid = uuid ?? archived.header.sourceUUID ?? UUID().uuidString
    let loader = try StoreLoader(path: path)
    try loader.createTables(archived.schema.objects)
    try loader.prepare(model: archived.model, entityRows: archived.entityRows)
    try loader.writeBookkeeping(
      entityRows: archived.entityRows, uuid: uuid, metadata: archived.metadata,
      modelCache: archived.modelCache)
    return loader
  }

  /// Creates the indexes and triggers of `archived`'s schema (after the rows, and before any
  /// lookup by foreign key), sets the source's journal mode, commits and closes the store.
  func finish(restoring archived: ArchivedStore) throws {
    try finish(
      indexesAndTriggers: archived.schema.objects,
      journalMode: archived.header.journalMode ?? "wal")
  }
}
