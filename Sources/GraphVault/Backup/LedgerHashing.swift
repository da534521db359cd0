import ArchiveFormat
import Foundation
import ObjectStore

/// Hashes a store's ledger sets (``LedgerSet``) into sketches (``ChangeSketch``): on the
/// backup's connection alone, or on it and a ``SnapshotTwin`` (through its ``TwinWorker``) at
/// once, each set cut into parts
/// by key ranges that the two take in turn, largest first. A sketch's cells add up whatever
/// order its elements went in, so each connection fills sketches of its own and they are
/// merged: the result is the one a single pass gives.
///
/// When the twin fails partway (a store locked past its busy timeout), what it hashed is
/// dropped and its parts are hashed again on the backup's connection.
package enum LedgerHashing {
  /// One set's sketch and how many elements went into it.
  package struct Sketched: Equatable {
    package var sketch: ChangeSketch
    package var elements = 0

    /// Adds the elements of `other`, a sketch of another part of the set.
    mutating func merge(_ other: Sketched) {
      sketch.merge(other.sketch)
      elements += other.elements
    }
  }

  /// The sketches, and how the work went.
  package struct Hashed {
    /// Each set's, by name.
    package var sketches: [String: Sketched]
    /// How many parts the sets were cut into.
    package var parts: Int
    /// How many of them the twin's sketches hold (none when it did not read the backup's
    /// snapshot, or failed).
    package var partsOnTwin: Int
    /// How many parts a failed twin had taken, hashed again on the backup's connection.
    package var partsHashedAgain = 0
  }

  /// A part of a set: the elements with keys from `from` and below `below` (each bound
  /// when given), or every element (`whole`).
  struct Part {
    let set: LedgerSet
    var from: Int64? = nil
    var below: Int64? = nil
    /// About how many keys it spans (what parts are taken in order of, largest first).
    let span: Int64
    var whole: Bool { from == nil && below == nil }
  }

  /// The keys a part spans at least, once its set is cut.
  package static let keysPerPart: Int64 = 65_536
  /// The most parts a set is cut into.
  static let partsPerSet: Int64 = 8

  /// The sketch of each of `sets` (by name), of `cells(set)` cells under `seed`, read from
  /// `store` inside its read transaction, and from the twin `worker` reads as well when it
  /// reads the same snapshot, in parts of at least `keysPerPart` keys.
  ///
  /// For tests, `twinFirst` has the backup's connection wait for the twin to take its first
  /// part (or give up), and `twinFailsAfter` has the twin throw after hashing that many parts,
  /// as one whose store stayed locked past its busy timeout does.
  /// - Throws: what reading `store` throws.
  package static func sketches(
    of sets: [LedgerSet], cells: (LedgerSet) -> Int, seed: UInt64, store: CoreDataStore,
    twin worker: TwinWorker?, keysPerPart: Int64 = keysPerPart, twinFirst: Bool = false,
    twinFailsAfter: Int? = nil
  ) throws -> Hashed {
    var empty: [String: Sketched] = [:]
    for set in sets {
      empty[set.name] = Sketched(sketch: ChangeSketch(cells: cells(set), seed: seed))
    }
    let parts = try cut(
      sets, store: store, keysPerPart: worker == nil ? nil : max(1, keysPerPart))
    var mine = empty
    guard let worker, parts.count > 1 else {
      for part in parts { try hash(part, from: store, seed: seed, into: &mine) }
      return Hashed(sketches: mine, parts: parts.count, partsOnTwin: 0)
    }
    let queue = PartQueue(parts)
    let helper = Helper(queue: queue, sketches: empty, seed: seed, failsAfter: twinFailsAfter)
    // The twin stops at its next part whatever happens here, and is waited for.
    try worker.alongside(helper.run, stop: queue.close) {
      if twinFirst { helper.started.wait() }
      while let part = queue.take() { try hash(part, from: store, seed: seed, into: &mine) }
    }
    if helper.failed {
      for part in helper.taken { try hash(part, from: store, seed: seed, into: &mine) }
      return Hashed(
        sketches: mine, parts: parts.count, partsOnTwin: 0, partsHashedAgain: helper.taken.count)
    }
    for (name, theirs) in helper.sketches {
      mine[name]!.merge(theirs)
    }
    return Hashed(sketches: mine, parts: parts.count, partsOnTwin: helper.taken.count)
  }

  /// `sets` in parts, largest first: with `keysPerPart`, a set with keys is cut into up to
  /// ``partsPerSet`` ranges of at least that many keys; without, each set is one part.
  static func cut(_ sets: [LedgerSet], store: CoreDataStore, keysPerPart: Int64?) throws
    -> [Part]
  {
    var parts: [Part] = []
    for set in sets {
      guard let keysPerPart, let bounds = try store.keyBounds(of: set) else {
        parts.append(Part(set: set, span: 1))
        continue
      }
      // Keys spread over more than half the 64-bit range (no Core Data store's) stay whole.
      let span = bounds.upperBound.subtractingReportingOverflow(bounds.lowerBound)
      let count = span.overflow ? 1 : max(1, min(partsPerSet, span.partialValue / keysPerPart))
      let width = span.overflow ? 1 : span.partialValue / count + 1
      // Cut at count - 1 bounds: the first part has no lower bound, the last no upper one.
      var from: Int64?
      var below = bounds.lowerBound
      for _ in 1..<count {
        let next = below.addingReportingOverflow(width)
        guard !next.overflow, next.partialValue <= bounds.upperBound else { break }
        below = next.partialValue
        parts.append(Part(set: set, from: from, below: below, span: width))
        from = below
      }
      parts.append(Part(set: set, from: from, span: width))
    }
    return parts.sorted { $0.span > $1.span }
  }

  /// Hashes the elements of `part` read from `store` into its set's sketch.
  static func hash(
    _ part: Part, from store: CoreDataStore, seed: UInt64, into sketches: inout [String: Sketched]
  ) throws {
    var sketched = sketches[part.set.name]!
    func add(_ key: Int64, _ hash: UInt64) {
      sketched.sketch.insert(key: key, hash: hash)
      sketched.elements += 1
    }
    if part.whole {
      try store.forEachElement(of: part.set, seed: seed, add)
    } else {
      try store.forEachElement(of: part.set, seed: seed, from: part.from, below: part.below, add)
    }
    sketches[part.set.name] = sketched
  }

  /// The parts not taken yet, handed out one at a time to either connection.
  private final class PartQueue: @unchecked Sendable {
    private let lock = NSLock()
    private var parts: ArraySlice<Part>
    private var closed = false

    init(_ parts: [Part]) { self.parts = parts[...] }

    /// The next part, nil once none is left or the queue was closed.
    func take() -> Part? {
      lock.withLock { closed ? nil : parts.popFirst() }
    }

    /// Hands out no more parts.
    func close() { lock.withLock { closed = true } }
  }

  /// The twin's side, run on its worker's thread: the parts it took, its sketches, whether it
  /// failed (read once its job is done).
  private final class Helper: @unchecked Sendable {
    private let queue: PartQueue
    private let seed: UInt64
    private let failsAfter: Int?
    private(set) var sketches: [String: Sketched]
    private(set) var taken: [Part] = []
    private(set) var failed = false
    /// Signalled once the twin took its first part, or gave up without one.
    let started = DispatchSemaphore(value: 0)

    init(queue: PartQueue, sketches: [String: Sketched], seed: UInt64, failsAfter: Int?) {
      self.queue = queue
      self.sketches = sketches
      self.seed = seed
      self.failsAfter = failsAfter
    }

    /// Takes parts until none is left, hashing them from `store` (nil: the twin cannot help,
    /// and takes none).
    func run(_ store: CoreDataStore?) {
      defer { if taken.isEmpty { started.signal() } }
      guard let store else { return }
      do {
        while let part = queue.take() {
          taken.append(part)
          if taken.count == 1 { started.signal() }
          try LedgerHashing.hash(part, from: store, seed: seed, into: &sketches)
          if let failsAfter, taken.count >= failsAfter { throw CancellationError() }
        }
      } catch {
        failed = true
      }
    }
  }
}
