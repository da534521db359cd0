import ObjectModel
import ObjectStore
import PropertyList

/// A chain of archives (a full archive and the incremental archives written after it, each
/// naming the one before as its parent) read as one archive of the newest point: the events an
/// ``ArchiveScanner`` of that point would give, in one pass over every archive at once.
///
/// Each archive is scanned and checked as it would be alone (an incremental one holds the
/// records its ledger lists). Then, entity by entity, their objects are merged by key, newest
/// first: an object the newer archives wrote again or deleted (``ChangeLedger/written``,
/// ``ChangeLedger/deleted``) is left out of the older ones, so each key comes once, in
/// ascending order, as in one archive. Rows of tables outside the model are taken likewise by
/// their key, or, for a table without one, from the newest archive that holds it whole.
///
/// Checked besides: each archive names the one before it as its parent, by name and by the
/// SHA-256 of its index; they are of one store (its UUID), model and ledger seed; the first is
/// a full archive; and, over the merged objects, what one archive's scan checks at its end:
/// every reference resolves, each hierarchy's `Z_MAX` (the newest archive's) covers its keys.
package final class ChainScanner: ArchiveEventSource {
  /// One archive of the chain, opened and read up to its objects (``ArchiveScanner/readStore()``).
  package struct Link {
    /// Its file name, as its child names it.
    package let name: String
    /// Its scan.
    package let scanner: ArchiveScanner
    /// What it holds before its objects.
    package let store: ArchivedStore

    /// The archive `name`, scanned by `scanner`, which has read `store`.
    package init(name: String, scanner: ArchiveScanner, store: ArchivedStore) {
      self.name = name
      self.scanner = scanner
      self.store = store
    }
  }

  private let links: [Link]
  private let collecting: Int?
  private var heads: [ArchiveScanner.Event?]
  private var ended: [Bool]
  /// Per link, the keys newer links wrote or deleted, by set name (`objects/ROOT`,
  /// `tables/TABLE`).
  private var superseded: [[String: KeySet]]
  /// Per link, the sets a newer link holds whole: none of this link's records or rows of
  /// them stand.
  private var replacedByNewer: [Set<String>]
  private let entities: [String]
  private var nextEntity = 0
  private var begun = false
  private var finished = false
  private var ledger: KeyLedger
  private var pending: [ArchiveScanner.Event] = []
  private var chainProblems: [ArchiveFormatError] = []

  package private(set) var objects: [String: Int] = [:]
  package private(set) var tables: [String: Int] = [:]
  package private(set) var store: ArchivedStore?
  package var problems: [ArchiveFormatError] {
    links.flatMap { link in link.scanner.problems.map { named($0, link) } } + chainProblems
  }
  package var memberCount: Int { links.map(\.scanner.memberCount).reduce(0, +) }
  package var damagedEntities: Set<String> {
    links.reduce(into: Set<String>()) { $0.formUnion($1.scanner.damagedEntities) }
  }
  package var isComplete: Bool { links.allSatisfy(\.scanner.isComplete) }
  package var readToTheEnd: Bool { finished && links.allSatisfy(\.scanner.readToTheEnd) }

  /// The chain of `links`, the full archive first and each next one the child of the one
  /// before; problems are kept (at most `collectingProblems`) rather than thrown when given.
  package init(links: [Link], collectingProblems: Int? = nil) {
    precondition(!links.isEmpty)
    self.links = links
    collecting = collectingProblems
    heads = Array(repeating: nil, count: links.count)
    ended = Array(repeating: false, count: links.count)
    let newest = links[links.count - 1].store
    let model = newest.model
    entities = model.numberedEntities
      .filter { !$0.isAbstract }.map(\.name)
    ledger = KeyLedger(model: model)
    // Each link's set is built on its own: a KeySet's blocks are shared by its copies.
    superseded = links.indices.map { index in
      var newer: [String: KeySet] = [:]
      for later in links[(index + 1)...] {
        guard let changes = later.store.changes, changes.isIncremental else { continue }
        for (name, keys) in changes.written.merging(changes.deleted, uniquingKeysWith: +) {
          var set = newer.removeValue(forKey: name) ?? KeySet()
          for key in keys { set.insert(key) }
          newer[name] = set
        }
      }
      return newer
    }
    replacedByNewer = links.indices.map { index in
      Set(links[(index + 1)...].flatMap { $0.store.changes?.replaced ?? [] })
    }
  }

  /// A link's problem, named with its archive.
  private func named(_ error: ArchiveFormatError, _ link: Link) -> ArchiveFormatError {
    ArchiveFormatError(member: "\(link.name): \(error.member)", error.detail, kind: error.kind)
  }

  private func problem(_ member: String, _ detail: String) throws {
    let error = ArchiveFormatError(member: member, detail)
    guard let collecting else { throw error }
    if chainProblems.count < collecting { chainProblems.append(error) }
  }

  /// The next event of link `index` (its head first), its problems named with its archive.
  private func take(_ index: Int) throws -> ArchiveScanner.Event? {
    if let head = heads[index] {
      heads[index] = nil
      return head
    }
    guard !ended[index] else { return nil }
    do {
      if let event = try links[index].scanner.next() { return event }
      ended[index] = true
      return nil
    } catch let error as ArchiveFormatError {
      throw named(error, links[index])
    }
  }

  private func peek(_ index: Int) throws -> ArchiveScanner.Event? {
    if heads[index] == nil { heads[index] = try take(index) }
    return heads[index]
  }

  package func next() throws -> ArchiveScanner.Event? {
    if !begun {
      begun = true
      return .begin(try begin())
    }
    while pending.isEmpty && !finished {
      if nextEntity < entities.count {
        try step()
      } else {
        try rest()
      }
    }
    return pending.isEmpty ? nil : pending.removeFirst()
  }

  // MARK: The start

  /// The newest point's store, after the chain's links are checked against each other.
  private func begin() throws -> ArchivedStore {
    let first = links[0]
    if first.store.header.isIncremental {
      try problem(
        "\(first.name): \(ArchiveLayout.header)",
        "the chain does not start at a full archive: \(first.name) names a parent, \(first.store.header.parent?.name ?? "")"
      )
    }
    for (parent, child) in zip(links, links.dropFirst()) {
      let member = "\(child.name): \(ArchiveLayout.header)"
      if child.store.header.parent?.name != parent.name {
        try problem(
          member, "the parent is \(child.store.header.parent?.name ?? "none"), not \(parent.name)")
      }
      if child.store.header.sourceUUID != first.store.header.sourceUUID {
        try problem(member, "the archive is of another store (UUID) than \(first.name)")
      }
      if child.store.model.fingerprint != first.store.model.fingerprint {
        try problem(member, "the archive's model is not \(first.name)'s")
      }
      if child.store.changes?.seed != first.store.changes?.seed {
        try problem(member, "the archive's ledger is not of \(first.name)'s chain")
      }
    }
    // The model cache travels only when it changed: the newest archive that carries it.
    let newest = links[links.count - 1].store
    let cache = links.reversed().lazy.compactMap(\.store.modelCache).first
    if let digest = newest.changes?.modelCache, cache.map(Checksum.sha256) != digest {
      try problem(
        "\(links[links.count - 1].name): \(ArchiveLayout.changes)",
        "the chain's model cache is not the one the ledger names")
    }
    // The header's counts are the newest archive's changes, not the point's objects.
    var fields = newest.header.plist.dictionaryValue ?? [:]
    fields["objects"] = nil
    let merged = ArchivedStore(
      header: ArchiveHeader(reading: .dictionary(fields)),
      model: newest.model, schema: newest.schema, layout: newest.layout,
      entityRows: newest.entityRows, metadata: newest.metadata, modelCache: cache,
      changes: newest.changes)
    store = merged
    return merged
  }

  // MARK: Objects

  /// One link's place in its current chunk of the entity being merged.
  private struct Cursor {
    var batch: ObjectBatch
    var member: String
    var row = 0
    /// The batch's place among the sources of the chunk being gathered, once it gave it a row.
    var source: Int?
  }

  /// The link whose rows are being read, after the objects.
  private var restLink = 0
  /// Where the objects stand between two calls: the merge's cursors, one a link (empty
  /// before an entity's merge begins).
  private var cursors: [Cursor?] = []
  /// Per link, for the entity being merged: the keys newer links wrote or deleted (nil when
  /// none), and whether a newer link holds its whole set.
  private var newerKeys: [KeySet?] = []
  private var replaced: [Bool] = []

  /// Gives the next chunk of the current entity's objects (`pending`), or moves on to the next
  /// entity: one chunk at a time, so that the sink works on one while the next is read.
  private func step() throws {
    let entity = entities[nextEntity]
    if try !mergeChunk(entity) {
      nextEntity += 1
      cursors = []
    }
  }

  /// The root set name of `entity`'s hierarchy.
  private func rootSet(_ entity: String) -> String {
    "objects/\(store!.model.root(of: entity)?.name ?? entity)"
  }

  /// The next chunk of `entity` of link `index`, nil once it has no more.
  private func nextChunk(of entity: String, from index: Int) throws -> (
    batch: ObjectBatch, member: String
  )? {
    while true {
      if case .begin? = try peek(index) {
        heads[index] = nil
        continue
      }
      guard case .objects(let chunk, let member)? = try peek(index),
        ArchiveLayout.entity(ofObjectsMember: member) == entity
      else { return nil }
      heads[index] = nil
      guard case .columns(let batch) = chunk else {
        try problem(
          "\(links[index].name): \(member)", "a chain's archives hold their objects by column")
        continue
      }
      return (batch, member)
    }
  }

  /// Moves link `index`'s cursor to its next object of `entity` that no newer link
  /// supersedes, reading its next chunk when this one is done (nil once it has none).
  /// - Returns: whether the cursor now stands in another chunk than before.
  @discardableResult
  private func advance(_ index: Int, _ entity: String) throws -> Bool {
    var movedOn = false
    while true {
      if let cursor = cursors[index], cursor.row < cursor.batch.count {
        if replaced[index] {
          cursors[index]!.row = cursor.batch.count
          continue
        }
        guard let newer = newerKeys[index], newer.contains(cursor.batch.primaryKeys[cursor.row])
        else { return movedOn }
        cursors[index]!.row += 1
        continue
      }
      cursors[index] = nil
      guard let (batch, member) = try nextChunk(of: entity, from: index) else { return false }
      cursors[index] = Cursor(batch: batch, member: member)
      movedOn = true
    }
  }

  /// Gives one chunk of `entity`'s objects merged by key across the links (a key newer links
  /// supersede comes from the newest that holds it); false once none is left. The link with
  /// the smallest key gives a run of its rows up to the next link's smallest key, so that
  /// the work is done per run rather than per row.
  private func mergeChunk(_ entity: String) throws -> Bool {
    if cursors.isEmpty {
      let root = rootSet(entity)
      newerKeys = links.indices.map { superseded[$0][root] }
      replaced = links.indices.map { replacedByNewer[$0].contains(root) }
      cursors = Array(repeating: nil, count: links.count)
      for index in links.indices { try advance(index, entity) }
    }
    for index in cursors.indices { cursors[index]?.source = nil }
    // The output chunk: picks of the batches at hand, each batch once in `sources`.
    var sources: [ObjectBatch] = []
    var picks: [(source: Int, row: Int)] = []
    var member = ""
    // The chunk also ends where a link that gave it rows moves on to its next chunk, so
    // that it holds about one chunk of each link at most, as their archives' readers do.
    var movedOn = false
    while picks.count < ArchiveLayout.chunkRecords && !movedOn {
      // The link with the smallest key (the older one on a tie, which the ledger reports),
      // and the smallest key of the others: where its run ends.
      var best: (index: Int, key: Int64)?
      var limit: Int64?
      for index in cursors.indices {
        guard let cursor = cursors[index] else { continue }
        let key = cursor.batch.primaryKeys[cursor.row]
        if let chosen = best, chosen.key <= key {
          limit = min(limit ?? key, key)
        } else {
          if let chosen = best { limit = chosen.key }
          best = (index, key)
        }
      }
      guard let index = best?.index else { break }
      if picks.isEmpty { member = cursors[index]!.member }
      repeat {
        if cursors[index]!.source == nil {
          cursors[index]!.source = sources.count
          sources.append(cursors[index]!.batch)
        }
        picks.append((cursors[index]!.source!, cursors[index]!.row))
        cursors[index]!.row += 1
        movedOn = try advance(index, entity)
      } while picks.count < ArchiveLayout.chunkRecords && cursors[index] != nil && !movedOn
        && limit.map { cursors[index]!.batch.primaryKeys[cursors[index]!.row] < $0 } ?? true
    }
    guard !picks.isEmpty else { return false }
    // A batch taken whole, alone and in order, goes as it is.
    let whole =
      sources.count == 1 && picks.count == sources[0].count
      && picks.enumerated().allSatisfy { $0.offset == $0.element.row }
    let batch = whole ? sources[0] : ObjectBatch.gathering(sources, picks)
    try record(batch, member: member)
    pending.append(.objects(.columns(batch), place: member))
    return true
  }

  /// Counts a merged batch and records its keys and references for the checks at the end.
  private func record(_ batch: ObjectBatch, member: String) throws {
    objects[batch.entity, default: 0] += batch.count
    if let problem = ledger.add(keys: batch.primaryKeys, of: batch.entity) {
      try self.problem(member, problem)
    }
    let relationships = store!.model.relationships(of: batch.entity)
    for column in batch.toOne {
      guard let relationship = relationships.first(where: { $0.name == column.name }) else {
        continue
      }
      ledger.add(
        references: column.keys, from: batch.entity, through: column.name,
        to: relationship.destination)
    }
    for column in batch.toMany {
      guard let relationship = relationships.first(where: { $0.name == column.name }) else {
        continue
      }
      for rows in column.rows {
        ledger.add(
          references: rows.lazy.map(\.0), from: batch.entity, through: column.name,
          to: relationship.destination)
      }
    }
  }

  // MARK: Rows and the end

  /// Emits every link's rows of tables outside the model that no newer link supersedes, then
  /// reads every link to its end and checks the chain.
  private func rest() throws {
    // One event at a time, as the objects: a table's rows go while the next are read.
    while restLink < links.count {
      let index = restLink
      guard let event = try take(index) else {
        restLink += 1
        continue
      }
      switch event {
      case .rows(let rows, let table, let member):
        let name = "tables/\(table)"
        let kept: [[String: AttributeValue]]
        if replacedByNewer[index].contains(name) {
          kept = []
        } else if let column = links[0].store.changes?.tableKeys[name],
          let newer = superseded[index][name]
        {
          kept = rows.filter { row in
            guard case .integer(let key)? = row[column] else { return true }
            return !newer.contains(key)
          }
        } else {
          kept = rows
        }
        guard !kept.isEmpty else { continue }
        tables[table, default: 0] += kept.count
        pending.append(.rows(kept, table: table, place: "\(links[index].name): \(member)"))
        return
      case .objects(_, let member):
        try problem(
          "\(links[index].name): \(member)",
          "the objects are out of the model's entity order")
      case .begin: continue
      }
    }
    finished = true
    try checkEnd()
  }

  private func checkEnd() throws {
    guard links.allSatisfy({ $0.scanner.readToTheEnd && $0.scanner.problems.isEmpty }) else {
      return
    }
    for (parent, child) in zip(links, links.dropFirst())
    where child.store.header.parent?.index != parent.scanner.indexDigest {
      try problem(
        "\(child.name): \(ArchiveLayout.header)",
        "its parent \(parent.name) is not the archive it was written against (the index's SHA-256 differs): the parent was replaced or damaged"
      )
    }
    guard chainProblems.isEmpty, let store else { return }
    for (entity, unresolved) in ledger.unresolvedReferences() {
      try problem("objects/\(entity)", unresolved)
    }
    for problem in ledger.keysAboveMaximum(in: store) {
      try self.problem(ArchiveLayout.storePrimaryKeys, problem)
    }
  }
}
