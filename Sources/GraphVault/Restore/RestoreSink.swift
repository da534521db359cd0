import ArchiveFormat
import Foundation
import Migration
import ObjectModel
import ObjectStore
import PropertyList

/// Where a restore's objects go once the archive's scan passed them: straight into a store at
/// the archive's version, through a migration into a store at the target version, or (a dry
/// run) through the migration only.
final class RestoreSink: ObjectSink {
  /// The persistent-history tables: their rows name entities and columns of the archive's
  /// model, so they do not survive a model change.
  static let historyTables = StoreSchema.persistentHistoryTables
  static let bookkeepingTables = Set(ArchivedStore.bookkeepingTables)

  private let target: RestoreService.RestoreTarget
  private let path: String?
  private var archived: ArchivedStore!
  private var loader: StoreLoader?
  private var run: MigrationRun?
  private var writer: ObjectValueWriter?
  private var targetSchema: StoreSchema?
  private var schemaObjects: [CoreDataStore.SchemaObject] = []
  private var droppedHistory: [String: Int] = [:]
  /// The store's `Z_UUID`: the source's.
  private var uuid = ""
  /// The version the store is restored at.
  private(set) var modelVersion: String?
  /// The migration's report, once finished.
  private(set) var report: MigrationReport?

  /// Where the objects restored are counted.
  private let meter: ProgressMeter?

  /// A sink writing a store at `path` (nothing when nil: a dry run) at `target`'s version,
  /// counting what it restores on `meter`.
  init(target: RestoreService.RestoreTarget, path: String?, meter: ProgressMeter? = nil) {
    self.target = target
    self.path = path
    self.meter = meter
  }

  func begin(_ archived: ArchivedStore) throws {
    self.archived = archived
    meter?.setTotal(objects: archived.header.expectedObjects?.values.reduce(0, +))
    uuid = archived.header.sourceUUID ?? UUID().uuidString
    var plan: MigrationPlan?
    if let set = target.set {
      let made = try MigrationPlan.make(
        source: archived.model, sourceName: target.sourceName(archived.model),
        schema: archived.schema.snapshot, set: set,
        targetVersion: target.version, mapping: target.mapping, models: target.models,
        stages: target.stages)
      plan = made.hops.isEmpty ? nil : made
    }
    guard let plan else {
      modelVersion = archived.model.versionName
      schemaObjects = archived.schema.objects
      guard let path else { return }
      let loader = try StoreLoader.restoring(archived, at: path, uuid: uuid)
      // The rows of a whole restore arrive in key order: written without SQLite, page by page.
      try loader.writeTablesDirectly()
      self.loader = loader
      return
    }
    modelVersion = plan.targetVersion
    let run = try MigrationRun(
      plan: plan, archiveModel: archived.model, schema: archived.schema.snapshot,
      entityRows: archived.entityRows)
    try run.start()
    self.run = run
    let schema = try StoreSchema(
      model: plan.target, persistentHistory: archived.schema.hasPersistentHistory)
    targetSchema = schema
    schemaObjects =
      schema.schemaObjects + Self.applicationObjects(of: archived, layout: run.sourceLayout)
    guard let path else { return }
    let loader = try StoreLoader(path: path)
    try loader.createTables(schemaObjects)
    try loader.prepare(model: plan.target, entityRows: schema.entityRows(maxima: [:]))
    self.loader = loader
    writer = try ObjectValueWriter(loader: loader)
  }

  /// Tables an application added beside Core Data's (with their indexes and triggers): carried
  /// into a migrated store as they are.
  private static func applicationObjects(of archived: ArchivedStore, layout: StoreLayout)
    -> [CoreDataStore.SchemaObject]
  {
    let modelTables = Set(layout.tables.map(\.name) + layout.joins.map(\.name))
    return archived.schema.objects.filter {
      !modelTables.contains($0.table) && !bookkeepingTables.contains($0.table)
        && !historyTables.contains($0.table) && !$0.table.hasPrefix("sqlite_")
    }
  }

  /// Restores one archived object (migrated, when migrating).
  func insert(_ record: ObjectRecord, manyToMany: [String: [(Int64, Int64?)]]) throws {
    guard let run else {
      try loader?.insert(record, manyToMany: manyToMany)
      return
    }
    let (objects, links) = try run.migrate(run.migrating(record, manyToMany: manyToMany))
    guard let writer else { return }
    for object in objects { try writer.write(object) }
    for link in links { try writer.write(link) }
  }

  /// Restores a chunk's objects: a batch straight into a store at the archive's version, or
  /// migrated by columns where the hops allow it, else object by object.
  func take(_ objects: ObjectChunk, from member: String) throws {
    meter?.begin(ArchiveLayout.entity(ofObjectsMember: member) ?? member)
    defer { meter?.add(objects: objects.count) }
    if case .columns(let batch) = objects {
      guard let run else {
        try loader?.insert(batch)
        return
      }
      switch try run.migrate(batch, into: loader?.layout) {
      case .migrated(let migrated):
        try loader?.insert(migrated)
        return
      case .dropped: return
      case .objectByObject: break
      }
    }
    // An archive's chunks are columns or records.
    for (record, manyToMany) in objects.storedRecords ?? [] {
      try insert(record, manyToMany: manyToMany)
    }
  }

  /// Restores the rows of a table the model does not describe.
  func take(rows: [[String: AttributeValue]], of table: String, from member: String) throws {
    meter?.begin("table \(table)")
    if run != nil && Self.historyTables.contains(table) {
      droppedHistory[table, default: 0] += rows.count
      return
    }
    for row in rows { try loader?.insertRow(into: table, row) }
  }

  /// Writes the bookkeeping of a migrated store, creates indexes and triggers, runs the custom
  /// stages' `after` on the finished store; keeps the migration's report.
  func finish() throws {
    guard let run, let targetSchema else {
      try loader?.finish(restoring: archived)
      return
    }
    let journalMode = archived.header.journalMode ?? "wal"
    var notes: [String] = []
    for (table, count) in droppedHistory.sorted(by: { $0.key < $1.key }) {
      notes.append(Self.historyNote(table: table, count: count))
    }
    let (metadata, hashNote) = Self.metadata(archived.metadata, for: run.plan.target)
    if let hashNote { notes.append(hashNote) }
    if let loader {
      try loader.writeBookkeeping(
        entityRows: targetSchema.entityRows(maxima: run.maxima), uuid: uuid,
        metadata: metadata, modelCache: try CompiledModelWriter.modelCache(run.plan.target))
      try loader.finish(indexesAndTriggers: schemaObjects, journalMode: journalMode)
      let afters = run.plan.stages.compactMap(\.after)
      if !afters.isEmpty {
        // Stages see transformable values as bytes unless Core Data's transformers read them;
        // a model naming an app's own transformer must not stop the restore.
        var transformers = ValueTransformerRegistry.standard
        transformers.refusesUnknownNames = false
        let context = try ObjectContext(
          storePath: loader.path, model: run.plan.target, transformers: transformers)
        for after in afters { try after(context) }
        try context.save()
      }
    }
    report = run.report(notes: notes)
  }

  /// What a migration says of the persistent-history rows of `table` it does not carry over.
  static func historyNote(table: String, count: Int) -> String {
    "\(table): \(count) persistent-history rows describe the old model and are not carried over"
  }

  /// The archive's metadata for a store at `target`: the version identifiers, and the entity
  /// version hashes with their digest and checksum (carried from a `.momd`, else computed),
  /// and a note naming the entities whose computed hash is known not to be Core Data's. Other
  /// keys are kept.
  static func metadata(_ archived: [UInt8], for target: ObjectModel) -> ([UInt8], String?) {
    var source = (try? PropertyListValue(binaryPropertyList: archived))?.dictionaryValue ?? [:]
    let made = StoreMetadata.make(
      for: target,
      frameworkVersion: source["NSPersistenceFrameworkVersion"]?.integerValue
        ?? StoreMetadata.defaultFrameworkVersion)
    // Core Data before about 2019 (framework 1044) wrote no checksum key: keep to the
    // source's key set.
    let checksumKey = "NSStoreModelVersionChecksumKey"
    let hadChecksum = source.isEmpty || source[checksumKey] != nil
    for key in [
      "NSStoreModelVersionHashes", "NSStoreModelVersionHashesDigest", checksumKey,
      "NSStoreModelVersionIdentifiers", "NSStoreModelVersionHashesVersion",
    ] where key != checksumKey || hadChecksum {
      source[key] = made[key]
    }
    for (key, value) in made where source[key] == nil && key != checksumKey {
      source[key] = value
    }
    let unreproduced = target.unreproducedVersionHashes
    let note =
      unreproduced.isEmpty
      ? nil
      : "the version hashes of \(unreproduced.keys.sorted().joined(separator: ", ")) are computed but not Core Data's (\(unreproduced.values.sorted()[0])); pass the compiled .momd as --model to write Apple's"
    return (PropertyListValue.dictionary(source).binaryPropertyList(), note)
  }
}
