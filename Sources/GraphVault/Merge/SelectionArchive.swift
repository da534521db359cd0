import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore

/// The part of a framed archive a selection reaches, as an object stream (``Source``) into a
/// private store made as a restore makes it (``ObjectStore/StoreSink``, the archive's head) so
/// that `merge`, `fixture` and `restore --entity` read it as they read a whole restore
/// (``FixtureCutter`` choosing in SQL, ``MergePlan`` reading through a context), without
/// restoring every object:
///
/// 1. the rows of the selected entity the predicate may choose (``SelectionFilter``, the
///    selection query's own condition, per chunk), or all of them;
/// 2. the objects the `--include` paths reach from them, hop by hop;
/// 3. the to-one closure of all of these;
/// 4. the members of every to-many relationship of those of them the merge may insert (what
///    it links an inserted object to; an object the store holds already is not linked), without
///    their own closure.
///
/// Each step reads only the chunks of the entities it needs that the index's ranges say may
/// hold what it looks for (``ChunkRanges``), in spans, each member checked against the
/// archive's index (``FramedArchive``) and its ranges; rows found are loaded once. What the
/// selection reads in the private store is therefore what it reads in the whole one. Nil when part of the
/// archive will not do: a predicate that reads other objects, or records rather than column
/// chunks.
struct SelectionArchive {
  /// A loaded object: what the next steps follow from it without asking SQLite.
  private struct Loaded {
    var entity: String
    var toOne: [String: ObjectReference] = [:]
    /// Destination keys of the many-to-many rows this object's row owns, by relationship.
    var joins: [String: [Int64]] = [:]
    /// Owner keys its row keeps for to-many relationships without an inverse, by column.
    var owners: [String: Int64] = [:]
  }

  /// What a scan of one entity's chunks loads.
  private struct Wanted {
    /// Primary keys.
    var keys: Set<Int64> = []
    /// Objects whose to-one relationship (by name) points at one of these keys.
    var byToOne: [String: Set<Int64>] = [:]
    /// Objects whose many-to-many rows (by relationship) hold one of these keys.
    var byJoin: [String: Set<Int64>] = [:]
    /// Objects whose owner column (by name) holds one of these keys.
    var byOwner: [String: Set<Int64>] = [:]

    var isEmpty: Bool {
      keys.isEmpty && byToOne.isEmpty && byJoin.isEmpty && byOwner.isEmpty
    }
  }

  /// Whether the merge may insert an object it reads: given the UUID of the store the
  /// archive was made of (objects are matched otherwise between different stores), the test
  /// for one object. Conservative: an object it answers false for is never inserted.
  typealias Insertable = (_ sourceUUID: String?) throws -> (ObjectReference) throws -> Bool

  /// Part of the archive will not do.
  private struct NotByParts: Error {}

  /// On object storage, the most bytes between two pieces of the chunks a scan tests that are
  /// fetched along rather than skipped (``FramedArchive/read(_:columns:readThrough:each:)``):
  /// about a chunk's large frames (a sample library's covers are 3.4 MB of its 3.7 MB). A
  /// chunk that holds rows to load is read whole after its test, which then costs no request
  /// of its own, and the chunks tested one after another share requests up to the span; a
  /// search over many archives, whose cost is the bytes it reads, keeps the smaller default.
  static let readThrough = 4 << 20
  /// The most bytes one request of a scan fetches on object storage, where the backend's own
  /// span (``ArchiveStorage/ArchiveInput/preferredReadSpan``) is smaller (S3's is 8 MiB): about
  /// three chunks of 4 MiB tested one after another cost one request.
  static let readSpan = 16 << 20

  private let archive: FramedArchive
  private let model: ObjectModel
  private let layout: StoreLayout
  /// Where the rows found go, with the member they come from.
  private let emit: (ObjectChunk, String) throws -> Void
  private var chunks: [String: [FramedArchive.Member]] = [:]
  /// Loaded objects by table and primary key.
  private var loaded: [String: [Int64: Loaded]] = [:]
  /// The objects the selection may read with their closure, by table.
  private var core: [String: Set<Int64>] = [:]
  /// The objects whose members through a relationship are all loaded already, by the
  /// relationship (``relationshipKey(_:_:)``).
  private var membersLoaded: [String: Set<Int64>] = [:]

  private init(
    archive: FramedArchive, model: ObjectModel, layout: StoreLayout,
    emit: @escaping (ObjectChunk, String) throws -> Void
  ) {
    self.archive = archive
    self.model = model
    self.layout = layout
    self.emit = emit
    for member in archive.members {
      guard let entity = ArchiveLayout.entity(ofObjectsMember: member.path) else { continue }
      chunks[entity, default: []].append(member)
    }
  }

  /// Loads what `selection` reaches of `archive` into a new store at `path`, when
  /// `accept` takes the archive's model (else nothing is loaded); the members of an object's
  /// to-many relationships only when `insertable` says it may be inserted.
  /// - Returns: the archive's model and the UUID of the store it was made of; nil when part
  ///   of the archive will not do, or `accept` refused the model.
  /// - Throws: ``ArchiveFormatError`` for a member that does not match the index, and what
  ///   `accept` and `insertable` throw.
  static func load(
    _ archive: FramedArchive, into path: String, selection: FixtureCutter.Selection,
    accept: (ObjectModel) throws -> Bool, insertable: Insertable
  ) throws -> (model: ObjectModel, uuid: String?)? {
    let front = try archive.readStore()
    let (header, model) = (front.header, front.model)
    guard header.formatVersion >= 2, try accept(model), model.entity(named: selection.entity) != nil
    else { return nil }
    let filter: SelectionFilter?
    do {
      filter = try SelectionFilter(selection, model: model)
      if selection.predicate != nil && filter == nil { return nil }
    } catch {
      // The selection's own check names the mistake.
      return nil
    }
    let source = Source(
      archive: archive, front: front, selection: selection, filter: filter,
      insertable: try insertable(header.sourceUUID))
    do {
      try ObjectPipeline(source: source, sink: StoreSink(path: path)).run()
    } catch is NotByParts {
      return nil
    }
    return (model, header.sourceUUID)
  }

  /// The selection's rows as an object stream: the archive's head (the private store is the
  /// source's, but for the rows not read: its entity numbers name the owner columns rows
  /// keep, and its schema has a place for every column), then each chunk's rows found, step
  /// by step. Not in key order: a step may find rows before those an earlier one found.
  final class Source: ObjectSource {
    typealias Head = StoreHead
    private let archive: FramedArchive
    private let front: ArchivedStore
    private let selection: FixtureCutter.Selection
    private let filter: SelectionFilter?
    private let insertable: (ObjectReference) throws -> Bool
    private(set) var isSound = false

    var headPlace: String { ArchiveLayout.storeSchema }

    init(
      archive: FramedArchive, front: ArchivedStore, selection: FixtureCutter.Selection,
      filter: SelectionFilter?, insertable: @escaping (ObjectReference) throws -> Bool
    ) {
      self.archive = archive
      self.front = front
      self.selection = selection
      self.filter = filter
      self.insertable = insertable
    }

    func produce(_ emit: (StreamEvent<StoreHead>) throws -> Void) throws {
      var head = front.storeHead
      head.comesInKeyOrder = false
      try emit(.begin(head))
      try withoutActuallyEscaping(emit) { emit in
        var reading = SelectionArchive(
          archive: archive, model: front.model, layout: front.layout
        ) { chunk, member in try emit(.objects(chunk, place: member)) }
        try reading.run(selection, filter: filter, insertable: insertable)
      }
      isSound = true
    }
  }

  private mutating func run(
    _ selection: FixtureCutter.Selection, filter: SelectionFilter?,
    insertable: (ObjectReference) throws -> Bool
  ) throws {
    let root = try table(of: selection.entity)
    // A chunk whose values' bounds rule the predicate out is not read.
    let selected = try scan(
      concrete(selection.entity), testing: filter?.testedAttributes,
      skippingUnless: filter.map { filter in { $0.mayMatch(filter) } }
    ) { batch in try filter?.matches(batch) ?? Array(0..<batch.count)
    }
    core[root, default: []].formUnion(selected.map(\.key))
    for path in selection.includes {
      var frontier = (entity: selection.entity, keys: Set(selected.map(\.key)))
      for name in path.split(separator: ".").map(String.init) {
        guard
          let relationship = model.relationships(of: frontier.entity).first(where: {
            $0.name == name
          })
        else { throw NotByParts() }
        let reached = try follow(relationship, of: frontier.entity, keys: frontier.keys)
        let destination = try table(of: relationship.destination)
        core[destination, default: []].formUnion(reached)
        frontier = (relationship.destination, reached)
      }
    }
    try closeOverToOne()
    // The members of every to-many relationship of the objects read that the merge may
    // insert: it links an inserted object to those it finds.
    var wanted: [String: Wanted] = [:]
    for (table, keys) in core {
      for key in keys {
        guard let object = loaded[table]?[key],
          try insertable(ObjectReference(entity: object.entity, primaryKey: key))
        else { continue }
        for relationship in model.relationships(of: object.entity)
        where relationship.isToMany && !relationship.isTransient
          && !(membersLoaded[relationshipKey(object.entity, relationship.name)]?.contains(key)
            ?? false)
        {
          try want(members: relationship, of: object.entity, keys: [key], into: &wanted)
        }
      }
    }
    try scan(wanted)
  }

  /// Loads the to-one targets of every core object, and theirs, until none is missing.
  private mutating func closeOverToOne() throws {
    var checked: [String: Set<Int64>] = [:]
    while true {
      var wanted: [String: Wanted] = [:]
      var added: [(String, Int64)] = []
      for (table, keys) in core {
        for key in keys where checked[table, default: []].insert(key).inserted {
          guard let object = loaded[table]?[key] else { continue }
          for target in object.toOne.values {
            let destination = try self.table(of: target.entity)
            guard !(core[destination]?.contains(target.primaryKey) ?? false) else { continue }
            added.append((destination, target.primaryKey))
            if loaded[destination]?[target.primaryKey] == nil {
              wanted[target.entity, default: Wanted()].keys.insert(target.primaryKey)
            }
          }
        }
      }
      guard !added.isEmpty else { return }
      try scan(wanted)
      for (table, key) in added { core[table, default: []].insert(key) }
    }
  }

  /// Loads the objects `relationship` of the objects `keys` (of `entity`) reaches, and returns
  /// their keys.
  private mutating func follow(
    _ relationship: RelationshipDescription, of entity: String, keys: Set<Int64>
  ) throws -> Set<Int64> {
    let source = try table(of: entity)
    if !relationship.isToMany {
      var wanted: [String: Wanted] = [:]
      var reached: Set<Int64> = []
      for key in keys {
        guard let target = loaded[source]?[key]?.toOne[relationship.name] else { continue }
        reached.insert(target.primaryKey)
        if loaded[try table(of: target.entity)]?[target.primaryKey] == nil {
          wanted[target.entity, default: Wanted()].keys.insert(target.primaryKey)
        }
      }
      try scan(wanted)
      return reached
    }
    var wanted: [String: Wanted] = [:]
    try want(members: relationship, of: entity, keys: keys, into: &wanted)
    try scan(wanted)
    membersLoaded[relationshipKey(entity, relationship.name), default: []].formUnion(keys)
    return try members(relationship, of: entity, keys: keys)
  }

  /// The relationship `name` of `entity`, named by the entity that declares it.
  private func relationshipKey(_ entity: String, _ name: String) -> String {
    let declaring = model.lineage(of: entity).first { $0.relationship(named: name) != nil }
    return "\(declaring?.name ?? entity).\(name)"
  }

  /// Asks for the members of `relationship` of the objects `keys` of `entity`, wherever their
  /// links are kept.
  private func want(
    members relationship: RelationshipDescription, of entity: String, keys: Set<Int64>,
    into wanted: inout [String: Wanted]
  ) throws {
    let source = try table(of: entity)
    let members = concrete(relationship.destination)
    if let inverse = model.inverse(of: relationship), !inverse.isToMany {
      for member in members {
        wanted[member, default: Wanted()].byToOne[inverse.name, default: []].formUnion(keys)
      }
    } else if let inverse = model.inverse(of: relationship) {
      if layout.join(for: entity, relationship: relationship.name) != nil {
        for key in keys {
          for destination in loaded[source]?[key]?.joins[relationship.name] ?? [] {
            for member in members { wanted[member, default: Wanted()].keys.insert(destination) }
          }
        }
      } else {
        for member in members {
          wanted[member, default: Wanted()].byJoin[inverse.name, default: []].formUnion(keys)
        }
      }
    } else {
      guard let owner = layout.ownerColumns(ofToMany: relationship.name, in: entity) else {
        throw NotByParts()
      }
      for member in members {
        wanted[member, default: Wanted()].byOwner[owner.column, default: []].formUnion(keys)
      }
    }
  }

  /// The loaded members of `relationship` of the objects `keys` of `entity`.
  private func members(_ relationship: RelationshipDescription, of entity: String, keys: Set<Int64>)
    throws -> Set<Int64>
  {
    let source = try table(of: entity)
    let destination = try table(of: relationship.destination)
    let inverse = model.inverse(of: relationship)
    if inverse != nil, layout.join(for: entity, relationship: relationship.name) != nil {
      return Set(keys.flatMap { loaded[source]?[$0]?.joins[relationship.name] ?? [] })
    }
    let owner = layout.ownerColumns(ofToMany: relationship.name, in: entity)?.column
    let hierarchy = Set(concrete(relationship.destination))
    var found: Set<Int64> = []
    for (key, object) in loaded[destination] ?? [:] where hierarchy.contains(object.entity) {
      let isMember: Bool
      if let inverse, !inverse.isToMany {
        isMember = object.toOne[inverse.name].map { keys.contains($0.primaryKey) } ?? false
      } else if let inverse {
        isMember = object.joins[inverse.name]?.contains(where: keys.contains) ?? false
      } else if let owner {
        isMember = object.owners[owner].map(keys.contains) ?? false
      } else {
        isMember = false
      }
      if isMember { found.insert(key) }
    }
    return found
  }

  /// Reads the chunks of each entity `wanted` names, loading the objects it asks for.
  private mutating func scan(_ wanted: [String: Wanted]) throws {
    for (entity, wants) in wanted.sorted(by: { $0.key < $1.key }) where !wants.isEmpty {
      let tested = Set(wants.byToOne.keys).union(wants.byJoin.keys).union(wants.byOwner.keys)
      // A chunk whose ranges hold none of the keys asked for is not read.
      let mayHold = { (ranges: ChunkRanges) in
        ranges.mayHold(keys: wants.keys)
          || wants.byToOne.contains { ranges.mayHold($0.key, anyOf: $0.value) }
          || wants.byJoin.contains { ranges.mayHold($0.key, anyOf: $0.value) }
          || wants.byOwner.contains {
            ranges.mayHold(ColumnLayout.storedColumnPrefix + $0.key, anyOf: $0.value)
          }
      }
      try scan([entity], testing: tested, skippingUnless: mayHold) { batch in
        var rows: [Int] = []
        var chosen = [Bool](repeating: false, count: batch.count)
        for (row, key) in batch.primaryKeys.enumerated() where wants.keys.contains(key) {
          chosen[row] = true
        }
        for column in batch.toOne {
          guard let keys = wants.byToOne[column.name] else { continue }
          for (position, record) in column.records.enumerated()
          where keys.contains(column.keys[position]) {
            chosen[record] = true
          }
        }
        for column in batch.toMany {
          guard let keys = wants.byJoin[column.name] else { continue }
          for (position, record) in column.records.enumerated()
          where column.rows[position].contains(where: { keys.contains($0.0) }) {
            chosen[record] = true
          }
        }
        for column in batch.storedColumns {
          guard let keys = wants.byOwner[column.name] else { continue }
          for (position, record) in column.records.enumerated() {
            if let key = column.values.integer(at: position), keys.contains(key) {
              chosen[record] = true
            }
          }
        }
        for (row, isChosen) in chosen.enumerated() where isChosen { rows.append(row) }
        return rows
      }
    }
  }

  /// Reads the chunks of `entities` (concrete), loading the rows `pick` chooses in each that
  /// are not loaded yet; returns the keys of the objects chosen (loaded now or before).
  /// `pick` sees the primary keys and the columns `testing` names (every column when nil);
  /// the rest of a chunk is decoded only when it has rows to load. A chunk whose ranges in the
  /// index `mayHold` says hold nothing `pick` would choose is not read; the ranges of a chunk
  /// read are checked against what it holds.
  @discardableResult
  private mutating func scan(
    _ entities: [String], testing: Set<String>?,
    skippingUnless mayHold: ((ChunkRanges) -> Bool)? = nil, pick: (ObjectBatch) throws -> [Int]
  ) throws -> [(entity: String, key: Int64)] {
    var chosen: [(entity: String, key: Int64)] = []
    for entity in entities {
      let table = try self.table(of: entity)
      let ownerColumns = Set(layout.table(for: entity)?.ownerKeys.values.map { $0 } ?? [])
      let reading = (chunks[entity] ?? []).filter { member in
        guard let mayHold, let ranges = member.ranges else { return true }
        return mayHold(ranges)
      }
      let archive = self.archive
      // Of a chunk whose large columns have frames of their own, only the tested ones are read
      // until it has rows to load.
      let wanted = RecordDecoder(model: model, member: entity).columns(of: entity, for: testing)
      try archive.read(
        reading, columns: wanted, readThrough: Self.readThrough, span: Self.readSpan
      ) {
        member, content in
        let decoder = RecordDecoder(model: model, member: member.path)
        guard
          let chunk = try decoder.columnChunk(
            content.bytes, only: testing, unread: content.unread)
        else {
          throw NotByParts()
        }
        let tested = try decoder.decodeBatch(chunk, only: testing)
        try member.ranges?.check(tested, member: member.path)
        let rows = try pick(tested)
        chosen += rows.map { (entity, tested.primaryKeys[$0]) }
        let fresh = rows.filter { loaded[table]?[tested.primaryKeys[$0]] == nil }
        guard !fresh.isEmpty else { return }
        let batch: ObjectBatch
        if testing == nil {
          batch = tested
        } else {
          guard let whole = try decoder.columnChunk(archive.whole(member, given: content)) else {
            throw NotByParts()
          }
          batch = try decoder.decodeBatch(whole)
        }
        let picked = batch.picking(rows: fresh)
        try emit(.columns(picked), member.path)
        var objects = picked.primaryKeys.map { _ in Loaded(entity: entity) }
        for column in picked.toOne {
          for (position, record) in column.records.enumerated() {
            objects[record].toOne[column.name] = ObjectReference(
              entity: column.entities[position], primaryKey: column.keys[position])
          }
        }
        for column in picked.toMany {
          for (position, record) in column.records.enumerated() {
            objects[record].joins[column.name] = column.rows[position].map(\.0)
          }
        }
        for column in picked.storedColumns where ownerColumns.contains(column.name) {
          for (position, record) in column.records.enumerated() {
            if let key = column.values.integer(at: position) {
              objects[record].owners[column.name] = key
            }
          }
        }
        for (key, object) in zip(picked.primaryKeys, objects) {
          loaded[table, default: [:]][key] = object
        }
      }
    }
    return chosen
  }

  /// The concrete entities of `entity`'s hierarchy.
  private func concrete(_ entity: String) -> [String] {
    model.hierarchy(from: entity).filter { !$0.isAbstract }.map(\.name)
  }

  private func table(of entity: String) throws -> String {
    guard let table = layout.table(for: entity)?.name else { throw NotByParts() }
    return table
  }
}
