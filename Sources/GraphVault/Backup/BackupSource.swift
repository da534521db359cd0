import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore
import PropertyList

/// A backup's object stream: a store read in one read transaction, its bookkeeping included
/// (`Z_MAX` must agree with the rows, whatever an app commits meanwhile), with the change
/// ledger worked out in it. Its head is what the archive holds before the objects; then each
/// concrete entity's objects, in key order, and the rows of the tables outside the model.
///
/// A full archive's objects are read and encoded by segments of keys on the backup's
/// connection and a ``SnapshotTwin``'s at once (``SegmentedObjects``), and come as chunks in
/// the archive's encoding; an incremental archive holds the objects written since its parent,
/// read by key a few hundred at a time with their join rows. The store is never changed.
final class BackupSource: ObjectSource {
  typealias Head = ArchiveHead

  private let store: CoreDataStore
  private let model: ObjectModel
  private let layout: StoreLayout
  private let options: BackupService.Options
  private let now: Date
  private let tip: Result<ChainTip, ChainTip.NoParent>?
  private let twin: SnapshotTwin?

  /// What the backup decided: the parent of an incremental archive, or why a full one was
  /// written instead (once the head was given).
  private(set) var written = BackupService.Written()
  /// Whether every event was given.
  private(set) var isSound = false
  /// A full archive's ledger whose sketches are worked out as the objects are read (format 5).
  private var latePlan: LedgerPlan?
  /// How each hierarchy's rows are hashed as they are read, by root entity.
  private var hashing: [String: (rows: RowHashing, cells: Int)] = [:]
  /// What was, by set name: the sketch and how many rows went in.
  private var hashed: [String: LedgerHashing.Sketched] = [:]
  /// The sketches of such a ledger, once every event was given.
  private var sketches: [String: ChangeSketch]?
  /// The objects of each entity a full archive holds, counted for its header.
  private var expected: [String: Int]?

  var headPlace: String { store.path }

  /// How many objects go by between two updates of the progress meter (a power of two).
  static let progressStep = 4096

  /// The stream of `store` in `model` (laid out as `layout`), for a backup with `options` made
  /// `now`, building on `tip` when incremental, read on `twin` too when given (opened before
  /// the stream begins).
  init(
    store: CoreDataStore, model: ObjectModel, layout: StoreLayout, options: BackupService.Options,
    now: Date, tip: Result<ChainTip, ChainTip.NoParent>?, twin: SnapshotTwin?
  ) {
    self.store = store
    self.model = model
    self.layout = layout
    self.options = options
    self.now = now
    self.tip = tip
    self.twin = twin
  }

  func produce(_ emit: (StreamEvent<ArchiveHead>) throws -> Void) throws {
    try store.read { store in
      // The twin reads this snapshot too, on its own thread, begun now that the transaction
      // has begun, or not at all.
      let worker = twin.map(TwinWorker.init(twin:))
      defer { worker?.close() }
      let (head, changes) = try head(worker: worker)
      try emit(.begin(head))
      // What the index counts is what the archive holds.
      for entity in head.counted.entities {
        try objects(of: entity, changes: changes, worker: worker, emit)
      }
      for table in head.counted.tables { try rows(of: table, changes: changes, emit) }
      if let latePlan {
        sketches = try latePlan.sketches(hashed: hashed, store: store, worker: worker)
      }
    }
    isSound = true
  }

  /// The sketches of a full archive of format 5, hashed as its objects were read and its
  /// other sets after them: what goes after the objects (``ArchiveLayout/sketches``), asked
  /// for by the archive's sink once the stream ended sound.
  func lateSketches() -> [String: ChangeSketch] {
    guard let sketches else {
      preconditionFailure("a full archive's sketches are asked for only after its objects")
    }
    return sketches
  }

  /// What the archive holds before the objects, with the ledger: an incremental archive holds
  /// what it found changed (its ledger's, returned too).
  private func head(worker: TwinWorker?) throws -> (ArchiveHead, ChangeLedger?) {
    let modelCache = try store.modelCacheBytes()
    let bookkeeping = try store.currentBookkeeping()
    var plan: LedgerPlan?
    if options.formatVersion >= ArchiveLayout.ledgerFormat {
      switch tip {
      case .success(let tip)?:
        if tip.fingerprint != model.fingerprint {
          written.fullBecause = "the store's model is not that of \(tip.parent.name)"
        } else {
          switch try LedgerPlan.incremental(
            store: store, layout: layout, tip: tip, modelCache: modelCache, worker: worker)
          {
          case .success(let found):
            plan = found
            written.parent = tip.parent
          case .failure(let reason): written.fullBecause = reason.reason
          }
        }
      case .failure(let reason)?: written.fullBecause = reason.reason
      case nil: break
      }
      if plan == nil {
        // Format 5's sketches follow the objects: hashed as the objects are read.
        let later = options.formatVersion >= ArchiveLayout.lateSketchesFormat
        let full = try LedgerPlan.full(
          store: store, layout: layout, modelCache: modelCache, seed: options.ledgerSeed,
          worker: worker, later: later)
        if later {
          latePlan = full
          hashing = try full.objectHashing(store: store)
        }
        plan = full
      }
    }
    let changes = written.parent == nil ? nil : plan?.ledger
    // Counted in the same transaction as the rows are read: the header records them for a
    // restore's progress, and the scan of a restore holds the archive to them. An incremental
    // archive's are its changed objects, counted as written.
    let expected = changes == nil ? try store.objectCounts(layout: layout) : nil
    self.expected = expected
    options.meter?.setTotal(
      objects: expected?.values.reduce(0, +)
        ?? changes?.written.filter { $0.key.hasPrefix("objects/") }.values.map(\.count)
        .reduce(0, +) ?? 0)
    let header = ArchiveHeader(
      expectedObjects: expected, formatVersion: options.formatVersion,
      created: PropertyListDate(secondsSince1970: now.timeIntervalSince1970),
      compression: options.compression, tool: "graphvault \(ToolInfo.version)",
      sourcePath: options.recordedSourcePath
        ?? URL(fileURLWithPath: store.path).standardizedFileURL.path,
      sourceUUID: bookkeeping.uuid, journalMode: try store.journalMode(), model: model,
      parent: written.parent)
    var head = ArchiveHead(
      header: header, model: model, metadata: bookkeeping.metadata,
      schemaObjects: try store.schemaObjects(), entityRows: bookkeeping.entityRows,
      modelCache: plan?.carriesModelCache ?? true ? modelCache : nil, changes: plan?.ledger)
    // The index counts what the archive holds, even where no object or row comes: every
    // entity and table of a full archive, those of an incremental one written since its parent.
    head.counted = (
      model.numberedEntities.filter { !$0.isAbstract }.map(\.name).filter {
        keys(of: $0, in: changes).map { !$0.isEmpty } ?? true
      },
      try store.otherTables(besides: layout).filter { holdsRows(of: $0, in: changes) }
    )
    return (head, changes)
  }

  /// The keys of `entity`'s objects an archive with `changes` holds: every one (nil) in a full
  /// archive, else those written since its parent (every one when its set is held whole).
  private func keys(of entity: String, in changes: ChangeLedger?) -> [Int64]? {
    let root = "objects/\(model.root(of: entity)?.name ?? entity)"
    return changes.flatMap { $0.replaced.contains(root) ? nil : $0.written[root] ?? [] }
  }

  /// Whether an archive with `changes` holds rows of `table`: a full one does, an incremental
  /// one those written since its parent, or all of them for a table without a key that changed.
  private func holdsRows(of table: String, in changes: ChangeLedger?) -> Bool {
    let name = "tables/\(table)"
    guard let changes else { return true }
    return changes.written[name] != nil || changes.replaced.contains(name)
  }

  /// The objects of `entity` the archive holds (``keys(of:in:)``).
  private func objects(
    of entity: String, changes: ChangeLedger?, worker: TwinWorker?,
    _ emit: (StreamEvent<ArchiveHead>) throws -> Void
  ) throws {
    let lineage = Set(model.lineage(of: entity).map(\.name))
    let joins = layout.joins.filter { lineage.contains($0.entity) }
    let keys = keys(of: entity, in: changes)
    let place = "\(entity) objects"
    options.meter?.begin(entity)
    // A full archive's columns are read and encoded by segments of keys, on the twin's
    // connection as well as this one.
    if keys == nil && options.formatVersion >= 2 {
      let root = model.root(of: entity)?.name ?? entity
      let written = try SegmentedObjects.write(
        .init(
          entity: entity, joins: joins, model: model, layout: layout,
          formatVersion: options.formatVersion, hashing: hashing[root],
          objects: expected.map { $0[entity] ?? 0 }), store: store,
        worker: worker
      ) { encoded in
        try emit(.objects(.encoded(encoded), place: place))
        options.meter?.add(objects: encoded.count)
      }
      // Merged in place: a sketch of millions of rows is megabytes.
      if let sketch = written.sketch {
        let read = LedgerHashing.Sketched(sketch: sketch, elements: written.objects)
        let name = "objects/\(root)"
        if hashed[name] == nil { hashed[name] = read } else { hashed[name]!.merge(read) }
      }
      return
    }
    var columns = ColumnChunkEncoder(model: model, formatVersion: options.formatVersion)
    var batch = ObjectBatchBuilder(entity: entity)
    var count = 0
    // One buffer of join rows per relationship, refilled for each object.
    var manyToMany = joins.map { (name: $0.relationship.name, rows: [JoinCursor.Pair]()) }
    var cursors: [JoinCursor] = []
    func flush() throws {
      if let encoded = EncodedColumns(&columns, entity: entity) {
        try emit(.objects(.encoded(encoded), place: place))
        columns.reset()
      } else if batch.count > 0 {
        try emit(.objects(.columns(batch.build()), place: place))
        batch = ObjectBatchBuilder(entity: entity)
      }
    }
    try forEachObjectRow(of: entity, keys: keys) { part in
      cursors = try joins.map { try store.joinCursor($0, owners: part) }
    } body: { row in
      for (index, cursor) in cursors.enumerated() {
        try cursor.rows(for: row.primaryKey, into: &manyToMany[index].rows)
      }
      // Format 1's records are cut into chunks by the archive's writer.
      if options.formatVersion == 1 {
        batch.add(row, manyToMany: manyToMany)
        if batch.count >= StoreSource.objectsPerChunk
          || batch.byteCount >= StoreSource.bytesPerChunk
        {
          try flush()
        }
      } else if columns.add(row, manyToMany: manyToMany) {
        try flush()
      }
      count += 1
      // Progress is counted a few thousand objects at a time, never per object.
      if count & (Self.progressStep - 1) == 0 { options.meter?.add(objects: Self.progressStep) }
    }
    try flush()
    options.meter?.add(objects: count & (Self.progressStep - 1))
  }

  /// The rows of `table` the archive holds (``holdsRows(of:in:)``).
  private func rows(
    of table: String, changes: ChangeLedger?, _ emit: (StreamEvent<ArchiveHead>) throws -> Void
  ) throws {
    let name = "tables/\(table)"
    let keys = changes?.written[name]
    options.meter?.begin("table \(table)")
    let place = "table \(table)"
    var batch: [[String: AttributeValue]] = []
    let add = { (row: [String: AttributeValue]) in
      batch.append(row)
      if batch.count == 1024 {
        try emit(.rows(batch, table: table, place: place))
        batch.removeAll(keepingCapacity: true)
      }
    }
    if let keys, let column = changes?.tableKeys[name] {
      try store.forEachRow(in: table, keyColumn: column, keys: keys, add)
    } else {
      try store.forEachRow(in: table, add)
    }
    if !batch.isEmpty { try emit(.rows(batch, table: table, place: place)) }
  }

  /// Calls `body` with the objects of `entity`: every one, or those of `keys` (ascending) a
  /// part at a time, `part` called with each part's keys before its objects (every object:
  /// once, with nil).
  private func forEachObjectRow(
    of entity: String, keys: [Int64]?, part: ([Int64]?) throws -> Void,
    body: (ObjectRow) throws -> Void
  ) throws {
    guard let keys else {
      try part(nil)
      try store.forEachObjectRow(of: entity, layout: layout, body)
      return
    }
    for slice in CoreDataStore.parts(of: keys).map(Array.init) {
      try part(slice)
      try store.forEachObjectRow(of: entity, layout: layout, keys: slice, body)
    }
  }
}
