import Migration
import ObjectModel
import ObjectStore
import SQLite
import TestSupport
import Testing

/// The migration stage of an object stream (``ObjectMigration``): the head it gives on, the
/// chunks and rows it lets through, and its report (models, batches and heads only, no
/// store); and what a store's sink makes of what it gives.
@Suite("The migration stage")
struct ObjectMigrationTests {
  /// The head of a stream of objects of `model`, as a whole archive gives it.
  static func head(_ model: ObjectModel) throws -> StoreHead {
    let (snapshot, rows) = try ColumnMigrationTests.schema(model)
    var head = StoreHead(
      model: model, schemaObjects: try StoreSchema(model: model).schemaObjects,
      snapshot: snapshot, hasPersistentHistory: false, entityRows: rows, metadata: [],
      modelCache: nil, uuid: "SHOP", journalMode: "wal")
    head.comesInKeyOrder = true
    head.expectedObjects = 4
    return head
  }

  static func stage(to version: String) throws -> ObjectMigration {
    let set = ModelVersionSet(
      name: "Shop",
      versions: [try ColumnMigrationTests.first(), try ColumnMigrationTests.second()],
      currentVersionName: "2")
    return ObjectMigration(ObjectMigration.Target(set: set, version: version))
  }

  @Test func aStreamAtTheTargetVersionGoesOnAsItCame() throws {
    let first = try ColumnMigrationTests.first()
    let stage = try Self.stage(to: "1")
    let head = try stage.begin(try Self.head(first))
    #expect(head.model == first && head.comesInKeyOrder && head.finalEntityRows == nil)
    let batch = try ColumnMigrationTests.items(try ColumnMigrationTests.layout(first))
    let passed = try stage.pass(.columns(batch))
    guard case .columns(let same)? = passed.first, passed.count == 1 else {
      Issue.record("the chunk was changed: \(passed)")
      return
    }
    #expect(same.storedColumns.map(\.name) == batch.storedColumns.map(\.name))
    #expect(try stage.pass(rows: [["Z_PK": .integer(1)]], of: "ACHANGE").count == 1)
    #expect(try stage.finish().isEmpty)
    #expect(stage.modelVersion == "1" && stage.report == nil)
  }

  @Test func aMigratingStageGivesTheTargetsStoreWithItsKeysKnownAtTheEnd() throws {
    let stage = try Self.stage(to: "2")
    let head = try stage.begin(try Self.head(try ColumnMigrationTests.first()))
    #expect(head.model == (try ColumnMigrationTests.second()))
    #expect(head.comesInKeyOrder && head.expectedObjects == 4 && head.uuid == "SHOP")
    #expect(head.schemaObjects.contains { $0.name == "ZLABEL" })
    #expect(!head.schemaObjects.contains { $0.name == "ZTAG" })
    #expect(head.finalEntityRows?().contains { $0.name == "Label" } == true)
    #expect(stage.modelVersion == "2")
  }

  @Test func objectsComeOutAsTheTargetsColumnsOrAsValues() throws {
    let first = try ColumnMigrationTests.first()
    let batch = try ColumnMigrationTests.items(try ColumnMigrationTests.layout(first))
    let stage = try Self.stage(to: "2")
    _ = try stage.begin(try Self.head(first))
    let byColumns = try stage.pass(.columns(batch))
    guard case .columns(let migrated)? = byColumns.first else {
      Issue.record("not migrated by columns: \(byColumns)")
      return
    }
    #expect(migrated.attributes.map(\.name).contains("stock"))
    #expect(!migrated.attributes.map(\.name).contains("weight"))
    let byValues = try stage.pass(.records(batch.records))
    guard case .objects(let objects, _)? = byValues.first else {
      Issue.record("not migrated object by object: \(byValues)")
      return
    }
    #expect(objects.map(\.primaryKey) == [1, 2, 3, 4])
    #expect(objects.allSatisfy { $0.attributes["stock"] == .integer(5) && $0.unmodelled.isEmpty })
    // Item 3's count was kept as text.
    #expect(objects[3].storedAsIs["count"] == .string("7"))
  }

  @Test func historyRowsAndUnmodelledValuesDoNotSurviveAModelChangeAndTheReportCountsThem()
    throws
  {
    let first = try ColumnMigrationTests.first()
    let stage = try Self.stage(to: "2")
    _ = try stage.begin(try Self.head(first))
    let rows: [[String: AttributeValue]] = [["Z_PK": .integer(1)], ["Z_PK": .integer(2)]]
    #expect(try stage.pass(rows: rows, of: "ACHANGE").isEmpty)
    #expect(try stage.pass(rows: rows, of: "ZAPPNOTES").count == 2)
    let batch = try ColumnMigrationTests.items(try ColumnMigrationTests.layout(first))
    _ = try stage.pass(.records(batch.records))
    #expect(try stage.finish().isEmpty)
    let report = try #require(stage.report)
    #expect(report.from == "1" && report.to == "2")
    #expect(report.notes.contains(ObjectMigration.historyNote(table: "ACHANGE", count: 2)))
    #expect(
      report.notes.contains {
        $0.hasSuffix("ZLEGACY: 2 values in a column the model does not describe were dropped")
      })
  }
}

extension ObjectMigrationTests {
  /// A source of a head and chunks given here.
  final class Chunks: PulledSource {
    let head: StoreHead
    var chunks: [ObjectChunk]
    var began = false

    init(_ head: StoreHead, _ chunks: [ObjectChunk]) {
      self.head = head
      self.chunks = chunks
    }

    var isSound: Bool { chunks.isEmpty }

    func next() throws -> StreamEvent<StoreHead>? {
      guard began else {
        began = true
        return .begin(head)
      }
      guard !chunks.isEmpty else { return nil }
      return .objects(chunks.removeFirst(), place: "chunk")
    }
  }

  @Test func migratedObjectsWrittenPageByPageAreTheRowsSQLWrites() throws {
    let directory = try TemporaryDirectory()
    let first = try ColumnMigrationTests.first()
    let items = try ColumnMigrationTests.items(try ColumnMigrationTests.layout(first))
    var later = ObjectBatch(entity: "Item", primaryKeys: [5, 6], versions: [1, 1])
    later.attributes = [
      ObjectBatch.Attribute(
        name: "count", type: .integer32, records: [0, 1], values: .integers([1, 2]))
    ]
    // Enough items that their pages are written while the stream runs.
    let many = (0..<3_000).map { "item \($0) " + String(repeating: "·", count: 60) }
    var more = ObjectBatch(
      entity: "Item", primaryKeys: (7...3_006).map(Int64.init), versions: many.map { _ in 1 })
    more.attributes = [
      ObjectBatch.Attribute(
        name: "name", type: .string, records: Array(many.indices),
        values: .texts(
          ObjectBatch.Bytes(
            copying: Array(many.joined().utf8),
            ranges: many.reduce(into: [Range<Int>]()) { ranges, name in
              let start = ranges.last?.upperBound ?? 0
              ranges.append(start..<start + name.utf8.count)
            })))
    ]
    var shelves = ObjectBatch(entity: "Shelf", primaryKeys: [1, 2], versions: [1, 1])
    shelves.attributes = [
      ObjectBatch.Attribute(
        name: "label", type: .string, records: [0],
        values: .texts(ObjectBatch.Bytes(copying: Array("top".utf8), ranges: [0..<3])))
    ]
    // Columns only (every page written directly, up to the bookkeeping written at the end);
    // or columns, then records, which go object by object through SQL from there on.
    for chunks: [ObjectChunk] in [
      [.columns(items), .columns(more), .columns(shelves)],
      [.columns(items), .records(later.records), .columns(more), .columns(shelves)],
    ] {
      var stores: [[String]] = []
      for direct in [false, true] {
        var head = try Self.head(first)
        head.comesInKeyOrder = direct
        let path = directory.path("\(chunks.count)-\(direct).sqlite").path
        try ObjectPipeline(
          source: Chunks(head, chunks), stage: try Self.stage(to: "2"),
          sink: StoreSink(path: path)
        ).run()
        let database = try Database(path: path)
        #expect(try database.prepare("PRAGMA integrity_check").allRows() == [[.text("ok")]])
        stores.append(try storeRows(path))
      }
      #expect(stores[0].contains { $0.hasPrefix("Z_PRIMARYKEY: ") })
      #expect(
        stores[0].filter { $0.hasPrefix("ZITEM: ") }.count == (chunks.count == 3 ? 3_004 : 3_006))
      #expect(stores[1] == stores[0])
    }
  }
}
