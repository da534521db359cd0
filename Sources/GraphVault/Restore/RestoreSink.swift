import ArchiveFormat
import Foundation
import Migration
import ObjectModel
import ObjectStore
import PropertyList

/// Where a restore's records go: straight into a store at the archive's version, through a
/// migration into a store at the target version, or (a dry run) through the migration only.
final class RestoreSink {
  /// What the archive holds before its records.
  struct Archived {
    let model: ObjectModel
    let schema: [CoreDataStore.SchemaObject]
    let entityRows: [CoreDataStore.EntityRow]
    let metadata: [UInt8]
    let modelCache: [UInt8]?
    let uuid: String
  }

  /// The persistent-history tables: their rows name entities and columns of the archive's
  /// model, so they do not survive a model change.
  static let historyTables = StoreSchema.persistentHistoryTables
  static let bookkeepingTables: Set<String> = ["Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE"]

  private let archived: Archived
  private let loader: StoreLoader?
  private let run: MigrationRun?
  private let writer: MigrationWriter?
  private let targetSchema: StoreSchema?
  private var schemaObjects: [CoreDataStore.SchemaObject]
  private var droppedHistory: [String: Int] = [:]
  /// The version the store is restored at.
  let modelVersion: String?

  init(archived: Archived, target: RestoreService.RestoreTarget, path: String?) throws {
    self.archived = archived
    var plan: MigrationPlan?
    if let set = target.set {
      let made = try MigrationPlan.make(
        source: archived.model, schemaObjects: archived.schema, set: set,
        targetVersion: target.version, mapping: target.mapping, stages: target.stages)
      plan = made.hops.isEmpty ? nil : made
    }
    guard let plan else {
      modelVersion = archived.model.versionName
      run = nil
      writer = nil
      targetSchema = nil
      schemaObjects = archived.schema
      guard let path else {
        loader = nil
        return
      }
      let loader = try StoreLoader(path: path)
      try loader.createTables(archived.schema)
      try loader.prepare(model: archived.model, entityRows: archived.entityRows)
      try loader.writeBookkeeping(
        entityRows: archived.entityRows, uuid: archived.uuid, metadata: archived.metadata,
        modelCache: archived.modelCache)
      self.loader = loader
      return
    }
    modelVersion = plan.targetVersion
    let run = try MigrationRun(
      plan: plan, archiveModel: archived.model, schemaObjects: archived.schema,
      entityRows: archived.entityRows)
    try run.start()
    self.run = run
    let schema = try StoreSchema(
      model: plan.target,
      persistentHistory: archived.schema.contains {
        $0.type == "table" && Self.historyTables.contains($0.name)
      })
    targetSchema = schema
    schemaObjects =
      schema.schemaObjects + Self.applicationObjects(of: archived, layout: run.sourceLayout)
    guard let path else {
      loader = nil
      writer = nil
      return
    }
    let loader = try StoreLoader(path: path)
    try loader.createTables(schemaObjects)
    try loader.prepare(model: plan.target, entityRows: schema.entityRows(maxima: [:]))
    self.loader = loader
    writer = try MigrationWriter(loader: loader)
  }

  /// Tables an application added beside Core Data's (with their indexes and triggers): carried
  /// into a migrated store as they are.
  private static func applicationObjects(of archived: Archived, layout: StoreLayout)
    -> [CoreDataStore.SchemaObject]
  {
    let modelTables = Set(layout.tables.map(\.name) + layout.joins.map(\.name))
    return archived.schema.filter {
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

  /// Restores a chunk's objects: a batch straight into a store at the archive's version, else
  /// object by object.
  func insert(_ objects: DecodedChunk) throws {
    if run == nil, case .batch(let batch) = objects {
      try loader?.insert(batch)
      return
    }
    for (record, manyToMany) in objects.records { try insert(record, manyToMany: manyToMany) }
  }

  /// Restores one row of a table the model does not describe.
  func insertRow(into table: String, _ row: [String: AttributeValue]) throws {
    if run != nil && Self.historyTables.contains(table) {
      droppedHistory[table, default: 0] += 1
      return
    }
    try loader?.insertRow(into: table, row)
  }

  /// Writes the bookkeeping of a migrated store, creates indexes and triggers, runs the custom
  /// stages' `after` on the finished store; the migration's report.
  func finish(journalMode: String) throws -> MigrationReport? {
    guard let run, let targetSchema else {
      try loader?.finish(indexesAndTriggers: schemaObjects, journalMode: journalMode)
      return nil
    }
    var notes: [String] = []
    for (table, count) in droppedHistory.sorted(by: { $0.key < $1.key }) {
      notes.append(
        "\(table): \(count) persistent-history rows describe the old model and are not carried over"
      )
    }
    let (metadata, hashNote) = Self.metadata(archived.metadata, for: run.plan.target)
    if let hashNote { notes.append(hashNote) }
    if let loader {
      try loader.writeBookkeeping(
        entityRows: targetSchema.entityRows(maxima: run.maxima), uuid: archived.uuid,
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
    return run.report(notes: notes)
  }

  /// The archive's metadata for a store at `target`: the version identifiers, and Apple's
  /// entity version hashes with their digest and checksum when the target model carries them
  /// (a `.momd`); otherwise without them, and a note saying so. Other keys are kept.
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
    let note =
      made["NSStoreModelVersionHashes"] == nil
      ? "the target model carries no entity version hashes (Apple's cannot be computed from an .xcdatamodeld): the metadata has none; pass the compiled .momd as --model to write them"
      : nil
    return (PropertyListValue.dictionary(source).binaryPropertyList(), note)
  }
}
