import Foundation

/// Codes text columns as numbered words (``WordCoding``), keeping its tables from column to
/// column.
package struct WordCoder {
  /// The distinct words met, by their first place in the values.
  private var starts: [Int] = []
  private var sizes: [Int] = []
  private var hashes: [UInt64] = []
  private var uses: [Int] = []
  /// Open addressing: a word's number plus one, 0 for an empty slot.
  private var slots: [Int32] = []
  /// Each word of the values met, by its number in the order met.
  private var met: [UInt32] = []
  private var ranks: [UInt32] = []
  /// The last column coded: its words and their numbers.
  package private(set) var words: [UInt8] = []
  package private(set) var tokens: [UInt8] = []

  package init() {}

  /// Codes `count` values, UTF-8 back to back in `values` with their byte lengths as varints
  /// in `lengths`, into ``words`` and ``tokens``: false, and nothing kept, when that would not
  /// take a third of the values' bytes or less (``WordCoding/gain``), or would take less than
  /// a sixteenth (``WordCoding/expansion``: a reader would refuse it).
  package mutating func code(values: [UInt8], lengths: [UInt8], count: Int) -> Bool {
    reset()
    let coded = values.withUnsafeBufferPointer { values -> Bool in
      var sizes = Varint.Reader(lengths)
      var offset = 0
      var listBytes = 0
      for _ in 0..<count {
        guard let length = sizes.next(), length <= UInt64(values.count - offset) else {
          return false
        }
        let end = offset + Int(length)
        if end > offset {
          var start = offset
          var index = offset
          while true {
            if index == end || values[index] == 0x20 {
              let (number, isNew) = number(of: start..<index, in: values)
              if isNew { listBytes += Varint.size(UInt64(index - start)) + index - start }
              met.append(number)
              if index == end { break }
              start = index + 1
            }
            index += 1
          }
        }
        offset = end
        // Each number takes a byte at least: past this, the column cannot gain enough.
        if WordCoding.gain * (listBytes + met.count) > offset + (16 << 10) { return false }
      }
      guard offset == values.count else { return false }
      return WordCoding.gain * (listBytes + met.count) <= values.count
    }
    guard coded else {
      reset()
      return false
    }
    // Most used first, so that the commonest take one byte; ties by first use, so that the
    // same values give the same bytes.
    let order = starts.indices.sorted { uses[$0] != uses[$1] ? uses[$0] > uses[$1] : $0 < $1 }
    ranks = Array(repeating: 0, count: order.count)
    for (rank, number) in order.enumerated() {
      ranks[number] = UInt32(rank)
      Varint.append(UInt64(sizes[number]), to: &words)
      words.append(contentsOf: values[starts[number]..<starts[number] + sizes[number]])
    }
    for number in met { Varint.append(UInt64(ranks[Int(number)]), to: &tokens) }
    let codedBytes = words.count + tokens.count
    guard WordCoding.gain * codedBytes <= values.count,
      values.count <= WordCoding.expansion * codedBytes
    else {
      reset()
      return false
    }
    return true
  }

  /// The number of the word at `range` of `values`, and whether it is new.
  @inline(__always)
  private mutating func number(of range: Range<Int>, in values: UnsafeBufferPointer<UInt8>)
    -> (UInt32, Bool)
  {
    let hash = Self.hash(UnsafeBufferPointer(rebasing: values[range]))
    if starts.count * 2 >= slots.count { grow() }
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: hash) & mask
    while slots[slot] != 0 {
      let number = Int(slots[slot] - 1)
      if hashes[number] == hash && sizes[number] == range.count
        && memcmp(
          values.baseAddress! + starts[number], values.baseAddress! + range.lowerBound,
          range.count) == 0
      {
        uses[number] += 1
        return (UInt32(number), false)
      }
      slot = (slot + 1) & mask
    }
    slots[slot] = Int32(starts.count + 1)
    starts.append(range.lowerBound)
    sizes.append(range.count)
    hashes.append(hash)
    uses.append(1)
    return (UInt32(starts.count - 1), true)
  }

  private mutating func grow() {
    slots = Array(repeating: 0, count: max(1024, slots.count * 2))
    let mask = slots.count - 1
    for number in hashes.indices {
      var slot = Int(truncatingIfNeeded: hashes[number]) & mask
      while slots[slot] != 0 { slot = (slot + 1) & mask }
      slots[slot] = Int32(number + 1)
    }
  }

  /// A word's hash, eight bytes at a time.
  @inline(__always)
  private static func hash(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
    var hash = UInt64(bytes.count) &* 0x9E37_79B9_7F4A_7C15
    let raw = UnsafeRawBufferPointer(bytes)
    var offset = 0
    while offset + 8 <= raw.count {
      hash =
        (hash ^ raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        &* 0xBF58_476D_1CE4_E5B9
      hash ^= hash >> 31
      offset += 8
    }
    if offset < raw.count {
      var tail: UInt64 = 0
      for index in offset..<raw.count { tail = tail << 8 | UInt64(raw[index]) }
      hash = (hash ^ tail) &* 0x94D0_49BB_1331_11EB
      hash ^= hash >> 29
    }
    return hash
  }

  private mutating func reset() {
    starts.removeAll(keepingCapacity: true)
    sizes.removeAll(keepingCapacity: true)
    hashes.removeAll(keepingCapacity: true)
    uses.removeAll(keepingCapacity: true)
    met.removeAll(keepingCapacity: true)
    words.removeAll(keepingCapacity: true)
    tokens.removeAll(keepingCapacity: true)
    for index in slots.indices { slots[index] = 0 }
  }
}
