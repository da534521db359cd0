import PropertyList

/// An archive's `changes.plist` (format 3): what the next incremental backup needs to find
/// what changed in the store, and, in an incremental archive, what changed since its parent.
///
/// A **full** archive keeps a ``ChangeSketch`` of each set of rows (``sets``: entity
/// hierarchies by `objects/ROOT`, join tables by `joins/TABLE`, other tables by
/// `tables/TABLE`). An **incremental** one keeps, for each set that changed, the elements that
/// left it and came into it (``deltas``), so that the chain's sketches are the full's with each
/// incremental's deltas applied in turn; and what a restore of the chain needs: the keys of the
/// records and rows it holds (``written``) and those deleted since its parent (``deleted``), by
/// set, and the tables it holds whole (``replaced``).
package struct ChangeLedger: Equatable, Sendable {
  /// One element of a set: a key and the hash of its row.
  package struct Element: Equatable, Sendable {
    /// The key (`Z_PK`, an owner's key, a rowid; 0 for a whole table).
    package let key: Int64
    /// The ``ObjectStore/RowHasher`` hash.
    package let hash: UInt64

    /// The element of `key` with `hash`.
    package init(key: Int64, hash: UInt64) {
      self.key = key
      self.hash = hash
    }
  }

  /// What left a set and what came into it since the parent.
  package struct Delta: Equatable, Sendable {
    /// Elements the store holds now and the parent did not, by key.
    package var added: [Element]
    /// Elements the parent held and the store does not any more, by key.
    package var removed: [Element]

    /// A delta of `added` and `removed` elements.
    package init(added: [Element], removed: [Element]) {
      self.added = added.sorted { $0.key < $1.key }
      self.removed = removed.sorted { $0.key < $1.key }
    }
  }

  /// The seed every hash and sketch of the chain is keyed by.
  package let seed: UInt64
  /// A full archive's sketches, by set name; an incremental one's for the sets whose sketch
  /// it replaces.
  package var sets: [String: ChangeSketch] = [:]
  /// An incremental archive's deltas, by set name (only the sets that changed).
  package var deltas: [String: Delta] = [:]
  /// Keys of the records (`objects/ROOT`) and rows (`tables/TABLE`) an incremental archive
  /// holds, ascending.
  package var written: [String: [Int64]] = [:]
  /// Keys deleted since the parent, by the same names, ascending.
  package var deleted: [String: [Int64]] = [:]
  /// Sets an incremental archive holds whole, replacing every older archive's records or rows
  /// of them: a table without a key that changed, and a set whose difference was too large for
  /// its sketch to give back (`objects/ROOT`, `tables/TABLE`; for `joins/TABLE`, its owners'
  /// hierarchy). Their sketches travel whole, in ``sets``.
  package var replaced: [String] = []
  /// The key column of each table outside the model that has one (`tables/TABLE` → its
  /// `INTEGER PRIMARY KEY`): a chain's rows of it are told apart by that column.
  package var tableKeys: [String: String] = [:]
  /// The SHA-256 (hexadecimal) of the store's model cache at this point, when it has one;
  /// an incremental archive carries the cache only when it differs from its parent's.
  package var modelCache: String?

  /// Whether this is an incremental archive's ledger.
  package let isIncremental: Bool
  /// Whether a full archive's ``sets`` come after its objects, in `sketches.plist` (format 5,
  /// ``sketchesPlist(_:)``), rather than in this member: ``plist`` leaves them out.
  package var sketchesFollow = false

  /// An empty ledger of a full (`isIncremental` false) or incremental archive.
  package init(seed: UInt64, isIncremental: Bool) {
    self.seed = seed
    self.isIncremental = isIncremental
  }

  /// The chain's sketches after this incremental: `sketches` (its parent's) with this
  /// ledger's deltas applied. Nil when a delta names a set `sketches` lack.
  package func applied(to sketches: [String: ChangeSketch]) -> [String: ChangeSketch]? {
    var result = sketches
    for (name, sketch) in sets {
      guard result[name] != nil else { return nil }
      result[name] = sketch
    }
    for (name, delta) in deltas {
      guard var sketch = result[name] else { return nil }
      for element in delta.removed { sketch.remove(key: element.key, hash: element.hash) }
      for element in delta.added { sketch.insert(key: element.key, hash: element.hash) }
      result[name] = sketch
    }
    return result
  }

  // MARK: The member

  /// The member as a property list (`docs/FORMAT.md`, section 12).
  package var plist: PropertyListValue {
    var fields: [String: PropertyListValue] = [
      "kind": .string(isIncremental ? "incremental" : "full"),
      "seed": .integer(Int64(bitPattern: seed)),
    ]
    if isIncremental {
      fields["deltas"] = .dictionary(
        deltas.mapValues { delta in
          ["added": Self.encode(delta.added), "removed": Self.encode(delta.removed)]
        })
      fields["written"] = .dictionary(written.mapValues { .data(Self.encode(keys: $0)) })
      fields["deleted"] = .dictionary(deleted.mapValues { .data(Self.encode(keys: $0)) })
      fields["replaced"] = .array(replaced.sorted().map(PropertyListValue.string))
    }
    if isIncremental ? !sets.isEmpty : !sketchesFollow { fields["sets"] = Self.encode(sets) }
    if let modelCache { fields["modelCache"] = .string(modelCache) }
    fields["tableKeys"] = .dictionary(tableKeys.mapValues(PropertyListValue.string))
    return .dictionary(fields)
  }

  /// A full archive's `sketches.plist` (format 5): its `sets`, after its objects.
  package static func sketchesPlist(_ sets: [String: ChangeSketch]) -> PropertyListValue {
    ["sets": encode(sets)]
  }

  /// The sets a `sketches.plist` (``sketchesPlist(_:)``) holds, keyed by `seed`.
  /// - Throws: ``ArchiveFormatError`` naming `member` and what is wrong.
  package static func sets(
    fromSketches value: PropertyListValue, seed: UInt64,
    member: String = ArchiveLayout.sketches
  ) throws(ArchiveFormatError) -> [String: ChangeSketch] {
    guard let sets = value["sets"]?.dictionaryValue else {
      throw ArchiveFormatError(member: member, "the member holds no sets of sketches")
    }
    return try decode(sets, seed: seed, member: member)
  }

  private static func encode(_ sets: [String: ChangeSketch]) -> PropertyListValue {
    .dictionary(
      sets.mapValues { ["cells": .integer(Int64($0.cellCount)), "sketch": .data($0.serialized)] })
  }

  private static func decode(
    _ sets: [String: PropertyListValue], seed: UInt64, member: String
  ) throws(ArchiveFormatError) -> [String: ChangeSketch] {
    var decoded: [String: ChangeSketch] = [:]
    for (name, entry) in sets {
      guard let cells = entry["cells"]?.integerValue, cells > 0, cells <= 1 << 26,
        let bytes = entry["sketch"]?.dataValue,
        let sketch = ChangeSketch(serialized: bytes, cells: Int(cells), seed: seed)
      else { throw ArchiveFormatError(member: member, "the sketch of \(name) is damaged") }
      decoded[name] = sketch
    }
    return decoded
  }

  private static func encode(_ elements: [Element]) -> PropertyListValue {
    var hashes: [UInt8] = []
    hashes.reserveCapacity(elements.count * 8)
    for element in elements {
      for shift in 0..<8 { hashes.append(UInt8(truncatingIfNeeded: element.hash >> (8 * shift))) }
    }
    return ["keys": .data(encode(keys: elements.map(\.key))), "hashes": .data(hashes)]
  }

  private static func encode(keys: [Int64]) -> [UInt8] {
    var bytes: [UInt8] = []
    var previous: Int64 = 0
    for key in keys { Varint.appendDelta(key, previous: &previous, to: &bytes) }
    return bytes
  }

  /// The ledger `value` holds.
  /// - Throws: ``ArchiveFormatError`` naming `member` and what is wrong.
  package init(_ value: PropertyListValue, member: String = ArchiveLayout.changes)
    throws(ArchiveFormatError)
  {
    func bad(_ detail: String) -> ArchiveFormatError { ArchiveFormatError(member: member, detail) }
    guard let kind = value["kind"]?.stringValue, kind == "full" || kind == "incremental",
      let seed = value["seed"]?.integerValue
    else { throw bad("the ledger lacks its kind (full or incremental) or its seed") }
    self.init(seed: UInt64(bitPattern: seed), isIncremental: kind == "incremental")
    modelCache = value["modelCache"]?.stringValue
    tableKeys = (value["tableKeys"]?.dictionaryValue ?? [:]).compactMapValues(\.stringValue)
    if let encoded = value["sets"]?.dictionaryValue {
      sets = try Self.decode(encoded, seed: self.seed, member: member)
    }
    guard isIncremental else {
      sketchesFollow = value["sets"] == nil
      return
    }
    for (name, entry) in value["deltas"]?.dictionaryValue ?? [:] {
      guard let added = Self.elements(entry["added"]), let removed = Self.elements(entry["removed"])
      else { throw bad("the delta of \(name) is damaged") }
      deltas[name] = Delta(added: added, removed: removed)
    }
    for (field, target) in [("written", \ChangeLedger.written), ("deleted", \.deleted)] {
      for (name, entry) in value[field]?.dictionaryValue ?? [:] {
        guard let bytes = entry.dataValue, let keys = Self.keys(bytes),
          zip(keys, keys.dropFirst()).allSatisfy({ $0 < $1 }), keys.allSatisfy({ $0 >= 0 })
        else { throw bad("the \(field) keys of \(name) are damaged or not ascending") }
        self[keyPath: target][name] = keys
      }
    }
    replaced = (value["replaced"]?.arrayValue ?? []).compactMap(\.stringValue)
  }

  private static func keys(_ bytes: [UInt8]) -> [Int64]? {
    var reader = Varint.Reader(bytes)
    var keys: [Int64] = []
    while !reader.isAtEnd {
      guard let key = reader.nextDelta() else { return nil }
      keys.append(key)
    }
    return keys
  }

  private static func elements(_ value: PropertyListValue?) -> [Element]? {
    guard let keyBytes = value?["keys"]?.dataValue, let hashes = value?["hashes"]?.dataValue,
      let keys = keys(keyBytes), hashes.count == keys.count * 8
    else { return nil }
    return keys.enumerated().map { index, key in
      var hash: UInt64 = 0
      for shift in 0..<8 { hash |= UInt64(hashes[index * 8 + shift]) << (8 * shift) }
      return Element(key: key, hash: hash)
    }
  }
}
