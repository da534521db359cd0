import ObjectModel
import ObjectStore
import PropertyList

/// Where an object stream goes into an archive: the members before the objects, each
/// entity's objects in numbered chunks, each table's rows, then (format 5, a full archive)
/// the ledger's sketches, then the index.
///
/// It takes any source's chunks: a backup's, encoded where they were read (written as they
/// are), or stored objects as columns or records (a store's, an archive's), which it encodes
/// in the archive's format, cutting chunks where a backup cuts them. A stream gives each
/// entity's objects and each table's rows together, as every source does. Object values (a
/// migration's object-by-object road) are refused: an archive holds objects as stored.
package final class ArchiveSink: ObjectSink {
  package typealias Head = ArchiveHead

  private let members: MemberWriter
  private let formatVersion: Int64
  /// The entity or table being written (`objects/NAME`, `tables/NAME`), and its chunks.
  private var current: (name: String, chunks: ChunkWriter)?
  private var columns: ColumnChunkEncoder?
  private var records: RecordEncoder?
  private var done: Set<String> = []
  /// A full archive's ledger whose sketches come after the objects (format 5).
  private var ledger: ChangeLedger?
  private let sketches: (() throws -> [String: ChangeSketch])?

  /// Objects written per entity.
  package private(set) var objects: [String: Int] = [:]
  /// Rows written per table.
  package private(set) var rows: [String: Int] = [:]

  /// A sink writing `members` in format `formatVersion` (which a backup's encoded chunks must
  /// be written for: format 2 or later).
  ///
  /// In format 5, a full archive's sketches go after its objects: those of the head's ledger,
  /// or, when given, those `sketches` gives once the stream has ended (a backup that hashes
  /// the rows as it reads them).
  package init(
    members: MemberWriter, formatVersion: Int64,
    sketches: (() throws -> [String: ChangeSketch])? = nil
  ) {
    self.members = members
    self.formatVersion = formatVersion
    self.sketches = sketches
  }

  package func begin(_ head: ArchiveHead) throws {
    try members.write(ArchiveLayout.header, plist: head.header.plist)
    try members.write(ArchiveLayout.modelDescriptor, plist: ModelDescriptor.encode(head.model))
    try members.write(ArchiveLayout.storeMetadata, head.metadata)
    try members.write(
      ArchiveLayout.storeSchema,
      plist: .array(
        head.schemaObjects.map {
          [
            "type": .string($0.type), "name": .string($0.name), "table": .string($0.table),
            "sql": .string($0.sql),
          ]
        }))
    try members.write(
      ArchiveLayout.storePrimaryKeys,
      plist: .array(
        head.entityRows.map {
          [
            "ent": .integer(Int64($0.number)), "name": .string($0.name),
            "super": .integer(Int64($0.parent)), "max": .integer($0.maxPrimaryKey),
          ]
        }))
    if let modelCache = head.modelCache {
      try members.write(ArchiveLayout.storeModelCache, modelCache)
    }
    if var changes = head.changes {
      if formatVersion >= ArchiveLayout.lateSketchesFormat && !changes.isIncremental {
        changes.sketchesFollow = true
        ledger = changes
      }
      try members.write(ArchiveLayout.changes, plist: changes.plist)
    }
    for entity in head.counted.entities { objects[entity] = 0 }
    for table in head.counted.tables { rows[table] = 0 }
    if formatVersion == 1 {
      records = RecordEncoder(model: head.model)
    } else {
      columns = ColumnChunkEncoder(model: head.model, formatVersion: formatVersion)
    }
  }

  package func take(_ chunk: ObjectChunk, from place: String) throws {
    guard let entity = chunk.entity, chunk.count > 0 else { return }
    try start("objects/\(entity)", place: place) { ArchiveLayout.objects(entity, chunk: $0) }
    switch chunk {
    case .encoded(let encoded as EncodedColumns) where formatVersion >= 2:
      try current!.chunks.write(encoded.bytes, ranges: encoded.ranges, spans: encoded.spans)
    case .encoded(let encoded):
      try add(encoded.decoded())
    case .columns, .records:
      try add(chunk)
    case .objects:
      throw StoreError(
        .unsupported,
        "\(place): objects in a migration's terms cannot be archived; an archive holds objects as stored",
        path: "")
    }
    objects[entity, default: 0] += chunk.count
  }

  package func take(rows: [[String: AttributeValue]], of table: String, from place: String)
    throws
  {
    try start("tables/\(table)", place: place) { ArchiveLayout.rows(table, chunk: $0) }
    for row in rows { try current!.chunks.add { RecordEncoder.encodeRow(row, into: &$0) } }
    self.rows[table, default: 0] += rows.count
  }

  package func finish() throws {
    try end()
    if let ledger {
      try members.write(
        ArchiveLayout.sketches, plist: ChangeLedger.sketchesPlist(try sketches?() ?? ledger.sets))
    }
    try members.write(ArchiveLayout.index, plist: try members.index(counts: objects, rows: rows))
    try members.finish()
  }

  /// Encodes stored objects, in format 1's records or format 2's columns.
  private func add(_ chunk: ObjectChunk) throws {
    var links: [(name: String, rows: [JoinCursor.Pair])] = []
    if case .columns(let batch) = chunk {
      links = batch.toMany.map { ($0.name, []) }
    }
    for (record, manyToMany) in chunk.storedRecords ?? [] {
      links = Self.links(manyToMany, reusing: links)
      if let records {
        try current!.chunks.add { records.encode(record, manyToMany: links, into: &$0) }
      } else {
        columns!.add(record, manyToMany: links)
        if columns!.isFull { try writeColumns() }
      }
    }
  }

  /// `manyToMany`'s rows by relationship, in the order of `previous` (a batch's, or the last
  /// record's) and then by name, so that a chunk's columns come in one order.
  private static func links(
    _ manyToMany: [String: [(Int64, Int64?)]],
    reusing previous: [(name: String, rows: [JoinCursor.Pair])]
  ) -> [(name: String, rows: [JoinCursor.Pair])] {
    let known = Set(previous.map(\.name))
    let names = previous.map(\.name) + manyToMany.keys.filter { !known.contains($0) }.sorted()
    return names.map { name in
      (
        name,
        (manyToMany[name] ?? []).map { JoinCursor.Pair(source: 0, destination: $0.0, order: $0.1) }
      )
    }
  }

  /// Ends what was being written when `name` begins; a name that came before is refused (its
  /// chunks' numbers would begin again).
  private func start(_ name: String, place: String, path: @escaping (Int) -> String) throws {
    guard current?.name != name else { return }
    try end()
    guard done.insert(name).inserted else {
      throw StoreError(
        .unsupported,
        "\(place): \(name) comes again after other objects or rows; a stream gives each entity's objects and each table's rows together",
        path: "")
    }
    current = (name, ChunkWriter(members: members, path: path))
  }

  /// Writes what is held of the entity or table being written.
  private func end() throws {
    guard current != nil else { return }
    try writeColumns()
    try current!.chunks.finish()
    current = nil
  }

  private func writeColumns() throws {
    guard columns != nil, let entity = current?.name.dropFirst("objects/".count),
      let encoded = EncodedColumns(&columns!, entity: String(entity))
    else { return }
    try current!.chunks.write(encoded.bytes, ranges: encoded.ranges, spans: encoded.spans)
    columns!.reset()
  }
}
