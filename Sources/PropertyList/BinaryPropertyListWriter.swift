import Synchronization

/// Builds a binary property list (`bplist00`) object by object, without an intermediate
/// ``PropertyListValue`` tree, so a caller can encode a chunk of records straight from its own
/// data.
///
/// Every call adds one object to the object table and returns its ``Reference``; containers are
/// made from references pushed on a scratch stack, which is reused so that building a record
/// allocates nothing once the buffers have grown. Strings and integers are uniqued. The final
/// bytes use the smallest offset and reference sizes that fit. ``reset()`` keeps the buffers'
/// capacity for the next chunk.
///
/// ```swift
/// var writer = BinaryPropertyListWriter()
/// let start = writer.stackCount
/// writer.push(writer.string("class")); writer.push(writer.string("Book"))
/// writer.push(writer.string("pk"));    writer.push(writer.integer(42))
/// let record = writer.makeDictionary(fromStackIndex: start)
/// let bytes = writer.serialized(root: record)
/// ```
public struct BinaryPropertyListWriter: Sendable {
  /// An object in the table being built.
  public struct Reference: Hashable, Sendable {
    let index: UInt32
  }

  private enum SlotKind: UInt8 {
    case scalar, array, dictionary
    /// Data whose bytes stay in the caller's array (``data(sharing:)``) until serialization:
    /// `start` is its index in `shared`, `count` its size with its marker.
    case shared
  }

  // Scalars are encoded at once into `scalarBytes`; containers keep their references in
  // `references` until the reference size is known.
  private struct Slot {
    var kind: SlotKind
    var start: UInt32
    var count: UInt32
  }

  private var slots: [Slot] = []
  private var scalarBytes: [UInt8] = []
  private var shared: [[UInt8]] = []
  private var references: [UInt32] = []
  private var stack: [UInt32] = []
  private var strings: [String: UInt32] = [:]
  private var integers: [Int64: UInt32] = [:]
  private var reals: [UInt64: UInt32] = [:]
  private var dates: [UInt64: UInt32] = [:]
  private var falseReference: UInt32?
  private var trueReference: UInt32?
  private var nullReference: UInt32?

  /// Creates an empty writer.
  public init() {}

  /// The number of objects in the table so far.
  public var objectCount: Int { slots.count }

  /// Roughly how many bytes the serialized list would take now; lets a caller cut chunks by size.
  public var approximateSize: Int {
    scalarBytes.count + references.count * 2 + slots.count * 3 + 40
  }

  /// Names the object table: a number no other writer of the process has had, new after each
  /// ``reset()``. A reference is valid only in the table that made it, so a caller may cache
  /// references (even across several writers) while this stays the same.
  public private(set) var generation = Self.nextGeneration()

  /// Counts tables process-wide (an atomic add: a reset runs once per encoded bucket, where
  /// asking the system for a random number cost more than the encoding).
  private static let generations = Atomic<UInt64>(0)

  private static func nextGeneration() -> UInt64 {
    generations.wrappingAdd(1, ordering: .relaxed).newValue
  }

  /// Empties the table, keeping the buffers' capacity for the next list.
  public mutating func reset() {
    generation = Self.nextGeneration()
    slots.removeAll(keepingCapacity: true)
    scalarBytes.removeAll(keepingCapacity: true)
    shared.removeAll(keepingCapacity: true)
    references.removeAll(keepingCapacity: true)
    stack.removeAll(keepingCapacity: true)
    strings.removeAll(keepingCapacity: true)
    integers.removeAll(keepingCapacity: true)
    reals.removeAll(keepingCapacity: true)
    dates.removeAll(keepingCapacity: true)
    falseReference = nil
    trueReference = nil
    nullReference = nil
  }

  // MARK: Scalars

  private mutating func addScalar(_ encode: (inout [UInt8]) -> Void) -> UInt32 {
    let start = scalarBytes.count
    encode(&scalarBytes)
    let index = UInt32(slots.count)
    slots.append(
      Slot(kind: .scalar, start: UInt32(start), count: UInt32(scalarBytes.count - start)))
    return index
  }

  /// Adds a null.
  public mutating func null() -> Reference {
    if let existing = nullReference { return Reference(index: existing) }
    let index = addScalar { $0.append(0x00) }
    nullReference = index
    return Reference(index: index)
  }

  /// Adds a boolean.
  public mutating func bool(_ value: Bool) -> Reference {
    if let existing = value ? trueReference : falseReference { return Reference(index: existing) }
    let index = addScalar { $0.append(value ? 0x09 : 0x08) }
    if value { trueReference = index } else { falseReference = index }
    return Reference(index: index)
  }

  /// Adds an integer (uniqued).
  public mutating func integer(_ value: Int64) -> Reference {
    integer(value, uniquing: true)
  }

  /// Adds an integer; with `uniquing` off it is written again even if an equal one was (which
  /// spares hashing values that never repeat, such as primary keys).
  public mutating func integer(_ value: Int64, uniquing: Bool) -> Reference {
    guard uniquing else {
      return Reference(index: addScalar { Self.appendInteger(value, to: &$0) })
    }
    if let existing = integers[value] { return Reference(index: existing) }
    let index = addScalar { Self.appendInteger(value, to: &$0) }
    integers[value] = index
    return Reference(index: index)
  }

  /// Adds a real (uniqued by bit pattern).
  public mutating func real(_ value: Double) -> Reference {
    let bits = value.bitPattern
    if let existing = reals[bits] { return Reference(index: existing) }
    let index = addScalar { bytes in
      bytes.append(0x23)
      Self.appendBigEndian(bits, byteCount: 8, to: &bytes)
    }
    reals[bits] = index
    return Reference(index: index)
  }

  /// Adds a date (uniqued).
  public mutating func date(_ value: PropertyListDate) -> Reference {
    date(value, uniquing: true)
  }

  /// Adds a date; with `uniquing` off it is written again even if an equal one was.
  public mutating func date(_ value: PropertyListDate, uniquing: Bool) -> Reference {
    let bits = value.secondsSinceReferenceDate.bitPattern
    guard uniquing else {
      return Reference(
        index: addScalar { bytes in
          bytes.append(0x33)
          Self.appendBigEndian(bits, byteCount: 8, to: &bytes)
        })
    }
    if let existing = dates[bits] { return Reference(index: existing) }
    let index = addScalar { bytes in
      bytes.append(0x33)
      Self.appendBigEndian(bits, byteCount: 8, to: &bytes)
    }
    dates[bits] = index
    return Reference(index: index)
  }

  /// Adds data.
  public mutating func data(_ value: some Collection<UInt8>) -> Reference {
    Reference(
      index: addScalar { bytes in
        Self.appendMarker(0x40, count: value.count, to: &bytes)
        bytes.append(contentsOf: value)
      })
  }

  /// Adds data whose bytes are copied only into the serialized list: `value`'s storage is
  /// shared until ``reset()``, not copied here. For large buffers the caller keeps and reuses
  /// (a reset first lets the caller's next change happen in place).
  public mutating func data(sharing value: [UInt8]) -> Reference {
    let index = UInt32(slots.count)
    slots.append(
      Slot(
        kind: .shared, start: UInt32(shared.count),
        count: UInt32(Self.markerSize(count: value.count) + value.count)))
    shared.append(value)
    return Reference(index: index)
  }

  /// Adds data from a raw buffer.
  public mutating func data(_ value: UnsafeRawBufferPointer) -> Reference {
    Reference(
      index: addScalar { bytes in
        Self.appendMarker(0x40, count: value.count, to: &bytes)
        bytes.append(contentsOf: value)
      })
  }

  /// Adds a string (uniqued): ASCII strings as bytes, others as UTF-16.
  public mutating func string(_ value: String) -> Reference {
    string(value, uniquing: true)
  }

  /// Adds a string; with `uniquing` off it is written again even if an equal one was (which
  /// spares hashing long strings that seldom repeat).
  public mutating func string(_ value: String, uniquing: Bool) -> Reference {
    guard uniquing else {
      return Reference(index: addScalar { Self.appendString(value, to: &$0) })
    }
    if let existing = strings[value] { return Reference(index: existing) }
    let index = addScalar { Self.appendString(value, to: &$0) }
    strings[value] = index
    return Reference(index: index)
  }

  /// Adds a keyed archiver UID.
  public mutating func uid(_ value: UInt64) -> Reference {
    Reference(
      index: addScalar { bytes in
        let size = Self.byteCount(forUnsigned: value)
        bytes.append(0x80 | UInt8(size - 1))
        Self.appendBigEndian(value, byteCount: size, to: &bytes)
      })
  }

  // MARK: Containers

  /// The scratch stack's depth; note it before pushing a container's members.
  public var stackCount: Int { stack.count }

  /// Pushes a reference onto the scratch stack.
  public mutating func push(_ reference: Reference) {
    stack.append(reference.index)
  }

  /// Makes an array of the references pushed since `start`, and pops them.
  public mutating func makeArray(fromStackIndex start: Int) -> Reference {
    precondition(start <= stack.count, "stack index beyond the stack")
    let referenceStart = references.count
    references.append(contentsOf: stack[start...])
    let count = stack.count - start
    stack.removeSubrange(start...)
    let index = UInt32(slots.count)
    slots.append(Slot(kind: .array, start: UInt32(referenceStart), count: UInt32(count)))
    return Reference(index: index)
  }

  /// Makes a dictionary of the key and value references pushed since `start` (key, value, key,
  /// value, …), and pops them. Keys must be string references.
  public mutating func makeDictionary(fromStackIndex start: Int) -> Reference {
    precondition(start <= stack.count, "stack index beyond the stack")
    let pairs = (stack.count - start) / 2
    precondition(pairs * 2 == stack.count - start, "a dictionary needs a value for every key")
    let referenceStart = references.count
    var i = start
    while i < stack.count {
      references.append(stack[i])
      i += 2
    }
    i = start + 1
    while i < stack.count {
      references.append(stack[i])
      i += 2
    }
    stack.removeSubrange(start...)
    let index = UInt32(slots.count)
    slots.append(Slot(kind: .dictionary, start: UInt32(referenceStart), count: UInt32(pairs)))
    return Reference(index: index)
  }

  /// Makes an array of `elements`.
  public mutating func array(_ elements: [Reference]) -> Reference {
    let start = stackCount
    for element in elements { push(element) }
    return makeArray(fromStackIndex: start)
  }

  /// Adds a whole ``PropertyListValue`` (dictionaries with their keys sorted).
  public mutating func value(_ value: PropertyListValue) -> Reference {
    switch value {
    case .null: return null()
    case .bool(let v): return bool(v)
    case .integer(let v): return integer(v)
    case .real(let v): return real(v)
    case .date(let v): return date(v)
    case .data(let v): return data(v)
    case .string(let v): return string(v)
    case .uid(let v): return uid(v)
    case .array(let elements):
      let start = stackCount
      for element in elements { push(self.value(element)) }
      return makeArray(fromStackIndex: start)
    case .dictionary(let entries):
      let start = stackCount
      // The keys sorted in scratch memory (on the stack for small dictionaries), not an array.
      withUnsafeTemporaryAllocation(of: String.self, capacity: entries.count) { scratch in
        var keys = scratch
        _ = keys.initialize(fromContentsOf: entries.keys)
        keys.sort()
        for key in keys {
          push(string(key))
          push(self.value(entries[key]!))
        }
        keys.deinitialize()
      }
      return makeDictionary(fromStackIndex: start)
    }
  }

  // MARK: Serialization

  /// The finished property list, with `root` as its top object.
  public func serialized(root: Reference) -> [UInt8] {
    var output: [UInt8] = []
    write(root: root, to: &output)
    return output
  }

  /// Appends the finished property list, with `root` as its top object, to `output`.
  public func write(root: Reference, to output: inout [UInt8]) {
    precondition(Int(root.index) < slots.count, "root is not an object of this writer")
    let objectCount = slots.count
    let referenceSize = Self.minimalByteCount(UInt64(max(objectCount - 1, 0)))
    // Sizes first, so the output is allocated once and the offset size is known.
    var totalObjectBytes = 0
    var lastOffset = 8
    for slot in slots {
      lastOffset = 8 + totalObjectBytes
      totalObjectBytes += size(of: slot, referenceSize: referenceSize)
    }
    let offsetSize = Self.minimalByteCount(UInt64(lastOffset))
    let tableOffset = 8 + totalObjectBytes
    let base = output.count
    output.reserveCapacity(base + tableOffset + objectCount * offsetSize + 32)
    output.append(contentsOf: [0x62, 0x70, 0x6C, 0x69, 0x73, 0x74, 0x30, 0x30])  // "bplist00"
    scalarBytes.withUnsafeBufferPointer { scalars in
      for slot in slots {
        switch slot.kind {
        case .scalar:
          output.append(
            contentsOf: UnsafeBufferPointer(
              rebasing: scalars[Int(slot.start)..<Int(slot.start + slot.count)]))
        case .shared:
          let payload = shared[Int(slot.start)]
          Self.appendMarker(0x40, count: payload.count, to: &output)
          output.append(contentsOf: payload)
        case .array, .dictionary:
          let count = Int(slot.count)
          Self.appendMarker(slot.kind == .array ? 0xA0 : 0xD0, count: count, to: &output)
          let total = slot.kind == .array ? count : 2 * count
          for i in Int(slot.start)..<(Int(slot.start) + total) {
            Self.appendBigEndian(UInt64(references[i]), byteCount: referenceSize, to: &output)
          }
        }
      }
    }
    // The offset table, from the sizes again (no array of offsets to allocate).
    var offset = 8
    for slot in slots {
      Self.appendBigEndian(UInt64(offset), byteCount: offsetSize, to: &output)
      offset += size(of: slot, referenceSize: referenceSize)
    }
    output.append(contentsOf: [0, 0, 0, 0, 0])  // unused
    output.append(0)  // sort version
    output.append(UInt8(offsetSize))
    output.append(UInt8(referenceSize))
    Self.appendBigEndian(UInt64(objectCount), byteCount: 8, to: &output)
    Self.appendBigEndian(UInt64(root.index), byteCount: 8, to: &output)
    Self.appendBigEndian(UInt64(tableOffset), byteCount: 8, to: &output)
  }

  /// Where the payloads of the scalars `references` (a data's bytes, a string's characters:
  /// what follows the marker and count) are in the list ``serialized(root:)`` writes now, in
  /// the order given. So that a caller can store some payloads apart (a chunk's large columns,
  /// each in a frame of its own) and a reader can tell it read every byte it uses.
  public func payloadRanges(of references: [Reference]) -> [Range<Int>] {
    let referenceSize = Self.minimalByteCount(UInt64(max(slots.count - 1, 0)))
    var wanted: [UInt32: [Int]] = [:]
    for (position, reference) in references.enumerated() {
      precondition(
        Int(reference.index) < slots.count
          && [.scalar, .shared].contains(slots[Int(reference.index)].kind),
        "not a scalar of this writer")
      wanted[reference.index, default: []].append(position)
    }
    var ranges = [Range<Int>](repeating: 0..<0, count: references.count)
    var offset = 8
    for (index, slot) in slots.enumerated() {
      if let positions = wanted[UInt32(index)] {
        let header: Int
        if slot.kind == .shared {
          header = Self.markerSize(count: shared[Int(slot.start)].count)
        } else {
          let marker = scalarBytes[Int(slot.start)]
          header =
            marker & 0x0F != 0x0F || marker >> 4 < 0x4
            ? 1 : 2 + (1 << Int(scalarBytes[Int(slot.start) + 1] & 0x0F))
        }
        for position in positions {
          ranges[position] = (offset + min(header, Int(slot.count)))..<(offset + Int(slot.count))
        }
      }
      offset += size(of: slot, referenceSize: referenceSize)
    }
    return ranges
  }

  /// The bytes `slot` takes in the object area.
  @inline(__always)
  private func size(of slot: Slot, referenceSize: Int) -> Int {
    switch slot.kind {
    case .scalar, .shared: Int(slot.count)
    case .array: Self.markerSize(count: Int(slot.count)) + Int(slot.count) * referenceSize
    case .dictionary:
      Self.markerSize(count: Int(slot.count)) + 2 * Int(slot.count) * referenceSize
    }
  }

  // MARK: Encoding helpers

  /// The fewest bytes that hold `value` (1 to 8), as Apple's writer sizes offsets and
  /// references.
  static func minimalByteCount(_ value: UInt64) -> Int {
    max(1, (64 - value.leadingZeroBitCount + 7) / 8)
  }

  /// The power-of-two width (1, 2, 4 or 8 bytes) an integer object needs for `value`.
  static func byteCount(forUnsigned value: UInt64, minimum: Int = 1) -> Int {
    let size: Int
    if value <= 0xFF {
      size = 1
    } else if value <= 0xFFFF {
      size = 2
    } else if value <= 0xFFFF_FFFF {
      size = 4
    } else {
      size = 8
    }
    return max(size, minimum)
  }

  @inline(__always)
  static func appendBigEndian(_ value: UInt64, byteCount: Int, to bytes: inout [UInt8]) {
    var shift = (byteCount - 1) * 8
    while shift >= 0 {
      bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
      shift -= 8
    }
  }

  static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
    // Non-negative values take 1, 2 or 4 bytes (unsigned); the rest 8 bytes, signed.
    if value >= 0 && value <= 0xFFFF_FFFF {
      let size = byteCount(forUnsigned: UInt64(value))
      bytes.append(0x10 | UInt8(size.trailingZeroBitCount))
      appendBigEndian(UInt64(value), byteCount: size, to: &bytes)
    } else {
      bytes.append(0x13)
      appendBigEndian(UInt64(bitPattern: value), byteCount: 8, to: &bytes)
    }
  }

  static func markerSize(count: Int) -> Int {
    count < 15 ? 1 : 2 + byteCount(forUnsigned: UInt64(count))
  }

  static func appendMarker(_ high: UInt8, count: Int, to bytes: inout [UInt8]) {
    if count < 15 {
      bytes.append(high | UInt8(count))
    } else {
      bytes.append(high | 0x0F)
      appendInteger(Int64(count), to: &bytes)
    }
  }

  static func appendString(_ value: String, to bytes: inout [UInt8]) {
    var value = value
    let isASCII = value.withUTF8 { utf8 in
      var combined: UInt8 = 0
      for byte in utf8 { combined |= byte }
      return combined < 0x80
    }
    if isASCII {
      value.withUTF8 { utf8 in
        appendMarker(0x50, count: utf8.count, to: &bytes)
        bytes.append(contentsOf: utf8)
      }
    } else {
      let units = value.utf16
      appendMarker(0x60, count: units.count, to: &bytes)
      for unit in units {
        bytes.append(UInt8(truncatingIfNeeded: unit >> 8))
        bytes.append(UInt8(truncatingIfNeeded: unit))
      }
    }
  }
}

extension PropertyListValue {
  /// The value as a binary property list (`bplist00`).
  public func binaryPropertyList() -> [UInt8] {
    var writer = BinaryPropertyListWriter()
    let root = writer.value(self)
    return writer.serialized(root: root)
  }
}
