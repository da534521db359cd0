/// A set of primary keys that costs memory in proportion to the keys it holds, whatever their
/// values: keys go in blocks of 65,536 consecutive values, each a sorted list of the low 16
/// bits while it is small and a bitmap (8 KiB) once it is not. A million keys of one store take
/// about 16 blocks; a million scattered ones, a million short lists.
package struct KeySet {
  /// One block's keys.
  final class Block {
    /// The low 16 bits of each key, sorted, while the block is a list.
    var list: [UInt16] = []
    /// The bitmap, once the block holds more than ``listLimit`` keys.
    var bits: [UInt64]?

    /// A list this long becomes a bitmap: beyond it, the bitmap is the smaller.
    static let listLimit = 4096

    func contains(_ low: UInt16) -> Bool {
      if let bits { return bits[Int(low >> 6)] & (1 << UInt64(low & 63)) != 0 }
      return position(of: low).found
    }

    /// Inserts `low`; false when it was there.
    func insert(_ low: UInt16) -> Bool {
      if bits != nil {
        let word = Int(low >> 6)
        let mask: UInt64 = 1 << UInt64(low & 63)
        if bits![word] & mask != 0 { return false }
        bits![word] |= mask
        return true
      }
      if let last = list.last, last < low {
        list.append(low)
      } else {
        let (index, found) = position(of: low)
        if found { return false }
        list.insert(low, at: index)
      }
      if list.count > Self.listLimit {
        var bitmap = [UInt64](repeating: 0, count: 1024)
        for value in list { bitmap[Int(value >> 6)] |= 1 << UInt64(value & 63) }
        bits = bitmap
        list = []
      }
      return true
    }

    /// Calls `body` with the keys' low bits in ascending order, until it returns false.
    func visit(_ body: (UInt16) -> Bool) {
      guard let bits else {
        for value in list where !body(value) { return }
        return
      }
      for (word, value) in bits.enumerated() where value != 0 {
        var remaining = value
        while remaining != 0 {
          let bit = remaining.trailingZeroBitCount
          if !body(UInt16(word * 64 + bit)) { return }
          remaining &= remaining - 1
        }
      }
    }

    private func position(of low: UInt16) -> (index: Int, found: Bool) {
      var lower = 0
      var upper = list.count
      while lower < upper {
        let middle = (lower + upper) / 2
        if list[middle] < low { lower = middle + 1 } else { upper = middle }
      }
      return (lower, lower < list.count && list[lower] == low)
    }
  }

  private var blocks: [Int64: Block] = [:]
  /// The block last used, for keys that arrive in order.
  private var last: (high: Int64, block: Block)?
  /// The number of keys.
  package private(set) var count = 0

  /// An empty set.
  package init() {}

  /// Inserts `key`; false when it was there already.
  @discardableResult
  package mutating func insert(_ key: Int64) -> Bool {
    let high = key >> 16
    let block: Block
    if let last, last.high == high {
      block = last.block
    } else if let found = blocks[high] {
      block = found
    } else {
      block = Block()
      blocks[high] = block
    }
    last = (high, block)
    guard block.insert(UInt16(truncatingIfNeeded: key)) else { return false }
    count += 1
    return true
  }

  /// Whether `key` is in the set.
  package func contains(_ key: Int64) -> Bool {
    blocks[key >> 16]?.contains(UInt16(truncatingIfNeeded: key)) ?? false
  }

  /// The keys of this set that `other` lacks: how many, and the smallest `limit` of them.
  package func subtracting(_ other: KeySet, limit: Int) -> (count: Int, first: [Int64]) {
    var missing = 0
    var first: [Int64] = []
    for high in blocks.keys.sorted() {
      let theirs = other.blocks[high]
      blocks[high]!.visit { low in
        if theirs?.contains(low) != true {
          missing += 1
          if first.count < limit { first.append(high << 16 | Int64(low)) }
        }
        return true
      }
    }
    return (missing, first)
  }
}
