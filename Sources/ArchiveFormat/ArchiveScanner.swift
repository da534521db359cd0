import Foundation
import ObjectModel
import ObjectStore
import PropertyList

/// Reads an archive member by member and checks everything a restore relies on, before any of
/// it is used: the one reader behind `restore`, `verify`, `export` and `fixture`, so that what
/// one accepts the others accept.
///
/// Checked, in archive order:
/// - the members: in the format's order (header; model descriptor, metadata, schema, primary
///   keys and model cache; each entity's object chunks numbered 1, 2, … together; each table's
///   row chunks likewise; the index last), none twice, none unknown;
/// - the header (a format this version reads; the model's fingerprint), the model descriptor
///   (a valid model whose names Core Data takes), the metadata (a property-list dictionary
///   with Core Data's keys), the schema (data, checked against the model: ``CheckedSchema``),
///   the primary keys (positive, unique entity numbers that match the model's hierarchy), the
///   model cache (it describes the same store as the descriptor);
/// - every object: its values against the model, its key (positive, ascending within its
///   entity, unique in its hierarchy), its stored columns (columns of its table that it may
///   set), its many-to-many rows (a join table the model has), its to-one targets (an entity
///   of the destination's hierarchy);
/// - every table row: a table the archive declares, columns it has;
/// - at the end: the index lists exactly the members read, in order, with their sizes and
///   SHA-256, and the counts; every reference resolves inside the archive; each hierarchy's
///   `Z_MAX` is at least its highest key; the header's object counts, when it has them, are the
///   objects read.
///
/// ``next()`` gives what passed, in order, as ``Event``s. By default the first problem is
/// thrown (``ArchiveFormatError``, naming the member); when collecting (verify), problems are
/// kept in ``problems`` and the scan goes on where it can.
package final class ArchiveScanner: @unchecked Sendable {
  /// What the scan gives, in archive order: everything before the objects, checked; then each
  /// chunk of objects and of rows of a table the model does not describe, with its member.
  package typealias Event = StreamEvent<ArchivedStore>

  /// How a scan treats what it finds.
  package struct Options: Sendable {
    /// Keep at most this many problems and go on past them, rather than throwing the first.
    package var collectingProblems: Int?
    /// Leave out schema entries that are refused (and the rows of a table left out) rather
    /// than refusing the archive (``CheckedSchema``).
    package var leavingOutUnsafeSchema = false
    /// Read an archive of format 3 without its change ledger (`changes.plist`), which a reader
    /// of part of its objects has no use for: not required, and left unread when there.
    package var leavingOutLedger = false

    /// Stop at the first problem; refuse unsafe schema entries.
    package init() {}
  }

  private let stream: any MemberSource
  private let options: Options
  private var pending: [Event] = []
  private var finished = false

  /// The problems found so far (when collecting).
  package private(set) var problems: [ArchiveFormatError] = []
  /// A full archive's sketches when they come after its objects (format 5), once read: what
  /// the next incremental backup compares the store with.
  package private(set) var sketches: [String: ChangeSketch]?
  /// Objects read per entity.
  package private(set) var objects: [String: Int] = [:]
  /// Rows read per table.
  package private(set) var tables: [String: Int] = [:]
  /// Members read.
  package private(set) var memberCount = 0
  /// Entities with a member that did not pass.
  package private(set) var damagedEntities = Set<String>()
  /// Whether the index was read.
  package private(set) var isComplete = false
  /// Whether the archive was read to its end.
  package private(set) var readToTheEnd = false
  /// The index, once read (after the scan).
  package var readIndex: PropertyListValue? { index }
  /// The SHA-256 of the index member's content, once read: what an incremental archive names
  /// its parent by.
  package private(set) var indexDigest: String?
  /// What the archive holds before its objects, once checked.
  package private(set) var store: ArchivedStore?

  // What has been read.
  private var header: ArchiveHeader?
  private var model: ObjectModel?
  private var metadata: [UInt8]?
  private var schema: CheckedSchema?
  private var entityRows: [CoreDataStore.EntityRow]?
  private var modelCache: [UInt8]?
  private var changes: ChangeLedger?
  /// Whether `sketches.plist` was met (every chunk comes before it).
  private var sketchesMet = false
  private var index: PropertyListValue?
  private var seen: [(path: String, size: Int, sha256: String)] = []
  /// What each chunk of objects read holds by key, for the index's ranges (nil for a chunk of
  /// records, which has none).
  private var ranges: [String: ChunkRanges?] = [:]
  private var paths = Set<String>()
  /// The position of the last of the members before the objects read, in ``storeMembers``.
  private var storePosition = 0
  /// The group of chunks being read (`objects/Book`), the next chunk number, the groups done.
  private var group: String?
  private var nextChunk = 1
  private var groupsDone = Set<String>()
  private var readingTables = false
  private var ledger: KeyLedger?
  private var storedColumns: [String: Set<String>] = [:]
  private var otherTables: [String: String] = [:]
  /// The highest `Z_PK` read of each table outside the model (the history tables' keys come
  /// from `Z_PRIMARYKEY` too).
  private var highestRowKeys: [String: Int64] = [:]

  /// The members before the objects, in their order.
  static let storeMembers = [
    ArchiveLayout.header, ArchiveLayout.modelDescriptor, ArchiveLayout.storeMetadata,
    ArchiveLayout.storeSchema, ArchiveLayout.storePrimaryKeys, ArchiveLayout.storeModelCache,
    ArchiveLayout.changes,
  ]

  /// A scan of the members `stream` gives.
  package init(stream: any MemberSource, options: Options = Options()) {
    self.stream = stream
    self.options = options
  }

  /// The next event, or nil once the archive was read and its end checked (when collecting,
  /// also after a problem the scan cannot go past).
  /// - Throws: ``ArchiveFormatError`` for the first problem (unless collecting), and what
  ///   reading the archive throws (a cut stream, a wrong password, an unreadable file).
  package func next() throws -> Event? {
    while pending.isEmpty, try advance() {}
    return pending.isEmpty ? nil : pending.removeFirst()
  }

  /// Reads until what the archive holds before its objects is checked (``store``), keeping
  /// every event for ``next()``: how a chain of archives is opened before it is read.
  /// - Returns: the store, or nil when the archive ends (or, collecting, stops) before it.
  package func readStore() throws -> ArchivedStore? {
    while store == nil, try advance() {}
    return store
  }

  /// Reads one member; false once the scan is over.
  private func advance() throws -> Bool {
    if finished { return false }
    do {
      guard let member = try stream.next(hash: true, wantBytes: { _ in true }) else {
        readToTheEnd = true
        finished = true
        try finish()
        return false
      }
      memberCount += 1
      try read(member)
    } catch is Stop {
      finished = true
    }
    return true
  }

  /// Ends a collecting scan that cannot go on.
  private struct Stop: Error {}

  /// Records a problem: thrown at once unless collecting; when collecting, kept, and the scan
  /// stops when it is `fatal` (nothing after it can be checked).
  private func problem(_ error: ArchiveFormatError, fatal: Bool = false) throws {
    guard let limit = options.collectingProblems else { throw error }
    if problems.count < limit { problems.append(error) }
    if fatal { throw Stop() }
  }

  private func problem(_ member: String, _ detail: String, fatal: Bool = false) throws {
    try problem(ArchiveFormatError(member: member, detail), fatal: fatal)
  }

  // MARK: Members

  private func read(_ member: MemberStream.Member) throws {
    let path = member.path
    let bytes = member.bytes ?? []
    if memberCount == 1 && path != ArchiveLayout.header {
      try problem(
        path,
        "the archive does not start with graphvault.plist: it is not a graphvault archive, or it is damaged",
        fatal: true)
    }
    if index != nil {
      try problem(path, "the member follows index.plist, which must be last")
      return
    }
    guard paths.insert(path).inserted else {
      try problem(path, "the member appears twice")
      return
    }
    if path == ArchiveLayout.index {
      try readIndex(bytes)
      return
    }
    seen.append((path, bytes.count, member.sha256 ?? ""))
    if path == ArchiveLayout.sketches {
      try readSketches(path, bytes)
      return
    }
    if let position = Self.storeMembers.firstIndex(of: path) {
      guard group == nil, position >= storePosition else {
        try problem(
          path,
          "the member is out of place: \(Self.storeMembers.joined(separator: ", ")) come first, in that order",
          fatal: true)
        return
      }
      storePosition = position
      try readStoreMember(path, bytes)
      return
    }
    let parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    guard parts.count == 3, parts[0] == "objects" || parts[0] == "tables", !parts[1].isEmpty,
      let chunk = Self.chunkNumber(parts[2])
    else {
      try problem(path, "the format has no such member")
      return
    }
    guard let store = try begin(before: path) else { return }
    try checkOrder(
      path, group: parts[0] + "/" + parts[1], chunk: chunk, tables: parts[0] == "tables")
    if parts[0] == "objects" {
      try readObjects(path, entity: parts[1], bytes, store: store)
    } else {
      try readRows(path, table: parts[1], bytes, store: store)
    }
  }

  /// `000001.plist` → 1.
  static func chunkNumber(_ name: String) -> Int? {
    guard name.hasSuffix(".plist") else { return nil }
    let digits = name.dropLast(6)
    guard digits.count == 6, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    return Int(digits)
  }

  /// An entity's (or table's) chunks come together, numbered from 1; tables after objects.
  private func checkOrder(_ path: String, group name: String, chunk: Int, tables: Bool) throws {
    if sketchesMet {
      try problem(
        path, "the chunk follows \(ArchiveLayout.sketches), which comes after every chunk")
    }
    if tables {
      readingTables = true
    } else if readingTables {
      try problem(path, "object chunks come before the rows of other tables")
    }
    if group != name {
      if let group { groupsDone.insert(group) }
      guard !groupsDone.contains(name) else {
        group = name
        nextChunk = chunk + 1
        try problem(path, "\(name)'s chunks are not together")
        return
      }
      group = name
      nextChunk = 1
    }
    defer { nextChunk = chunk + 1 }
    guard chunk == nextChunk else {
      try problem(path, "chunk \(chunk) comes where chunk \(nextChunk) of \(name) belongs")
      return
    }
  }

  private func plist(_ path: String, _ bytes: [UInt8]) throws -> PropertyListValue? {
    do {
      return try PropertyListValue(binaryPropertyList: bytes)
    } catch {
      try problem(path, "not a valid property list: \(error)")
      return nil
    }
  }

  private func readStoreMember(_ path: String, _ bytes: [UInt8]) throws {
    switch path {
    case ArchiveLayout.header:
      guard let value = try plist(path, bytes) else { throw Stop() }
      let read = ArchiveHeader(reading: value)
      guard ArchiveLayout.formatVersions.contains(read.formatVersion) else {
        try problem(
          path, ArchiveLayout.unsupportedFormat(read.formatVersion, verb: "reads"), fatal: true)
        return
      }
      header = read
    case ArchiveLayout.modelDescriptor:
      guard let value = try plist(path, bytes) else { return }
      do {
        let decoded = try ModelDescriptor.decode(value)
        if let fingerprint = header?.plist["model"]?["fingerprint"]?.stringValue,
          fingerprint != decoded.fingerprint
        {
          try problem(
            path, "the model differs from the one the header names (fingerprint \(fingerprint))")
          return
        }
        model = decoded
      } catch let error as ModelError {
        try problem(path, "the model descriptor is damaged: \(error)")
      }
    case ArchiveLayout.storeMetadata:
      try readMetadata(path, bytes)
    case ArchiveLayout.storeSchema:
      try readSchema(path, bytes)
    case ArchiveLayout.storePrimaryKeys:
      try readEntityRows(path, bytes)
    case ArchiveLayout.changes:
      try readChanges(path, bytes)
      // The last of the store's members: what comes before the objects is all here (and a
      // chain's ledgers are read without decoding any object).
      _ = try begin(before: path)
    default:
      try readModelCache(path, bytes)
    }
  }

  private func readChanges(_ path: String, _ bytes: [UInt8]) throws {
    guard let header, header.formatVersion >= ArchiveLayout.ledgerFormat else {
      try problem(path, "the archive's format has no change ledger")
      return
    }
    guard let value = try plist(path, bytes) else { return }
    do {
      var ledger = try ChangeLedger(value, member: path)
      if header.formatVersion < ArchiveLayout.lateSketchesFormat {
        ledger.sketchesFollow = false
      } else if !ledger.isIncremental && !ledger.sketchesFollow {
        try problem(
          path,
          "the full archive's sketches are in the ledger: format \(header.formatVersion) holds them in \(ArchiveLayout.sketches), after the objects"
        )
        return
      }
      guard ledger.isIncremental == header.isIncremental else {
        try problem(
          path,
          header.isIncremental
            ? "the header names a parent, but the ledger is a full archive's"
            : "the ledger is an incremental archive's, but the header names no parent")
        return
      }
      changes = ledger
    } catch let error as ArchiveFormatError {
      try problem(error)
    }
  }

  /// A full archive's sketches (format 5), after its objects and rows.
  private func readSketches(_ path: String, _ bytes: [UInt8]) throws {
    guard let header, header.formatVersion >= ArchiveLayout.lateSketchesFormat else {
      try problem(path, "the format has no such member")
      return
    }
    guard try begin(before: path) != nil else { return }
    sketchesMet = true
    if options.leavingOutLedger { return }
    guard let changes, changes.sketchesFollow else {
      try problem(
        path, "an incremental archive holds its sketches in its ledger, not after its objects")
      return
    }
    guard let value = try plist(path, bytes) else { return }
    do {
      sketches = try ChangeLedger.sets(fromSketches: value, seed: changes.seed, member: path)
    } catch {
      try problem(error)
    }
  }

  private func readMetadata(_ path: String, _ bytes: [UInt8]) throws {
    guard let value = try? PropertyListValue(propertyList: bytes),
      let dictionary = value.dictionaryValue
    else {
      try problem(path, "the metadata is not a property-list dictionary")
      return
    }
    guard dictionary["NSStoreType"]?.stringValue == "SQLite" else {
      try problem(path, "the metadata does not say NSStoreType = SQLite")
      return
    }
    if let hashes = dictionary["NSStoreModelVersionHashes"],
      hashes.dictionaryValue?.values.allSatisfy({ $0.dataValue != nil }) != true
    {
      try problem(path, "NSStoreModelVersionHashes is not a dictionary of data")
      return
    }
    // The hashes are how Core Data finds the store's model: ones that are not the model's
    // would have it take the restored store for another version (or none) of its model.
    if let model, case .dictionary(let hashes)? = dictionary["NSStoreModelVersionHashes"] {
      let expected = model.versionHashes
      let unreproduced = model.unreproducedVersionHashes
      for (entity, value) in hashes.sorted(by: { $0.key < $1.key }) {
        guard let mine = expected[entity] else {
          try problem(
            path, "NSStoreModelVersionHashes names \(entity), which the model does not have")
          return
        }
        if unreproduced[entity] == nil, value.dataValue != mine {
          try problem(
            path,
            "the version hash of \(entity) in NSStoreModelVersionHashes is not the model's: Core Data would take the restored store for another version of its model"
          )
          return
        }
      }
    }
    if let identifiers = dictionary["NSStoreModelVersionIdentifiers"],
      identifiers.arrayValue?.allSatisfy({ $0.stringValue != nil }) != true
    {
      try problem(path, "NSStoreModelVersionIdentifiers is not an array of strings")
      return
    }
    metadata = bytes
  }

  private func readSchema(_ path: String, _ bytes: [UInt8]) throws {
    guard let value = try plist(path, bytes) else { return }
    guard let model else {
      try problem(
        path, "the schema comes without a readable model to check it against", fatal: true)
      return
    }
    var objects: [CoreDataStore.SchemaObject] = []
    for entry in value.arrayValue ?? [] {
      guard let type = entry["type"]?.stringValue, let name = entry["name"]?.stringValue,
        let table = entry["table"]?.stringValue, let sql = entry["sql"]?.stringValue
      else {
        try problem(path, "an entry lacks its type, name, table or sql")
        return
      }
      objects.append(CoreDataStore.SchemaObject(type: type, name: name, table: table, sql: sql))
    }
    guard value.arrayValue != nil else {
      try problem(path, "the schema is not an array")
      return
    }
    do {
      schema = try CheckedSchema(
        objects: objects, model: model, leavingOutUnsafe: options.leavingOutUnsafeSchema)
    } catch {
      try problem(path, error.detail)
    }
  }

  private func readEntityRows(_ path: String, _ bytes: [UInt8]) throws {
    guard let value = try plist(path, bytes), let model else { return }
    var rows: [CoreDataStore.EntityRow] = []
    for entry in value.arrayValue ?? [] {
      guard let number = entry["ent"]?.integerValue, let name = entry["name"]?.stringValue,
        let parent = entry["super"]?.integerValue, let max = entry["max"]?.integerValue,
        number > 0, number <= Int32.max, parent >= 0, parent <= Int32.max, max >= 0
      else {
        try problem(path, "a row lacks ent, name, super or max, or holds a negative number")
        return
      }
      rows.append(
        CoreDataStore.EntityRow(
          number: Int(number), name: name, parent: Int(parent), maxPrimaryKey: max))
    }
    let numbers = Set(rows.map(\.number))
    guard numbers.count == rows.count else {
      try problem(path, "two rows have the same entity number (Z_ENT)")
      return
    }
    for row in rows where row.parent != 0 && !numbers.contains(row.parent) {
      try problem(path, "\(row.name)'s parent entity number \(row.parent) has no row")
      return
    }
    let assigned = CoreDataStore.entityNumbers(for: model, rows: rows)
    var owners: [Int: String] = [:]
    for entity in model.entities {
      guard let number = assigned[entity.name] else { continue }
      if let other = owners.updateValue(entity.name, forKey: number) {
        try problem(path, "entities \(other) and \(entity.name) get the same number \(number)")
        return
      }
      guard let row = rows.first(where: { $0.number == number }) else { continue }
      let parent = entity.parent.flatMap { assigned[$0] } ?? 0
      guard row.parent == parent else {
        try problem(
          path,
          "\(entity.name) is entity \(number) with parent \(row.parent), but the model's parent is \(parent)"
        )
        return
      }
    }
    entityRows = rows
  }

  private func readModelCache(_ path: String, _ bytes: [UInt8]) throws {
    guard let model else { return }
    guard schema?.table(named: "Z_MODELCACHE") != nil else {
      try problem(path, "the archive has a model cache but its schema has no Z_MODELCACHE table")
      return
    }
    guard let cached = try? CompiledModelLoader.load(modelCache: bytes, name: model.name) else {
      try problem(path, "the model cache does not decode into a model")
      return
    }
    guard StoreSchema.describeTheSameStore(cached, model) else {
      try problem(path, "the model cache describes another store than the model descriptor")
      return
    }
    modelCache = bytes
  }

  /// Everything before the objects, checked, given once (before `path`, the first member after
  /// them); nil when something is missing and the scan goes on without objects.
  private func begin(before path: String) throws -> ArchivedStore? {
    if let store { return store }
    let missing = [
      (ArchiveLayout.header, header == nil), (ArchiveLayout.modelDescriptor, model == nil),
      (ArchiveLayout.storeMetadata, metadata == nil), (ArchiveLayout.storeSchema, schema == nil),
      (ArchiveLayout.storePrimaryKeys, entityRows == nil),
    ].filter(\.1).map(\.0)
    let needsLedger =
      (header?.formatVersion ?? 0) >= ArchiveLayout.ledgerFormat && !options.leavingOutLedger
    let missingLedger = needsLedger && changes == nil ? [ArchiveLayout.changes] : []
    guard missing.isEmpty, missingLedger.isEmpty, let header, let model, let metadata, let schema,
      let entityRows
    else {
      let missing = missing + missingLedger
      try problem(
        path, "the archive lacks a readable \(missing.joined(separator: ", ")) before it",
        fatal: true)
      return nil
    }
    let layout: StoreLayout
    do {
      layout = try StoreLayout(model: model, schema: schema.snapshot, entityRows: entityRows)
    } catch {
      try problem(ArchiveLayout.storeSchema, error.detail, fatal: true)
      return nil
    }
    let made = ArchivedStore(
      header: header, model: model, schema: schema, layout: layout, entityRows: entityRows,
      metadata: metadata, modelCache: modelCache, changes: changes)
    store = made
    ledger = KeyLedger(model: model)
    for table in made.otherTables { otherTables[table.uppercased()] = table }
    pending.append(.begin(made))
    return made
  }

  // MARK: Objects and rows

  private func readObjects(
    _ path: String, entity: String, _ bytes: [UInt8], store: ArchivedStore
  ) throws {
    do {
      guard let description = store.model.entity(named: entity), !description.isAbstract,
        store.layout.table(for: entity) != nil
      else {
        throw ArchiveFormatError(
          member: path, "the model has no concrete entity \(entity) with a table")
      }
      let decoded = try RecordDecoder(model: store.model, member: path).decodeObjects(bytes)
      // The decoded objects hold copies: the member's buffer can serve the next member.
      ChunkBufferPool.shared.giveBack(bytes)
      try check(decoded, entity: entity, member: path, store: store)
      // Kept even when there are none, so that ranges the index gives it are refused.
      if case .columns(let batch) = decoded {
        ranges.updateValue(ChunkRanges(batch), forKey: path)
      } else {
        ranges.updateValue(nil, forKey: path)
      }
      objects[entity, default: 0] += decoded.count
      pending.append(.objects(decoded, place: path))
    } catch let error as ArchiveFormatError {
      damagedEntities.insert(entity)
      try problem(error)
    }
  }

  /// Checks a chunk's objects: entity, keys, stored columns, many-to-many rows, to-one targets.
  private func check(
    _ decoded: ObjectChunk, entity: String, member: String, store: ArchivedStore
  ) throws(ArchiveFormatError) {
    func bad(_ detail: String) -> ArchiveFormatError { ArchiveFormatError(member: member, detail) }
    let model = store.model
    let permitted: Set<String>
    if let known = storedColumns[entity] {
      permitted = known
    } else {
      permitted = store.layout.storedColumns(of: entity)
      storedColumns[entity] = permitted
    }
    func destination(of name: String) -> RelationshipDescription? {
      model.relationships(of: entity).first { $0.name == name }
    }
    func checkTarget(_ target: String, of relationship: RelationshipDescription)
      throws(ArchiveFormatError)
    {
      guard
        target == relationship.destination
          || model.lineage(of: target).contains(where: { $0.name == relationship.destination })
      else {
        throw bad(
          "\(entity).\(relationship.name) points at a \(target), which is not a \(relationship.destination)"
        )
      }
    }
    func checkJoin(_ name: String) throws(ArchiveFormatError) -> RelationshipDescription {
      guard let relationship = destination(of: name),
        store.layout.join(for: entity, relationship: name) != nil
      else {
        throw bad(
          "\(entity).\(name) has rows, but it is not a many-to-many relationship owning a join table"
        )
      }
      return relationship
    }
    switch decoded {
    case .columns(let batch):
      guard batch.entity == entity else { throw bad("the chunk holds objects of \(batch.entity)") }
      if let problem = ledger!.add(keys: batch.primaryKeys, of: entity) { throw bad(problem) }
      for column in batch.storedColumns where !permitted.contains(column.name) {
        throw bad("\(entity) has a value for column \(column.name), which it may not set")
      }
      for column in batch.toOne {
        guard let relationship = destination(of: column.name) else {
          throw bad("\(entity) has no relationship \(column.name)")
        }
        for target in Set(column.entities) { try checkTarget(target, of: relationship) }
        ledger!.add(
          references: column.keys, from: entity, through: column.name,
          to: relationship.destination)
      }
      for column in batch.toMany {
        let relationship = try checkJoin(column.name)
        for rows in column.rows {
          ledger!.add(
            references: rows.lazy.map(\.0), from: entity, through: column.name,
            to: relationship.destination)
        }
      }
    case .records(let records):
      if let other = records.first(where: { $0.0.entity != entity }) {
        throw bad("the chunk holds an object of \(other.0.entity)")
      }
      if let problem = ledger!.add(keys: records.map(\.0.primaryKey), of: entity) {
        throw bad(problem)
      }
      for (record, manyToMany) in records {
        for column in record.extraColumns.keys where !permitted.contains(column) {
          throw bad("\(record.reference) has a value for column \(column), which it may not set")
        }
        for (name, target) in record.toOne {
          guard let relationship = destination(of: name) else {
            throw bad("\(entity) has no relationship \(name)")
          }
          try checkTarget(target.entity, of: relationship)
          ledger!.add(
            references: CollectionOfOne(target.primaryKey), from: entity, through: name,
            to: relationship.destination)
        }
        for (name, rows) in manyToMany where !rows.isEmpty {
          let relationship = try checkJoin(name)
          ledger!.add(
            references: rows.lazy.map(\.0), from: entity, through: name,
            to: relationship.destination)
        }
      }
    case .objects, .encoded:
      preconditionFailure("an archive's chunks decode to columns or records")
    }
  }

  private func readRows(_ path: String, table name: String, _ bytes: [UInt8], store: ArchivedStore)
    throws
  {
    if store.schema.droppedTables.contains(where: {
      $0.caseInsensitiveCompare(name) == .orderedSame
    }) {
      // Counted still: the index counts them.
      tables[name, default: 0] +=
        (try? PropertyListValue(binaryPropertyList: bytes))?.arrayValue?.count ?? 0
      return
    }
    guard let table = otherTables[name.uppercased()],
      let definition = store.schema.table(named: table)
    else {
      try problem(path, "\(name) is not a table of the archived schema outside the model")
      return
    }
    guard let value = try plist(path, bytes) else { return }
    guard let items = value.arrayValue else {
      try problem(path, "the chunk is not an array of rows")
      return
    }
    guard items.count <= ArchiveLayout.chunkRecords else {
      try problem(
        path,
        "the chunk holds \(items.count) rows; a chunk holds at most \(ArchiveLayout.chunkRecords)")
      return
    }
    var rows: [[String: AttributeValue]] = []
    rows.reserveCapacity(items.count)
    for item in items {
      do {
        let row = try RecordDecoder.row(item, member: path)
        for column in row.keys where definition.column(named: column) == nil {
          throw ArchiveFormatError(
            member: path, "a row has a value for \(column), which \(table) lacks")
        }
        rows.append(row)
      } catch let error as ArchiveFormatError {
        try problem(error)
        return
      }
    }
    tables[name, default: 0] += rows.count
    for row in rows {
      if case .integer(let key)? = row["Z_PK"], key > highestRowKeys[table, default: 0] {
        highestRowKeys[table] = key
      }
    }
    pending.append(.rows(rows, table: table, place: path))
  }

  // MARK: The end

  /// An incremental archive holds exactly the records its ledger lists as written, and deletes
  /// no key it writes.
  private func checkWritten(_ changes: ChangeLedger, ledger: KeyLedger, store: ArchivedStore)
    throws
  {
    for root in store.model.rootEntities.map(\.name) {
      let name = "objects/\(root)"
      // A hierarchy written whole is every object the archive holds of it.
      if changes.replaced.contains(name) { continue }
      let written = changes.written[name] ?? []
      let held = ledger.keys(ofRoot: root)
      if held.count != written.count || !written.allSatisfy(held.contains) {
        try problem(
          ArchiveLayout.changes,
          "the archive holds \(held.count) objects of the \(root) hierarchy, but its ledger lists \(written.count) as written"
        )
      }
      if let both = changes.deleted[name]?.first(where: held.contains) {
        try problem(ArchiveLayout.changes, "p\(both) of \(root) is both written and deleted")
      }
    }
  }

  private func readIndex(_ bytes: [UInt8]) throws {
    indexDigest = Checksum.sha256(bytes)
    guard let value = try plist(ArchiveLayout.index, bytes) else { return }
    index = value
    isComplete = true
    // An archive whose data is all in its store members (no objects, no rows) begins here.
    _ = try begin(before: ArchiveLayout.index)
  }

  private func finish() throws {
    guard let index else {
      try problem(
        ArchiveLayout.index,
        "the archive is incomplete: it has no index.plist (the backup was interrupted, or the file is truncated)",
        fatal: true)
      return
    }
    // Every member that differs from the index, each marking its entity as damaged.
    let mismatches = ArchiveIndex.mismatches(index, against: seen)
    for mismatch in mismatches {
      if let entity = ArchiveLayout.entity(ofObjectsMember: mismatch.member) {
        damagedEntities.insert(entity)
      }
      try problem(mismatch)
    }
    if mismatches.isEmpty {
      do {
        try ArchiveIndex.checkCounts(index, objects: objects, tables: tables)
      } catch {
        try problem(error)
      }
      // (A chunk found damaged already has said so.)
      for problem in ArchiveIndex.rangeProblems(index, against: ranges) {
        let entity = ArchiveLayout.entity(ofObjectsMember: problem.member)
        if let entity, damagedEntities.contains(entity) { continue }
        if let entity { damagedEntities.insert(entity) }
        try self.problem(problem)
      }
    }
    if let framing = ArchiveIndex.framingProblem(index) { try problem(framing) }
    if store?.changes?.sketchesFollow == true && !sketchesMet {
      try problem(
        ArchiveLayout.sketches,
        "the archive lacks its ledger's sketches: format \(header?.formatVersion ?? 0) holds a full archive's after its objects"
      )
    }

    // References and keys are judged only over a whole, undamaged set of objects: an
    // incremental archive's only with its parents (``ChainScanner``); alone, it must hold the
    // records its ledger says it does.
    guard problems.isEmpty, let store, let ledger else { return }
    if let changes = store.changes, changes.isIncremental {
      try checkWritten(changes, ledger: ledger, store: store)
      return
    }
    for (entity, unresolved) in ledger.unresolvedReferences() {
      try problem("objects/\(entity)", unresolved)
    }
    for problem in ledger.keysAboveMaximum(in: store) {
      try self.problem(ArchiveLayout.storePrimaryKeys, problem)
    }
    // Core Data numbers the rows of its history tables (ACHANGE, ATRANSACTION, …) from the
    // Z_PRIMARYKEY row named after the table without its "A" (CHANGE, TRANSACTION, …).
    for (table, highest) in highestRowKeys.sorted(by: { $0.key < $1.key }) {
      let upper = table.uppercased()
      guard upper.hasPrefix("A"),
        let row = store.entityRows.first(where: { "A" + $0.name.uppercased() == upper }),
        row.maxPrimaryKey < highest
      else { continue }
      try problem(
        ArchiveLayout.storePrimaryKeys,
        "Z_MAX of \(row.name) is \(row.maxPrimaryKey), below the highest key of \(table), \(highest): the app's next history row would reuse a key"
      )
    }
    // The header's counts, when it has them, are the objects read: a streamed comparison
    // relies on them to know which entities the other side holds.
    if let expected = header?.expectedObjects {
      for name in Set(expected.keys).union(objects.keys).sorted()
      where expected[name, default: 0] != objects[name, default: 0] {
        try problem(
          ArchiveLayout.header,
          "the header counts \(expected[name, default: 0]) objects of \(name), the archive holds \(objects[name, default: 0])"
        )
      }
    }
  }
}
