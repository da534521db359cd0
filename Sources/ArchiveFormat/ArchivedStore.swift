import Foundation
import ObjectModel
import ObjectStore

/// What an archive holds before its objects, every part of it checked: the header, the model,
/// the source store's schema (read as data, ``CheckedSchema``), its `Z_PRIMARYKEY` rows,
/// metadata and model cache, and the model laid out on that schema.
package struct ArchivedStore {
  /// The header.
  package let header: ArchiveHeader
  /// The model the objects were written with.
  package let model: ObjectModel
  /// The source store's schema, checked against the model; the only schema a restore creates.
  package let schema: CheckedSchema
  /// The model mapped onto that schema, with the source's entity numbers.
  package let layout: StoreLayout
  /// The source's `Z_PRIMARYKEY` rows.
  package let entityRows: [CoreDataStore.EntityRow]
  /// The source's metadata (`Z_METADATA.Z_PLIST`), as stored: a property list dictionary.
  package let metadata: [UInt8]
  /// The source's `Z_MODELCACHE`, when it had one.
  package let modelCache: [UInt8]?
  /// The change ledger (format 3): what the next incremental backup compares with, and, in an
  /// incremental archive, what changed since its parent.
  package let changes: ChangeLedger?

  /// The tables that hold neither objects of the model nor its many-to-many rows, nor Core
  /// Data's bookkeeping: persistent-history tables and tables an app added. Rows arrive in
  /// `tables/` members only for these.
  package var otherTables: Set<String> {
    let known = Set(
      (layout.tables.map(\.name) + layout.joins.map(\.name) + StoreSchema.bookkeepingTables).map {
        $0.uppercased()
      })
    return Set(
      schema.statements.compactMap { statement -> String? in
        guard case .table(let table) = statement, !known.contains(table.name.uppercased())
        else { return nil }
        return table.name
      })
  }
}

extension ArchivedStore {
  /// The store the archive was taken from, as the head of its objects' stream: its schema,
  /// bookkeeping, identity (a new one when the header has none) and journal mode (WAL when
  /// the header does not say); its objects come table by table in key order.
  package var storeHead: StoreHead {
    var head = StoreHead(
      model: model, schemaObjects: schema.objects, snapshot: schema.snapshot,
      hasPersistentHistory: schema.hasPersistentHistory, entityRows: entityRows,
      metadata: metadata, modelCache: modelCache,
      uuid: header.sourceUUID ?? UUID().uuidString, journalMode: header.journalMode ?? "wal")
    head.expectedObjects = header.expectedObjects?.values.reduce(0, +)
    head.comesInKeyOrder = true
    return head
  }
}
