import ArchiveFormat
import Foundation
import GraphVault
import ObjectStore
import TestSupport
import Testing

/// An entity's chunks read and encoded by segments on the backup's connection and a twin's:
/// the same chunks, in the same order, as on one connection, and a failure on either side ends
/// the write rather than hanging it.
@Suite("Objects encoded on a second connection")
struct SegmentedObjectsTests {
  let directory: TemporaryDirectory
  let path: String

  /// The members a write hands on, in order; throws once it took `failAfter` of them.
  final class Collected: MemberSink {
    var members: [(path: String, bytes: [UInt8])] = []
    var failAfter: Int?

    init(failAfter: Int? = nil) { self.failAfter = failAfter }

    func write(_ path: String, _ bytes: [UInt8], ranges: ChunkRanges?, spans: [ColumnSpan]) throws {
      if let failAfter, members.count >= failAfter { throw CancellationError() }
      members.append((path, bytes))
    }
  }

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: path, objects: 3_000, seed: 8)
  }

  /// Writes the books (each with its tags) through `sink`, with a twin when `twin`, in
  /// segments of `keysPerSegment` keys.
  func write(
    to sink: Collected, twin: Bool, entity: String = "Book", keysPerSegment: Int64 = 37,
    heldBytes: Int = 8 << 20, twinFailsAfter: Int? = nil,
    hashing: (rows: RowHashing, cells: Int)? = nil
  ) throws -> (SegmentedObjects.Written, progress: Int) {
    let twin =
      twin
      ? try #require(
        SnapshotTwin(
          path: path, busyTimeout: 1, twinOf: try CoreDataStore(path: path),
          identity: StoreUsers.FileIdentity(path))) : nil
    let store = try CoreDataStore(path: path)
    let model = try SampleLibrary.model()
    let layout = try store.layout(for: model)
    var progress = 0
    let written = try store.read { store in
      let worker = twin.map(TwinWorker.init(twin:))
      defer { worker?.close() }
      var chunk = ChunkWriter(members: sink) { "objects/Book/\($0)" }
      return try SegmentedObjects.write(
        .init(
          entity: entity, joins: layout.joins.filter { $0.entity == entity }, model: model,
          layout: layout, hashing: hashing), store: store, worker: worker,
        keysPerSegment: keysPerSegment,
        heldBytes: heldBytes, twinFirst: twin != nil, twinFailsAfter: twinFailsAfter
      ) { encoded in
        try chunk.write(encoded.bytes, ranges: encoded.ranges, spans: encoded.spans)
        progress += encoded.count
      }
    }
    return (written, progress)
  }

  @Test(arguments: [8 << 20, 1])
  func chunksEncodedOnTwoConnectionsAreThoseOfOneInKeyOrder(heldBytes: Int) throws {
    let one = Collected()
    let alone = try write(to: one, twin: false)
    let two = Collected()
    let shared = try write(to: two, twin: true, heldBytes: heldBytes)
    #expect(shared.0.segmentsOnTwin > 0)
    #expect(shared.0.segments == alone.0.segments)
    #expect(alone.0.segments > 3)
    #expect(two.members.map(\.path) == one.members.map(\.path))
    #expect(two.members.map(\.bytes) == one.members.map(\.bytes))
    // Every book once (not the rows of its sub-entities in its table), counted by SQLite
    // through Python.
    let books = try sqlRows(
      path,
      "SELECT count(*) FROM ZBOOK WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book')"
    )[0]
    #expect("\(shared.0.objects)" == books)
    #expect("\(shared.progress)" == books)
    #expect("\(alone.0.objects)" == books)
  }

  @Test func rowsHashedAsTheyAreReadOnTwoConnectionsMakeTheSketchOfOnePassOverTheTable() throws {
    let store = try CoreDataStore(path: path)
    let layout = try store.layout(for: try SampleLibrary.model())
    let books = try #require(
      try store.ledgerSets(layout: layout).first { $0.name == "objects/Book" })
    let hashing = (rows: try store.rowHashing(of: books.table, seed: 5), cells: 99)
    var expected = ChangeSketch(cells: 99, seed: 5)
    try store.read { store in
      try store.forEachElement(of: books, seed: 5) { expected.insert(key: $0, hash: $1) }
    }
    // The table holds books and graphic novels: each entity's objects are read apart.
    for twin in [false, true] {
      var sketch = ChangeSketch(cells: 99, seed: 5)
      var rows = 0
      for entity in ["Book", "GraphicNovel"] {
        let written = try write(to: Collected(), twin: twin, entity: entity, hashing: hashing).0
        #expect(written.segmentsOnTwin > 0 || !twin)
        sketch.merge(try #require(written.sketch))
        rows += written.objects
      }
      #expect(sketch == expected, "twin: \(twin)")
      #expect("\(rows)" == (try sqlRows(path, "SELECT count(*) FROM ZBOOK")[0]))
    }
    // Without hashing, no sketch.
    #expect(try write(to: Collected(), twin: true).0.sketch == nil)
  }

  @Test func aSegmentEndsItsLastChunkWhoeverReadsIt() throws {
    let sink = Collected()
    let whole = try write(to: sink, twin: false, keysPerSegment: 1 << 40)
    #expect(whole.0.segments == 1)
    let cut = Collected()
    _ = try write(to: cut, twin: false, keysPerSegment: 37)
    #expect(cut.members.count > sink.members.count)
  }

  @Test func aTwinThatFailsFailsTheWriteAndIsWaitedFor() throws {
    #expect(throws: CancellationError.self) {
      _ = try write(to: Collected(), twin: true, heldBytes: 1, twinFailsAfter: 1)
    }
  }

  @Test func aWriteThatFailsStopsTheTwin() throws {
    #expect(throws: CancellationError.self) {
      _ = try write(to: Collected(failAfter: 2), twin: true, heldBytes: 1)
    }
  }

  @Test("an entity's rows read in key order or through the Z_ENT index are the same rows")
  func scanningAndIndexReadTheSameRows() throws {
    // Most graphic novels gone: a small share of their table, which is read through the index.
    try sqlScript(
      path,
      "DELETE FROM ZBOOK WHERE Z_PK % 20 != 0 AND Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'GraphicNovel')"
    )
    let store = try CoreDataStore(path: path)
    let layout = try store.layout(for: try SampleLibrary.model())
    #expect(try store.scansTable(for: "Book", layout: layout))
    #expect(try !store.scansTable(for: "GraphicNovel", layout: layout))
    #expect(try store.scansTable(for: "Tag", layout: layout))
    // Told the counts a backup's header has, it judges alike without counting.
    let counts = try store.objectCounts(layout: layout)
    for entity in ["Book", "GraphicNovel", "Tag"] {
      #expect(
        try store.scansTable(for: entity, layout: layout, objects: counts[entity] ?? 0)
          == store.scansTable(for: entity, layout: layout), "\(entity)")
    }
    for entity in ["Book", "GraphicNovel"] {
      let (low, high) = try #require(
        try store.primaryKeyBounds(of: entity, layout: layout).map {
          ($0.lowerBound, $0.upperBound)
        })
      func read(scanning: Bool) throws -> [ObjectRecord] {
        var records: [ObjectRecord] = []
        for from in stride(from: low, through: high, by: 100) {
          try store.forEachObjectRow(
            of: entity, layout: layout, from: from, below: from + 100, scanning: scanning
          ) { records.append($0.record) }
        }
        return records
      }
      let scanned = try read(scanning: true)
      #expect(scanned == (try read(scanning: false)), "\(entity)")
      let count = try sqlRows(
        path,
        "SELECT count(*) FROM ZBOOK WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = '\(entity)')"
      )[0]
      #expect("\(scanned.count)" == count)
      #expect(scanned.map(\.primaryKey) == scanned.map(\.primaryKey).sorted())
    }
  }
}
