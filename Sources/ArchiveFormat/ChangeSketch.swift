/// An invertible Bloom lookup table of a set of elements (a key and a 64-bit hash each): a
/// fixed number of cells that two sets' difference can be read back from when it is small,
/// however large the sets. A full backup keeps one per set of rows (``ChangeLedger``); the next
/// incremental builds one of the store as it is now, subtracts the parent's, and reads off
/// which keys were inserted, deleted or changed, without reading the parent's objects.
///
/// Each element goes into three cells, one in each third of the table, chosen by mixing its
/// key and hash with the seed; a cell holds how many elements it has, and the XOR of their
/// keys, of their hashes and of a 32-bit check of each. A cell of the difference holding one
/// element (a count of ±1 whose check matches) gives that element up, which is taken out of its
/// other cells in turn ("peeling"). The difference is read when every cell ends empty; with
/// more elements than about 0.8 of the cells, it is usually not, and ``difference(from:)``
/// says so (nil) rather than guessing.
package struct ChangeSketch: Equatable, Sendable {
  /// The seed that places elements and keys their checks.
  package let seed: UInt64
  private(set) var counts: [Int64]
  private(set) var keys: [UInt64]
  private(set) var hashes: [UInt64]
  private(set) var checks: [UInt32]

  /// The number of cells (a multiple of three).
  package var cellCount: Int { counts.count }

  /// An empty table of `cells` cells (rounded up to a multiple of three, at least 24).
  package init(cells: Int, seed: UInt64) {
    let count = max(24, (cells + 2) / 3 * 3)
    self.seed = seed
    counts = Array(repeating: 0, count: count)
    keys = Array(repeating: 0, count: count)
    hashes = Array(repeating: 0, count: count)
    checks = Array(repeating: 0, count: count)
  }

  /// The cells a full backup gives a set of `elements` elements: enough to read a difference
  /// of about a 160th of them (a night changing 0.3% of a store's objects, an update being
  /// two elements); for a small set, of about a fifth of it, up to a difference of about 300
  /// elements; and never fewer than 192 (a difference of about 150). Peeling fails now and
  /// then however large the table (two elements that share their three cells stop it, about
  /// once in 10,000 nights of 25 changes at 192 cells); a set whose difference is not read is
  /// written whole (``ChangeLedger/replaced``), so a failure costs bytes, never correctness.
  package static func cells(forElements elements: Int) -> Int {
    max(192, elements / 128, min(384, elements / 4))
  }

  /// Adds an element.
  package mutating func insert(key: Int64, hash: UInt64) { apply(key, hash, 1) }

  /// Adds the elements of `keys` and `hashes` (the same number of each), as ``insert(key:hash:)``
  /// does one by one, with the cells opened once for them all: what a reader of many rows
  /// calls.
  package mutating func insert(keys elementKeys: [Int64], hashes elementHashes: [UInt64]) {
    precondition(elementKeys.count == elementHashes.count, "a hash for each key")
    let (seed, third) = (self.seed, UInt64(counts.count / 3))
    withOpenCells { cells in
      for (key, hash) in zip(elementKeys, elementHashes) {
        Self.apply(key, hash, 1, seed: seed, third: third, to: cells)
      }
    }
  }

  /// Takes an element out (it may never have been added: the table then holds a negative
  /// element, as a difference does).
  package mutating func remove(key: Int64, hash: UInt64) { apply(key, hash, -1) }

  /// Adds every element `other` holds: a sketch of the same size and seed, built apart from
  /// this one (another part of the set, hashed on another connection). The cells add up as
  /// the elements' insertions would, in any order.
  package mutating func merge(_ other: ChangeSketch) {
    precondition(other.seed == seed && other.cellCount == cellCount, "sketches of one shape")
    for cell in 0..<cellCount {
      counts[cell] &+= other.counts[cell]
      keys[cell] ^= other.keys[cell]
      hashes[cell] ^= other.hashes[cell]
      checks[cell] ^= other.checks[cell]
    }
  }

  @inline(__always)
  private mutating func apply(_ key: Int64, _ hash: UInt64, _ sign: Int64) {
    let (seed, third) = (self.seed, UInt64(counts.count / 3))
    withOpenCells { Self.apply(key, hash, sign, seed: seed, third: third, to: $0) }
  }

  /// The cells' columns, opened for writing.
  private typealias OpenCells = (
    counts: UnsafeMutableBufferPointer<Int64>, keys: UnsafeMutableBufferPointer<UInt64>,
    hashes: UnsafeMutableBufferPointer<UInt64>, checks: UnsafeMutableBufferPointer<UInt32>
  )

  /// Calls `body` with the cells' columns opened for writing, each moved out of the sketch
  /// meanwhile so that none is copied.
  @inline(__always)
  private mutating func withOpenCells(_ body: (OpenCells) -> Void) {
    var (counts, keys, hashes, checks) = (self.counts, self.keys, self.hashes, self.checks)
    (self.counts, self.keys, self.hashes, self.checks) = ([], [], [], [])
    counts.withUnsafeMutableBufferPointer { counts in
      keys.withUnsafeMutableBufferPointer { keys in
        hashes.withUnsafeMutableBufferPointer { hashes in
          checks.withUnsafeMutableBufferPointer { checks in body((counts, keys, hashes, checks)) }
        }
      }
    }
    (self.counts, self.keys, self.hashes, self.checks) = (counts, keys, hashes, checks)
  }

  /// Adds (`sign` 1) or takes out (-1) an element of a table of `third` cells a third under
  /// `seed`, in its three cells.
  @inline(__always)
  private static func apply(
    _ key: Int64, _ hash: UInt64, _ sign: Int64, seed: UInt64, third: UInt64, to cells: OpenCells
  ) {
    let bits = UInt64(bitPattern: key)
    let check = check(bits, hash, seed)
    let (a, b, c) = places(bits, hash, seed: seed, third: third)
    // Three calls, not a loop over an array of three: no array made for each element.
    add(bits, hash, check, sign, to: a, of: cells)
    add(bits, hash, check, sign, to: b, of: cells)
    add(bits, hash, check, sign, to: c, of: cells)
  }

  @inline(__always)
  private static func add(
    _ key: UInt64, _ hash: UInt64, _ check: UInt32, _ sign: Int64, to cell: Int,
    of cells: OpenCells
  ) {
    cells.counts[cell] &+= sign
    cells.keys[cell] ^= key
    cells.hashes[cell] ^= hash
    cells.checks[cell] ^= check
  }

  /// The three cells of an element, one in each third.
  @inline(__always)
  private func places(_ key: UInt64, _ hash: UInt64) -> (Int, Int, Int) {
    Self.places(key, hash, seed: seed, third: UInt64(counts.count / 3))
  }

  /// The three cells of an element in a table of `third` cells a third, under `seed`.
  @inline(__always)
  private static func places(_ key: UInt64, _ hash: UInt64, seed: UInt64, third: UInt64)
    -> (Int, Int, Int)
  {
    let first = mix(mix(key ^ seed) ^ hash)
    let second = mix(first &+ 0x9E37_79B9_7F4A_7C15)
    let last = mix(second &+ 0x9E37_79B9_7F4A_7C15)
    return (
      Int(first % third), Int(third + second % third), Int(2 * third + last % third)
    )
  }

  /// SplitMix64's finalizer.
  @inline(__always)
  static func mix(_ value: UInt64) -> UInt64 {
    var z = value
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// An element's check.
  @inline(__always)
  static func check(_ key: UInt64, _ hash: UInt64, _ seed: UInt64) -> UInt32 {
    UInt32(truncatingIfNeeded: mix(mix(hash ^ ~seed) ^ key) >> 16)
  }

  /// The elements this table holds and `other` (of the same size and seed) does not
  /// (`added`), and those `other` holds and this does not (`removed`); nil when the difference
  /// is too large for the table to give back.
  package func difference(from other: ChangeSketch) -> (
    added: [(key: Int64, hash: UInt64)], removed: [(key: Int64, hash: UInt64)]
  )? {
    guard other.seed == seed, other.cellCount == cellCount else { return nil }
    var rest = self
    for cell in 0..<cellCount {
      rest.counts[cell] &-= other.counts[cell]
      rest.keys[cell] ^= other.keys[cell]
      rest.hashes[cell] ^= other.hashes[cell]
      rest.checks[cell] ^= other.checks[cell]
    }
    var added: [(key: Int64, hash: UInt64)] = []
    var removed: [(key: Int64, hash: UInt64)] = []
    var pending = Array(0..<cellCount)
    // Each peel empties at least one cell; a difference of more elements than cells is not
    // read.
    var budget = cellCount * 2
    while let cell = pending.popLast() {
      let count = rest.counts[cell]
      guard count == 1 || count == -1,
        Self.check(rest.keys[cell], rest.hashes[cell], seed) == rest.checks[cell]
      else { continue }
      budget -= 1
      guard budget >= 0 else { return nil }
      let key = rest.keys[cell]
      let hash = rest.hashes[cell]
      let element = (key: Int64(bitPattern: key), hash: hash)
      if count == 1 { added.append(element) } else { removed.append(element) }
      rest.apply(element.key, hash, -count)
      let (a, b, c) = rest.places(key, hash)
      pending.append(contentsOf: [a, b, c])
    }
    guard rest.counts.allSatisfy({ $0 == 0 }), rest.keys.allSatisfy({ $0 == 0 }),
      rest.hashes.allSatisfy({ $0 == 0 }), rest.checks.allSatisfy({ $0 == 0 })
    else { return nil }
    return (added, removed)
  }

  // MARK: Bytes

  /// The cells as an archive keeps them: each count as a zigzag varint, then each key XOR,
  /// each hash XOR (8 bytes, little-endian) and each check XOR (4 bytes, little-endian).
  package var serialized: [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(cellCount * 21)
    for count in counts {
      Varint.append(UInt64(bitPattern: (count << 1) ^ (count >> 63)), to: &bytes)
    }
    for key in keys { Self.append(key, bytes: 8, to: &bytes) }
    for hash in hashes { Self.append(hash, bytes: 8, to: &bytes) }
    for check in checks { Self.append(UInt64(check), bytes: 4, to: &bytes) }
    return bytes
  }

  private static func append(_ value: UInt64, bytes count: Int, to bytes: inout [UInt8]) {
    for shift in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * shift))) }
  }

  /// The table of `cells` cells that `bytes` hold; nil when they are not that many cells.
  package init?(serialized bytes: [UInt8], cells: Int, seed: UInt64) {
    guard cells >= 3, cells % 3 == 0, cells <= bytes.count else { return nil }
    var reader = Varint.Reader(bytes)
    var counts: [Int64] = []
    counts.reserveCapacity(cells)
    for _ in 0..<cells {
      guard let raw = reader.next() else { return nil }
      counts.append(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1))
    }
    var offset = reader.offset
    guard bytes.count - offset == cells * 20 else { return nil }
    func read(_ width: Int) -> UInt64 {
      var value: UInt64 = 0
      for shift in 0..<width { value |= UInt64(bytes[offset + shift]) << (8 * shift) }
      offset += width
      return value
    }
    self.seed = seed
    self.counts = counts
    keys = (0..<cells).map { _ in read(8) }
    hashes = (0..<cells).map { _ in read(8) }
    checks = (0..<cells).map { _ in UInt32(read(4)) }
  }
}
