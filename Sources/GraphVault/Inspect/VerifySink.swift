import ArchiveFormat
import ObjectModel
import ObjectStore

/// Where `verify` sends an archive's content once the scan passed it: no store is written.
/// What only SQLite can judge is judged by SQLite, in private temporary databases (kept in
/// SQLite's page cache, spilled to unnamed temporary files when large, gone when closed), as
/// a restore's store would judge it: the rows of tables outside the model (their keys and
/// constraints, their indexes) and the values under the unique indexes of the model's tables
/// (``UniquenessCheck``). So `verify` fails exactly where `restore` would, without holding the
/// objects.
final class VerifySink: ObjectSink {
  /// Where the objects checked are counted.
  private let meter: ProgressMeter?
  private var loader: StoreLoader?
  private var otherObjects: [CoreDataStore.SchemaObject] = []
  private var uniqueness: UniquenessCheck?

  /// A sink counting what it checks on `meter`.
  init(meter: ProgressMeter? = nil) { self.meter = meter }

  func begin(_ store: ArchivedStore) throws {
    meter?.setTotal(objects: store.header.expectedObjects?.values.reduce(0, +))
    let others = Set(store.otherTables.map { $0.uppercased() })
    otherObjects = store.schema.objects.filter { others.contains($0.table.uppercased()) }
    let loader = try StoreLoader(path: StoreLoader.privateTemporary)
    try loader.createTables(otherObjects)
    self.loader = loader
    uniqueness = try UniquenessCheck(schema: store.schema, layout: store.layout)
  }

  func take(_ objects: ObjectChunk, from member: String) throws {
    meter?.begin(ArchiveLayout.entity(ofObjectsMember: member) ?? member)
    meter?.add(objects: objects.count)
    guard let uniqueness else { return }
    switch objects {
    case .columns(let batch):
      try uniqueness.add(batch)
    case .records(let records):
      // Every entity's objects are added: a table's coming tells the check another's are in.
      for (record, _) in records { try uniqueness.add(record) }
    case .objects, .encoded:
      preconditionFailure("an archive's chunks decode to columns or records")
    }
  }

  func take(rows: [[String: AttributeValue]], of table: String, from member: String) throws {
    for row in rows { try loader?.insertRow(into: table, row) }
  }

  func finish() throws {
    try loader?.finish(indexesAndTriggers: otherObjects, journalMode: "memory")
    try uniqueness?.finish()
  }
}
