import ArchiveFormat
import ObjectStore

/// The change ledger a backup writes (``ChangeLedger``), worked out inside its read
/// transaction: a full archive's sketch of every set of rows, or what an incremental archive
/// holds against its parent (``ChainTip``).
struct LedgerPlan {
  /// The ledger to write.
  var ledger: ChangeLedger
  /// Whether the archive carries the store's model cache (an incremental archive does only
  /// when it changed since its parent).
  var carriesModelCache: Bool
  /// A full archive's sets whose sketches are left for later (``full(store:layout:modelCache:seed:worker:later:)``),
  /// each with its rows and the cells of its sketch.
  private(set) var later: [(set: LedgerSet, rows: Int, cells: Int)] = []

  /// The ledger of a full archive of `store`: each set's sketch, sized by its rows, under
  /// `seed`, or a new random one; hashed on the twin `worker` reads too when it reads the same
  /// snapshot.
  ///
  /// With `later`, no set is hashed yet: the backup hashes the objects' rows as it reads them
  /// and the plan's ``sketches(hashed:store:worker:)`` the rest once they are read (format 5,
  /// whose full archives hold their sketches after the objects).
  static func full(
    store: CoreDataStore, layout: StoreLayout, modelCache: [UInt8]?, seed: UInt64? = nil,
    worker: TwinWorker? = nil, later: Bool = false
  ) throws -> LedgerPlan {
    var generator = SystemRandomNumberGenerator()
    var ledger = ChangeLedger(seed: seed ?? generator.next(), isIncremental: false)
    let sets = try store.ledgerSets(layout: layout)
    var plan = LedgerPlan(ledger: ledger, carriesModelCache: modelCache != nil)
    for set in sets {
      let rows = try store.count(table: "\"\(set.table)\"")
      plan.later.append((set, rows, ChangeSketch.cells(forElements: rows)))
      if case .table(let column?) = set.kind { ledger.tableKeys[set.name] = column }
    }
    ledger.modelCache = modelCache.map(Checksum.sha256)
    ledger.sketchesFollow = later
    plan.ledger = ledger
    if !later {
      plan.ledger.sets = try plan.sketches(hashed: [:], store: store, worker: worker)
      plan.later = []
    }
    return plan
  }

  /// The sketch cells and how rows are hashed of each `objects/ROOT` set left for later, by
  /// root entity: what a backup hashes as it reads the objects.
  func objectHashing(store: CoreDataStore) throws -> [String: (rows: RowHashing, cells: Int)] {
    var hashing: [String: (rows: RowHashing, cells: Int)] = [:]
    for (set, _, cells) in later {
      guard case .objects(let root) = set.kind else { continue }
      hashing[root] = (try store.rowHashing(of: set.table, seed: ledger.seed), cells)
    }
    return hashing
  }

  /// The sketches of the sets left for later: those `hashed` holds as they were read (by set
  /// name, with how many rows went in) when that is every row of the set, the others
  /// (``hashedAfter(_:)``) hashed now from `store` (on the twin `worker` reads too), as
  /// ``full(store:layout:modelCache:seed:worker:later:)`` hashes them at once.
  func sketches(
    hashed: [String: LedgerHashing.Sketched], store: CoreDataStore,
    worker: TwinWorker?
  ) throws -> [String: ChangeSketch] {
    let left = hashedAfter(hashed)
    var cells: [String: Int] = [:]
    for (set, _, count) in later { cells[set.name] = count }
    // Nothing else is read meanwhile: parts of fewer keys keep both connections busy on a
    // join table of few owners with many rows each.
    let sketched = try LedgerHashing.sketches(
      of: left, cells: { cells[$0.name]! }, seed: ledger.seed, store: store, twin: worker,
      keysPerPart: LedgerHashing.keysPerPart / 16
    ).sketches
    var sketches = hashed.mapValues(\.sketch)
    for set in left { sketches[set.name] = sketched[set.name]!.sketch }
    return sketches
  }

  /// The sets left for later that reading the objects did not hash whole, given what it
  /// hashed (``sketches(hashed:store:worker:)``): the join tables and other tables, and an
  /// `objects/ROOT` set with rows that no entity's objects hold (an abstract or unknown
  /// `Z_ENT`).
  func hashedAfter(_ hashed: [String: LedgerHashing.Sketched]) -> [LedgerSet] {
    later.filter { hashed[$0.set.name]?.elements != $0.rows }.map(\.set)
  }

  /// What an incremental archive of `store` holds against `tip`: each set's difference read
  /// off the sketches and checked against the rows; a failure, with the reason, when the
  /// store's sets are not the parent's or more changed than the sketches can tell apart.
  static func incremental(
    store: CoreDataStore, layout: StoreLayout, tip: ChainTip, modelCache: [UInt8]?,
    worker: TwinWorker? = nil
  ) throws -> Result<LedgerPlan, ChainTip.NoParent> {
    let sets = try store.ledgerSets(layout: layout)
    guard Set(sets.map(\.name)) == Set(tip.sketches.keys) else {
      return .failure(
        ChainTip.NoParent(reason: "the store's tables are not those of \(tip.parent.name)"))
    }
    var ledger = ChangeLedger(seed: tip.seed, isIncremental: true)
    let sketched = try LedgerHashing.sketches(
      of: sets, cells: { tip.sketches[$0.name]!.cellCount }, seed: tip.seed, store: store,
      twin: worker
    ).sketches
    var changedOwners: [String: Set<Int64>] = [:]
    // Sets whose difference the sketch cannot give back are written whole: worth it while
    // they hold under half the store's rows, else the archive is a full one.
    var rewritten = 0
    var total = 0
    for set in sets {
      if case .table(let column?) = set.kind { ledger.tableKeys[set.name] = column }
      let parent = tip.sketches[set.name]!
      let sketch = sketched[set.name]!.sketch
      let rows = sketched[set.name]!.elements
      total += rows
      guard let difference = sketch.difference(from: parent) else {
        rewritten += rows
        ledger.sets[set.name] = sketch
        switch set.kind {
        case .objects, .table: ledger.replaced.append(set.name)
        case .join(let root, _, _, _): ledger.replaced.append("objects/\(root)")
        }
        continue
      }
      guard !difference.added.isEmpty || !difference.removed.isEmpty else { continue }
      let delta = ChangeLedger.Delta(
        added: difference.added.map { ChangeLedger.Element(key: $0.key, hash: $0.hash) },
        removed: difference.removed.map { ChangeLedger.Element(key: $0.key, hash: $0.hash) })
      guard try holds(store, set, delta, seed: tip.seed) else {
        return .failure(
          ChainTip.NoParent(
            reason: "the difference read for \(set.name) does not match the store's rows"))
      }
      ledger.deltas[set.name] = delta
      let added = delta.added.map(\.key)
      let removedOnly = Set(delta.removed.map(\.key)).subtracting(added).sorted()
      switch set.kind {
      case .objects:
        ledger.written[set.name] = added
        if !removedOnly.isEmpty { ledger.deleted[set.name] = removedOnly }
      case .join(let root, _, _, _):
        changedOwners["objects/\(root)", default: []].formUnion(
          added + delta.removed.map(\.key))
      case .table(_?):
        if !added.isEmpty { ledger.written[set.name] = added }
        if !removedOnly.isEmpty { ledger.deleted[set.name] = removedOnly }
      case .table(nil):
        ledger.replaced.append(set.name)
      }
    }
    if rewritten * 2 > total {
      return .failure(
        ChainTip.NoParent(
          reason:
            "more changed since \(tip.parent.name) than its ledger can tell apart (\(ledger.replaced.sorted().joined(separator: ", "))), and those sets hold most of the store's rows"
        ))
    }
    // A set written whole needs no keys; its parts are its sketch.
    ledger.replaced = Array(Set(ledger.replaced)).sorted()
    for name in ledger.replaced {
      ledger.written[name] = nil
      ledger.deleted[name] = nil
      changedOwners[name] = nil
    }
    // An owner whose join rows changed is written whole (its record lists them), if it is
    // still there.
    for (name, owners) in changedOwners {
      let written = Set(ledger.written[name] ?? [])
      let candidates = owners.subtracting(written).sorted()
      guard !candidates.isEmpty, let set = sets.first(where: { $0.name == name }) else { continue }
      var existing: [Int64] = []
      try store.forEachElement(of: set, seed: tip.seed, keys: candidates) { key, _ in
        existing.append(key)
      }
      ledger.written[name] = written.union(existing).sorted()
    }
    ledger.written = ledger.written.filter { !$0.value.isEmpty }
    ledger.modelCache = modelCache.map(Checksum.sha256)
    return .success(
      LedgerPlan(
        ledger: ledger,
        carriesModelCache: modelCache != nil && ledger.modelCache != tip.modelCache))
  }

  /// Whether the store's rows are what `delta` says: each added element's key has that hash
  /// now, and no key removed without being added is there any more.
  private static func holds(
    _ store: CoreDataStore, _ set: LedgerSet, _ delta: ChangeLedger.Delta, seed: UInt64
  ) throws -> Bool {
    let keys = Set(delta.added.map(\.key) + delta.removed.map(\.key)).sorted()
    var found: [Int64: UInt64] = [:]
    try store.forEachElement(of: set, seed: seed, keys: keys) { found[$0] = $1 }
    guard found.count == delta.added.count else { return false }
    return delta.added.allSatisfy { found[$0.key] == $0.hash }
  }
}
