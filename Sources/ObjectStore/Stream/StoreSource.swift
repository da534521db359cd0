import ObjectModel
import SQLite

/// An object stream read from a store, in one read transaction (the store's snapshot when the
/// stream begins): its head (``StoreHead``: the store as it is), then each concrete entity's
/// objects in key order as chunks of columns with their many-to-many rows, then the rows of
/// the tables its model does not describe.
///
/// The stream runs on the thread that calls ``next()`` (``ObjectPipeline``'s own);
/// nothing else may use the store's connection meanwhile.
package final class StoreSource: PulledSource {
  /// At most this many objects a chunk.
  package static let objectsPerChunk = 20_000
  /// A chunk ends once its texts and blobs hold this many bytes (an archive's chunks end at
  /// as many).
  package static let bytesPerChunk = 4 << 20

  private let store: CoreDataStore
  /// The model the objects are read in.
  package let model: ObjectModel
  private let layout: StoreLayout
  private var began = false
  private var ownTransaction = false
  private var finished = false
  private var entities: [String]
  private var tables: [String] = []
  private var objects: Objects?
  private var rows: (table: String, statement: Statement, names: [String])?

  /// The entity being read: its rows and its join rows.
  private struct Objects {
    let entity: String
    let reader: TableReader
    let joins: [(name: String, cursor: JoinCursor)]
    var more = true
  }

  /// A stream of `store`'s objects in `model`, which describes the store.
  /// - Throws: ``StoreError`` when `model` does not fit the store's schema.
  package init(store: CoreDataStore, model: ObjectModel) throws(StoreError) {
    self.store = store
    self.model = model
    layout = try store.layout(for: model)
    entities = model.numberedEntities
      .filter { !$0.isAbstract }.map(\.name)
  }

  deinit {
    if ownTransaction, store.database.isInTransaction {
      try? store.database.execute("ROLLBACK")
    }
  }

  /// Objects given per entity.
  package private(set) var objectCounts: [String: Int] = [:]
  /// Rows given per table the model does not describe.
  package private(set) var rowCounts: [String: Int] = [:]

  /// Whether the stream was read to its end.
  package var isSound: Bool { finished }

  /// The store's path.
  package var headPlace: String { store.path }

  package func next() throws -> StreamEvent<StoreHead>? {
    guard began else {
      began = true
      if !store.database.isInTransaction {
        try store.database.execute("BEGIN")
        ownTransaction = true
      }
      tables = try store.otherTables(besides: layout)
      return .begin(try head())
    }
    while true {
      if let chunk = try nextChunk() { return chunk }
      if let first = entities.first {
        entities.removeFirst()
        objects = try open(first)
        continue
      }
      if let rows = try nextRows() { return rows }
      if let table = tables.first {
        tables.removeFirst()
        let statement = try store.rowsStatement(of: table)
        rows = (table, statement, statement.columnNames)
        continue
      }
      if !finished {
        finished = true
        if ownTransaction {
          ownTransaction = false
          try store.database.execute("COMMIT")
        }
      }
      return nil
    }
  }

  /// The store as the head of its objects' stream.
  private func head() throws -> StoreHead {
    let schemaObjects = try store.schemaObjects()
    let bookkeeping = try store.currentBookkeeping()
    var head = StoreHead(
      model: model, schemaObjects: schemaObjects, snapshot: try store.schema(),
      hasPersistentHistory: schemaObjects.contains {
        $0.type == "table" && StoreSchema.persistentHistoryTables.contains($0.name)
      }, entityRows: bookkeeping.entityRows, metadata: bookkeeping.metadata,
      modelCache: try store.modelCacheBytes(), uuid: bookkeeping.uuid,
      journalMode: try store.journalMode())
    head.expectedObjects = try store.objectCounts(layout: layout).values.reduce(0, +)
    head.comesInKeyOrder = true
    return head
  }

  /// A reader of `entity`'s objects and their join rows.
  private func open(_ entity: String) throws -> Objects {
    let lineage = Set(model.lineage(of: entity).map(\.name))
    return Objects(
      entity: entity, reader: try store.reader(of: entity, layout: layout),
      joins: try layout.joins.filter { lineage.contains($0.entity) }.map {
        ($0.relationship.name, try store.joinCursor($0))
      })
  }

  /// The next chunk of the entity being read, nil once it has none left.
  private func nextChunk() throws -> StreamEvent<StoreHead>? {
    guard var reading = objects else { return nil }
    var builder = ObjectBatchBuilder(entity: reading.entity)
    var manyToMany = reading.joins.map { (name: $0.name, rows: [JoinCursor.Pair]()) }
    let joins = reading.joins.map(\.cursor)
    while reading.more, builder.count < Self.objectsPerChunk,
      builder.byteCount < Self.bytesPerChunk
    {
      let room = min(1024, Self.objectsPerChunk - builder.count)
      reading.more = try reading.reader.readObjectRows(upTo: room) { row in
        for (index, cursor) in joins.enumerated() {
          try cursor.rows(for: row.primaryKey, into: &manyToMany[index].rows)
        }
        builder.add(row, manyToMany: manyToMany)
      }
    }
    objects = reading.more ? reading : nil
    guard builder.count > 0 else { return nil }
    objectCounts[reading.entity, default: 0] += builder.count
    return .objects(.columns(builder.build()), place: "\(reading.entity) objects")
  }

  /// The next rows of the table being read, nil once it has none left.
  private func nextRows() throws -> StreamEvent<StoreHead>? {
    guard let (table, statement, names) = rows else { return nil }
    var batch: [[String: AttributeValue]] = []
    while batch.count < 1024, try statement.step() {
      batch.append(CoreDataStore.storedRow(of: statement, names: names))
    }
    if batch.count < 1024 {
      statement.reset()
      rows = nil
    }
    guard !batch.isEmpty else { return nil }
    rowCounts[table, default: 0] += batch.count
    return .rows(batch, table: table, place: "table \(table)")
  }
}
