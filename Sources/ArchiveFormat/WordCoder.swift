import Foundation

/// Codes text columns as numbered words (``WordCoding``), keeping its tables from column to
/// column.
package struct WordCoder {
  /// A distinct word met: its first eight bytes (little-endian, zeros past its end), hash,
  /// first place in the values and size.
  private struct Word {
    let prefix: UInt64
    let hash: UInt64
    let start: Int
    let size: Int
  }

  /// The distinct words met, in the order met.
  private var list: [Word] = []
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
    let coded = values.withUnsafeBytes { scan($0, lengths: lengths, count: count) }
    guard coded else {
      reset()
      return false
    }
    // Most used first, so that the commonest take one byte; ties by first use, so that the
    // same values give the same bytes.
    var uses = [Int](repeating: 0, count: list.count)
    uses.withUnsafeMutableBufferPointer { uses in
      for number in met { uses[Int(number)] += 1 }
    }
    let order = list.indices.sorted { uses[$0] != uses[$1] ? uses[$0] > uses[$1] : $0 < $1 }
    ranks = Array(repeating: 0, count: order.count)
    for (rank, number) in order.enumerated() {
      ranks[number] = UInt32(rank)
      let word = list[number]
      Varint.append(UInt64(word.size), to: &words)
      words.append(contentsOf: values[word.start..<word.start + word.size])
    }
    tokens.reserveCapacity(met.count)
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

  /// Numbers every word of the values, and says whether the column may still gain enough.
  private mutating func scan(_ values: UnsafeRawBufferPointer, lengths: [UInt8], count: Int)
    -> Bool
  {
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
        while true {
          let stop = Self.space(in: values, from: start, before: end)
          let (number, isNew) = number(of: start, size: stop - start, in: values)
          if isNew { listBytes += Varint.size(UInt64(stop - start)) + stop - start }
          met.append(number)
          if stop == end { break }
          start = stop + 1
        }
      }
      offset = end
      // Each number takes a byte at least: past this, the column cannot gain enough.
      if WordCoding.gain * (listBytes + met.count) > offset + (16 << 10) { return false }
    }
    return offset == values.count && WordCoding.gain * (listBytes + met.count) <= values.count
  }

  /// The place of the first space in `values` from `start`, or `end` when there is none
  /// before it: eight bytes at a time where there are eight.
  @inline(__always)
  private static func space(in values: UnsafeRawBufferPointer, from start: Int, before end: Int)
    -> Int
  {
    var place = start
    while place < end && place + 8 <= values.count {
      let bytes = UInt64(littleEndian: values.loadUnaligned(fromByteOffset: place, as: UInt64.self))
      let spaces = bytes ^ 0x2020_2020_2020_2020
      // The lowest byte flagged here is the first space (bytes above a zero may be flagged
      // too, but never one below).
      let found = (spaces &- 0x0101_0101_0101_0101) & ~spaces & 0x8080_8080_8080_8080
      if found != 0 { return min(place + found.trailingZeroBitCount >> 3, end) }
      place += 8
    }
    while place < end {
      if values[place] == 0x20 { return place }
      place += 1
    }
    return end
  }

  /// Up to eight bytes of `values` from `start`, little-endian, zeros past `size`.
  @inline(__always)
  private static func bytes(of values: UnsafeRawBufferPointer, at start: Int, size: Int)
    -> UInt64
  {
    if size >= 8 {
      return UInt64(littleEndian: values.loadUnaligned(fromByteOffset: start, as: UInt64.self))
    }
    if start + 8 <= values.count {
      let bytes = UInt64(littleEndian: values.loadUnaligned(fromByteOffset: start, as: UInt64.self))
      return bytes & ((1 << UInt64(size * 8)) &- 1)
    }
    var bytes: UInt64 = 0
    for index in 0..<size { bytes |= UInt64(values[start + index]) << UInt64(index * 8) }
    return bytes
  }

  /// The number of the word of `size` bytes at `start` of `values`, and whether it is new.
  @inline(__always)
  private mutating func number(of start: Int, size: Int, in values: UnsafeRawBufferPointer)
    -> (UInt32, Bool)
  {
    let prefix = Self.bytes(of: values, at: start, size: size)
    var hash = (prefix ^ UInt64(size) &* 0x9E37_79B9_7F4A_7C15) &* 0xBF58_476D_1CE4_E5B9
    hash ^= hash >> 31
    var offset = 8
    while offset < size {
      let part = Self.bytes(of: values, at: start + offset, size: min(8, size - offset))
      hash = (hash ^ part) &* 0x94D0_49BB_1331_11EB
      hash ^= hash >> 29
      offset += 8
    }
    if list.count * 2 >= slots.count { grow() }
    let mask = slots.count - 1
    var slot = Int(truncatingIfNeeded: hash) & mask
    while slots[slot] != 0 {
      let number = Int(slots[slot] - 1)
      let word = list[number]
      if word.hash == hash && word.prefix == prefix && word.size == size
        && (size <= 8
          || memcmp(values.baseAddress! + word.start + 8, values.baseAddress! + start + 8, size - 8)
            == 0)
      {
        return (UInt32(number), false)
      }
      slot = (slot + 1) & mask
    }
    slots[slot] = Int32(list.count + 1)
    list.append(Word(prefix: prefix, hash: hash, start: start, size: size))
    return (UInt32(list.count - 1), true)
  }

  private mutating func grow() {
    slots = Array(repeating: 0, count: max(1024, slots.count * 2))
    let mask = slots.count - 1
    for (number, word) in list.enumerated() {
      var slot = Int(truncatingIfNeeded: word.hash) & mask
      while slots[slot] != 0 { slot = (slot + 1) & mask }
      slots[slot] = Int32(number + 1)
    }
  }

  private mutating func reset() {
    list.removeAll(keepingCapacity: true)
    met.removeAll(keepingCapacity: true)
    words.removeAll(keepingCapacity: true)
    tokens.removeAll(keepingCapacity: true)
    for index in slots.indices { slots[index] = 0 }
  }
}
