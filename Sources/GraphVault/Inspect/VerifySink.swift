import ArchiveFormat
import ObjectModel
import ObjectStore

/// Where `verify` sends an archive's content once the scan passed it: nothing is written. What
/// only SQLite can judge is judged by SQLite, in memory, as a restore's store would judge it:
/// the rows of tables outside the model (their keys and constraints, their indexes) and the
/// values under the unique indexes of the model's tables (``UniquenessCheck``). So `verify`
/// fails exactly where `restore` would, without holding the objects.
final class VerifySink: ArchiveSink {
  private var loader: StoreLoader?
  private var otherObjects: [CoreDataStore.SchemaObject] = []
  private var uniqueness: UniquenessCheck?

  func begin(_ store: ArchivedStore) throws {
    let others = Set(store.otherTables.map { $0.uppercased() })
    otherObjects = store.schema.objects.filter { others.contains($0.table.uppercased()) }
    let loader = try StoreLoader(path: StoreLoader.inMemory)
    try loader.createTables(otherObjects)
    self.loader = loader
    uniqueness = try UniquenessCheck(schema: store.schema, layout: store.layout)
  }

  func insert(_ objects: DecodedChunk, member: String) throws {
    let entity: String?
    switch objects {
    case .batch(let batch): entity = batch.entity
    case .records(let records): entity = records.first?.0.entity
    }
    guard let uniqueness, let entity, uniqueness.concerns(entity) else { return }
    for (record, _) in objects.records { try uniqueness.add(record) }
  }

  func insert(rows: [[String: AttributeValue]], into table: String, member: String) throws {
    for row in rows { try loader?.insertRow(into: table, row) }
  }

  func finish() throws {
    try loader?.finish(indexesAndTriggers: otherObjects, journalMode: "memory")
    try uniqueness?.finish()
  }
}
