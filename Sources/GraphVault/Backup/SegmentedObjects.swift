import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore

/// Reads every object of one concrete entity as format 2 chunks, read and encoded by segments
/// of keys: on the backup's connection alone, or on it and the twin's (``TwinWorker``) at once,
/// each taking the next segment in turn. The chunks are handed on in key order whoever
/// encoded them: the backup's thread hands each segment's chunks on once those before are,
/// and holds a segment encoded ahead (its own, or the twin's) only up to a bound, beyond which
/// the side ahead waits.
///
/// A segment ends its last chunk early (segments are cut by keys, chunks by objects and
/// bytes), whoever encodes it, so an archive's chunks do not depend on whether the twin helped.
///
/// Asked to (``Source/hashing``), each side also hashes the rows it reads into a sketch of its
/// own (``ChangeSketch``), merged at the end: the change ledger of a full archive of format 5,
/// worked out in the same pass as the objects.
package enum SegmentedObjects {
  /// The keys a segment spans (about four full chunks of small objects: fewer ends of
  /// segments, where a chunk ends early).
  package static let keysPerSegment: Int64 = 65_536
  /// The most segments an entity is cut into (keys spread far apart make wider segments).
  static let mostSegments: Int64 = 4_096
  /// The bytes of chunks either side holds before the archive takes them.
  package static let heldBytes = 8 << 20

  /// The keys of a segment: from `from`, below `below` when given.
  struct Segment {
    let from: Int64
    let below: Int64?
  }

  /// What a segment is read with: the entity, its many-to-many relationships' join tables,
  /// the model and the store's layout of it.
  package struct Source {
    let entity: String
    let joins: [StoreLayout.Join]
    let model: ObjectModel
    let layout: StoreLayout
    /// The archive format its chunks are encoded in.
    let formatVersion: Int64
    /// How its rows are hashed for the change ledger as they are read, and the cells of the
    /// sketch they go into; nil to hash nothing.
    let hashing: (rows: RowHashing, cells: Int)?
    /// How many objects of the entity the store holds, when the caller counted them.
    let objects: Int?
    /// Whether its rows are read in key order rather than through the `Z_ENT` index
    /// (``CoreDataStore/scansTable(for:layout:)``, asked once for all segments).
    private(set) var scanning = true

    /// The source, with how its rows are read judged in `store`.
    func judged(in store: CoreDataStore) throws -> Source {
      var judged = self
      judged.scanning = try store.scansTable(for: entity, layout: layout, objects: objects)
      return judged
    }

    package init(
      entity: String, joins: [StoreLayout.Join], model: ObjectModel, layout: StoreLayout,
      formatVersion: Int64 = ArchiveLayout.formatVersion,
      hashing: (rows: RowHashing, cells: Int)? = nil, objects: Int? = nil
    ) {
      self.entity = entity
      self.joins = joins
      self.model = model
      self.layout = layout
      self.formatVersion = formatVersion
      self.hashing = hashing
      self.objects = objects
    }

    /// An empty sketch for the rows, when they are hashed.
    func emptySketch() -> ChangeSketch? {
      hashing.map { ChangeSketch(cells: $0.cells, seed: $0.rows.seed) }
    }
  }

  /// What a write did.
  package struct Written {
    /// The objects handed on.
    package var objects = 0
    /// The segments the entity's keys were cut into.
    package var segments = 0
    /// How many of them the twin read and encoded.
    package var segmentsOnTwin = 0
    /// The sketch of every object's row (``Source/hashing``), nil when not hashed.
    package var sketch: ChangeSketch?
  }

  /// Hands the objects of `source.entity` in `store` to `emit`, chunk by chunk in key order, with
  /// the twin `worker` taking segments too when given.
  ///
  /// For tests: segments of `keysPerSegment` keys; each side holding up to `heldBytes` ahead;
  /// `twinFirst` has this side wait until the twin took its first segment (or gave up), and
  /// `twinFailsAfter` has the twin throw after encoding that many segments.
  /// - Throws: what reading either connection or `emit` throws.
  @discardableResult
  package static func write(
    _ source: Source, store: CoreDataStore, worker: TwinWorker?,
    keysPerSegment: Int64 = keysPerSegment, heldBytes: Int = heldBytes, twinFirst: Bool = false,
    twinFailsAfter: Int? = nil, emit: (EncodedColumns) throws -> Void
  ) throws -> Written {
    let segments = cut(
      try store.primaryKeyBounds(of: source.entity, layout: source.layout),
      keysPerSegment: max(1, keysPerSegment))
    var written = Written(segments: segments.count)
    guard !segments.isEmpty else {
      written.sketch = source.emptySketch()
      return written
    }
    // This side's rows; `written` changes as chunks are handed on, while they are read.
    var sketch = source.emptySketch()
    let source = try source.judged(in: store)
    let board = Board(segments: segments.count, heldBytes: heldBytes)
    let started = DispatchSemaphore(value: 0)
    // The twin's side: segments taken in turn, their chunks held until this side writes them.
    let twin: TwinWorker.Job = { store in
      var taken = 0
      defer {
        if taken == 0 { started.signal() }
        board.twinTook(taken)
      }
      guard let store else { return }
      var encoder = ColumnChunkEncoder(model: source.model, formatVersion: source.formatVersion)
      var sketch = source.emptySketch()
      defer { board.twinHashed(sketch) }
      while let index = board.claim() {
        taken += 1
        if taken == 1 { started.signal() }
        do {
          try encode(source, segments[index], from: store, with: &encoder, hashingInto: &sketch) {
            try board.push($0, to: index, byTwin: true)
          }
          if let twinFailsAfter, taken >= twinFailsAfter { throw CancellationError() }
          board.finish(index)
        } catch {
          board.fail(error)
          return
        }
      }
    }
    // This side: its own segments, and every segment's chunks written in order.
    func mine() throws {
      if twinFirst && worker != nil { started.wait() }
      var next = 0
      // Writes what is ready in order: the chunks of segment `next`, and on past each done one.
      func writeReady() throws {
        while next < segments.count {
          let (chunks, finished) = try board.take(from: next)
          for encoded in chunks {
            try emit(encoded)
            written.objects += encoded.count
          }
          guard finished else { return }
          next += 1
        }
      }
      var encoder = ColumnChunkEncoder(model: source.model, formatVersion: source.formatVersion)
      while let index = board.claim() {
        try encode(source, segments[index], from: store, with: &encoder, hashingInto: &sketch) {
          encoded in
          try board.push(encoded, to: index, byTwin: false)
          try writeReady()
          // Ahead of the twin by more than the bound: write its chunks as they come.
          while board.heldByBackup > heldBytes {
            board.waitForChange(at: next)
            try writeReady()
          }
        }
        board.finish(index)
        try writeReady()
      }
      while next < segments.count {
        board.waitForChange(at: next)
        try writeReady()
      }
    }
    if let worker {
      // The twin stops at its next chunk whatever happens here, and is waited for.
      try worker.alongside(twin, stop: board.cancel, mine)
    } else {
      try mine()
    }
    written.segmentsOnTwin = board.segmentsOnTwin
    if let theirs = board.twinSketch { sketch?.merge(theirs) }
    written.sketch = sketch
    return written
  }

  /// The segments of keys `bounds` holds: from each start up to the next, the last one
  /// without an end.
  static func cut(_ bounds: ClosedRange<Int64>?, keysPerSegment: Int64) -> [Segment] {
    guard let bounds else { return [] }
    let span = bounds.upperBound.subtractingReportingOverflow(bounds.lowerBound)
    let width =
      span.overflow ? Int64.max : max(keysPerSegment, span.partialValue / mostSegments + 1)
    var segments: [Segment] = []
    var from = bounds.lowerBound
    while true {
      let end = from.addingReportingOverflow(width)
      guard !end.overflow, end.partialValue <= bounds.upperBound else {
        segments.append(Segment(from: from, below: nil))
        return segments
      }
      segments.append(Segment(from: from, below: end.partialValue))
      from = end.partialValue
    }
  }

  /// Reads and encodes the objects of one segment from `store` with `columns` (empty, and
  /// left empty: a side keeps one encoder, and the capacity of its buffers, from segment to
  /// segment), handing each chunk to `emit`; each row goes into `sketch` too, when the source
  /// is hashed.
  static func encode(
    _ source: Source, _ segment: Segment, from store: CoreDataStore,
    with columns: inout ColumnChunkEncoder, hashingInto sketch: inout ChangeSketch?,
    emit: (EncodedColumns) throws -> Void
  ) throws {
    let cursors = try source.joins.map {
      try store.joinCursor($0, ownersFrom: segment.from, below: segment.below)
    }
    // One buffer of join rows per relationship, refilled for each object.
    var manyToMany = source.joins.map { (name: $0.relationship.name, rows: [JoinCursor.Pair]()) }
    // The rows' keys and hashes, put into the sketch a few thousand at a time.
    var keys: [Int64] = []
    var hashes: [UInt64] = []
    try store.forEachObjectRow(
      of: source.entity, layout: source.layout, from: segment.from, below: segment.below,
      scanning: source.scanning, hashing: source.hashing?.rows
    ) { row in
      if sketch != nil {
        keys.append(row.primaryKey)
        hashes.append(row.hash)
        if keys.count == 4096 {
          sketch!.insert(keys: keys, hashes: hashes)
          keys.removeAll(keepingCapacity: true)
          hashes.removeAll(keepingCapacity: true)
        }
      }
      for (index, cursor) in cursors.enumerated() {
        try cursor.rows(for: row.primaryKey, into: &manyToMany[index].rows)
      }
      if columns.add(row, manyToMany: manyToMany),
        let encoded = EncodedColumns(&columns, entity: source.entity)
      {
        try emit(encoded)
        columns.reset()
      }
    }
    if !keys.isEmpty { sketch!.insert(keys: keys, hashes: hashes) }
    if let encoded = EncodedColumns(&columns, entity: source.entity) {
      try emit(encoded)
      columns.reset()
    }
  }

  /// The segments' state, shared by the two sides: which are taken, the chunks each holds
  /// until they are written, which are done, and the first failure.
  private final class Board: @unchecked Sendable {
    private struct Held {
      var chunks: [EncodedColumns] = []
      var done = false
      var byTwin = false
    }

    private let condition = NSCondition()
    private var segments: [Held]
    private var claimed = 0
    private var heldByTwin = 0
    private var held = 0
    private var failure: (any Error)?
    private var cancelled = false
    private let heldBytes: Int
    private var tookByTwin = 0
    private var twinHashedSketch: ChangeSketch?

    init(segments count: Int, heldBytes: Int) {
      segments = Array(repeating: Held(), count: count)
      self.heldBytes = heldBytes
    }

    /// How many segments the twin took.
    var segmentsOnTwin: Int { condition.withLock { tookByTwin } }

    /// Records how many segments the twin took.
    func twinTook(_ count: Int) { condition.withLock { tookByTwin = count } }

    /// The sketch of the rows the twin read (when hashed), once it is done.
    var twinSketch: ChangeSketch? { condition.withLock { twinHashedSketch } }

    /// Records the sketch of the rows the twin read.
    func twinHashed(_ sketch: ChangeSketch?) { condition.withLock { twinHashedSketch = sketch } }

    /// The bytes of chunks the backup's own side holds.
    var heldByBackup: Int { condition.withLock { held } }

    /// The next segment no side has taken, nil when none is left (or the work stopped).
    func claim() -> Int? {
      condition.withLock {
        guard claimed < segments.count, failure == nil, !cancelled else { return nil }
        claimed += 1
        return claimed - 1
      }
    }

    /// Holds a chunk of segment `index` until it is written; the twin waits while it holds
    /// more than ``SegmentedObjects/heldBytes``.
    /// - Throws: `CancellationError` once the work stopped (on the twin's side).
    func push(_ encoded: EncodedColumns, to index: Int, byTwin: Bool) throws {
      try condition.withLock {
        segments[index].chunks.append(encoded)
        segments[index].byTwin = byTwin
        if byTwin { heldByTwin += encoded.bytes.count } else { held += encoded.bytes.count }
        condition.broadcast()
        while byTwin && heldByTwin > heldBytes && !cancelled { condition.wait() }
        if byTwin && cancelled { throw CancellationError() }
      }
    }

    /// Marks segment `index` as read to its end.
    func finish(_ index: Int) {
      condition.withLock {
        segments[index].done = true
        condition.broadcast()
      }
    }

    /// Records a failure of the twin's side; the backup's side throws it.
    func fail(_ error: any Error) {
      condition.withLock {
        if failure == nil { failure = error }
        condition.broadcast()
      }
    }

    /// Stops the work: the twin gives up at its next chunk.
    func cancel() {
      condition.withLock {
        cancelled = true
        condition.broadcast()
      }
    }

    /// The chunks segment `index` holds (handed over), and whether it is done.
    /// - Throws: the twin's failure.
    func take(from index: Int) throws -> ([EncodedColumns], Bool) {
      try condition.withLock {
        if let failure { throw failure }
        let chunks = segments[index].chunks
        segments[index].chunks = []
        let bytes = chunks.reduce(0) { $0 + $1.bytes.count }
        if segments[index].byTwin { heldByTwin -= bytes } else { held -= bytes }
        if bytes > 0 { condition.broadcast() }
        return (chunks, segments[index].done)
      }
    }

    /// Waits until segment `index` holds a chunk or is done, or the twin failed.
    func waitForChange(at index: Int) {
      condition.withLock {
        while segments[index].chunks.isEmpty && !segments[index].done && failure == nil {
          condition.wait()
        }
      }
    }
  }
}
