import ObjectModel
import ObjectStore
import PropertyList

/// The migration stage of an object stream: objects of the source's model in, objects of the
/// target version out, through every hop of the plan made when the stream begins. A chunk of
/// columns is migrated column by column where every hop allows it (unchanged columns go on as
/// they came), else object by object into object values and loose links. The head it gives
/// on is the store at the target version; when the source is at that version already, every
/// chunk goes on as it came.
package final class ObjectMigration: ObjectStage {
  /// What the migration goes to, and how.
  package struct Target {
    /// The model versions.
    package var set: ModelVersionSet
    /// The version to reach (the set's current one when nil).
    package var version: String?
    /// A mapping file's rules.
    package var mapping: MappingFile?
    /// The apps' mapping models.
    package var models: [MappingModel]
    /// Custom stages.
    package var stages: [MigrationStage]
    /// What messages call the source's model, given it.
    package var sourceName: (ObjectModel) -> String

    /// Migrating into `set`'s `version`.
    package init(
      set: ModelVersionSet, version: String? = nil, mapping: MappingFile? = nil,
      models: [MappingModel] = [], stages: [MigrationStage] = [],
      sourceName: @escaping (ObjectModel) -> String = { _ in "the archive's model" }
    ) {
      self.set = set
      self.version = version
      self.mapping = mapping
      self.models = models
      self.stages = stages
      self.sourceName = sourceName
    }
  }

  /// The persistent-history tables: their rows name entities and columns of the source's
  /// model, so they do not survive a model change.
  package static let historyTables = StoreSchema.persistentHistoryTables

  private let target: Target
  private var run: MigrationRun?
  /// The target's layout: where migrated columns kept as stored go.
  private var targetLayout: StoreLayout?
  private var droppedHistory: [String: Int] = [:]
  private var notes: [String] = []
  /// The version the objects leave at (the source's own when no hop was needed).
  package private(set) var modelVersion: String?
  /// The migration's report, once the stream has ended; nil when no hop was needed.
  package private(set) var report: MigrationReport?

  /// A stage migrating into `target`.
  package init(_ target: Target) { self.target = target }

  /// The plan, once the stream has begun; nil when no hop was needed.
  package var plan: MigrationPlan? { run?.plan }

  package func begin(_ head: StoreHead) throws -> StoreHead {
    let plan = try MigrationPlan.make(
      source: head.model, sourceName: target.sourceName(head.model), schema: head.snapshot,
      set: target.set, targetVersion: target.version, mapping: target.mapping,
      models: target.models, stages: target.stages)
    guard !plan.hops.isEmpty else {
      modelVersion = head.model.versionName
      return head
    }
    modelVersion = plan.targetVersion
    let run = try MigrationRun(
      plan: plan, archiveModel: head.model, schema: head.snapshot, entityRows: head.entityRows)
    try run.start()
    self.run = run
    let schema = try StoreSchema(model: plan.target, persistentHistory: head.hasPersistentHistory)
    let snapshot = try SchemaSnapshot(of: schema)
    let emptyRows = schema.entityRows(maxima: [:])
    targetLayout = try StoreLayout(
      model: plan.target, snapshot: snapshot,
      entityNumbers: CoreDataStore.entityNumbers(for: plan.target, rows: emptyRows))
    let (metadata, hashNote) = Self.metadata(head.metadata, for: plan.target)
    if let hashNote { notes.append(hashNote) }
    var migrated = StoreHead(
      model: plan.target,
      schemaObjects: schema.schemaObjects
        + Self.applicationObjects(of: head.schemaObjects, layout: run.sourceLayout),
      snapshot: snapshot, hasPersistentHistory: head.hasPersistentHistory,
      entityRows: emptyRows, metadata: metadata,
      modelCache: try CompiledModelWriter.modelCache(plan.target), uuid: head.uuid,
      journalMode: head.journalMode)
    migrated.finalEntityRows = { [run] in schema.entityRows(maxima: run.maxima) }
    migrated.expectedObjects = head.expectedObjects
    // Each entity's objects stay in key order through the hops; a store's sink writes their
    // pages itself until one cannot go that way (an object made in a hop, a link stored in
    // another row), and that one and the rest go through SQL.
    migrated.comesInKeyOrder = head.comesInKeyOrder
    return migrated
  }

  package func pass(_ chunk: ObjectChunk) throws -> [ObjectChunk] {
    guard let run else { return [chunk] }
    if case .encoded(let encoded) = chunk { return try pass(encoded.decoded()) }
    if case .columns(let batch) = chunk {
      switch try run.migrate(batch, into: targetLayout) {
      case .migrated(let migrated): return [.columns(migrated)]
      case .dropped: return []
      case .objectByObject: break
      }
    }
    var objects: [ObjectValue] = []
    var links: [LooseLink] = []
    for (record, manyToMany) in chunk.storedRecords ?? [] {
      let migrated = try run.migrate(run.migrating(record, manyToMany: manyToMany))
      objects += migrated.objects
      links += migrated.links
    }
    if case .objects(let values, let loose) = chunk {
      // Values already in the model's terms (a migration before this one).
      for value in values {
        let migrated = try run.migrate(value)
        objects += migrated.objects
        links += migrated.links
      }
      links += loose
    }
    return objects.isEmpty && links.isEmpty ? [] : [.objects(objects, links: links)]
  }

  package func pass(rows: [[String: AttributeValue]], of table: String) throws
    -> [[String: AttributeValue]]
  {
    guard run != nil, Self.historyTables.contains(table) else { return rows }
    droppedHistory[table, default: 0] += rows.count
    return []
  }

  package func finish() throws -> [ObjectChunk] {
    guard let run else { return [] }
    var notes: [String] = []
    for (table, count) in droppedHistory.sorted(by: { $0.key < $1.key }) {
      notes.append(Self.historyNote(table: table, count: count))
    }
    report = run.report(notes: notes + self.notes)
    return []
  }

  /// Runs the custom stages' `after` on the store made of the stream (not yet in place) at
  /// `path`, with a context at the target version; their changes are saved.
  package func finishStore(at path: String) throws {
    guard let plan else { return }
    let afters = plan.stages.compactMap(\.after)
    guard !afters.isEmpty else { return }
    // Stages see transformable values as bytes unless Core Data's transformers read them; a
    // model naming an app's own transformer must not stop the migration.
    var transformers = ValueTransformerRegistry.standard
    transformers.refusesUnknownNames = false
    let context = try ObjectContext(
      storePath: path, model: plan.target, transformers: transformers)
    for after in afters { try after(context) }
    try context.save()
  }

  /// Tables an application added beside Core Data's (with their indexes and triggers), among
  /// `objects` laid out by `layout`: carried into a migrated store as they are.
  private static func applicationObjects(
    of objects: [CoreDataStore.SchemaObject], layout: StoreLayout
  ) -> [CoreDataStore.SchemaObject] {
    let modelTables = Set(layout.tables.map(\.name) + layout.joins.map(\.name))
    let bookkeeping = Set(StoreSchema.bookkeepingTables)
    return objects.filter {
      !modelTables.contains($0.table) && !bookkeeping.contains($0.table)
        && !historyTables.contains($0.table) && !$0.table.hasPrefix("sqlite_")
    }
  }

  /// What a migration says of the persistent-history rows of `table` it does not carry over.
  package static func historyNote(table: String, count: Int) -> String {
    "\(table): \(count) persistent-history rows describe the old model and are not carried over"
  }

  /// The source's metadata for a store at `target`: the version identifiers, and the entity
  /// version hashes with their digest and checksum (carried from a `.momd`, else computed),
  /// and a note naming the entities whose computed hash is known not to be Core Data's. Other
  /// keys are kept.
  package static func metadata(_ source: [UInt8], for target: ObjectModel) -> ([UInt8], String?) {
    var kept = (try? PropertyListValue(binaryPropertyList: source))?.dictionaryValue ?? [:]
    let made = StoreMetadata.make(
      for: target,
      frameworkVersion: kept["NSPersistenceFrameworkVersion"]?.integerValue
        ?? StoreMetadata.defaultFrameworkVersion)
    // Core Data before about 2019 (framework 1044) wrote no checksum key: keep to the
    // source's key set.
    let checksumKey = "NSStoreModelVersionChecksumKey"
    let hadChecksum = kept.isEmpty || kept[checksumKey] != nil
    for key in [
      "NSStoreModelVersionHashes", "NSStoreModelVersionHashesDigest", checksumKey,
      "NSStoreModelVersionIdentifiers", "NSStoreModelVersionHashesVersion",
    ] where key != checksumKey || hadChecksum {
      kept[key] = made[key]
    }
    for (key, value) in made where kept[key] == nil && key != checksumKey {
      kept[key] = value
    }
    let unreproduced = target.unreproducedVersionHashes
    let note =
      unreproduced.isEmpty
      ? nil
      : "the version hashes of \(unreproduced.keys.sorted().joined(separator: ", ")) are computed but not Core Data's (\(unreproduced.values.sorted()[0])); pass the compiled .momd as --model to write Apple's"
    return (PropertyListValue.dictionary(kept).binaryPropertyList(), note)
  }
}
