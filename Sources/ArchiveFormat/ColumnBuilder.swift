import ObjectModel
import ObjectStore
import PropertyList

/// One column of a format-2 chunk while it is built: the values one key has in the chunk's
/// records, in record order, for the records that have one (`graphvault(1)`, ARCHIVE FORMAT).
///
/// Values of a kind go together in one buffer, which is what lets zstd shrink them as it
/// shrinks a SQL dump: integers as zigzag varints of their difference from the previous one,
/// reals and dates as 8-byte big-endian IEEE doubles, booleans as one byte, strings (UTF-8) and
/// data back to back with their byte lengths as varints in `lengths`, lists of integers as
/// their lengths in `lengths` and their elements as integers. Buffers keep their capacity from
/// chunk to chunk.
struct ColumnBuilder {
  /// What a column holds; its raw value is the column's `type` in the archive.
  enum Kind: String, CaseIterable {
    case integer, real, bool, date, string, data
    /// Lists of integers (many-to-many keys and order keys).
    case integers

    /// The kind of column an attribute value goes in.
    init(_ value: AttributeValue) {
      switch value {
      case .integer: self = .integer
      case .double: self = .real
      case .bool: self = .bool
      case .date: self = .date
      case .decimal, .string, .uri: self = .string
      case .data, .uuid, .transformed: self = .data
      case .composite:
        // Records hold a composite's elements under their key paths, a column each.
        preconditionFailure("a composite value has no column of its own; its elements have")
      }
    }
  }

  /// The record key.
  let key: String
  let kind: Kind
  /// Bit `i % 8` of byte `i / 8` is set when record `i` has a value.
  private(set) var present: [UInt8] = []
  private(set) var presentCount = 0
  private(set) var values: [UInt8] = []
  private(set) var lengths: [UInt8] = []
  private var previous: Int64 = 0
  /// The smallest and largest integer appended (of an `.integer` or `.integers` column).
  private(set) var lowest = Int64.max
  private(set) var highest = Int64.min

  init(key: String, kind: Kind) {
    self.key = key
    self.kind = kind
  }

  /// Roughly how many bytes the column holds.
  var byteCount: Int { present.count + values.count + lengths.count }

  @inline(__always)
  private mutating func mark(_ record: Int) {
    let byte = record >> 3
    while present.count <= byte { present.append(0) }
    present[byte] |= 1 << UInt8(record & 7)
    presentCount += 1
  }

  @inline(__always)
  private mutating func appendDouble(_ value: Double) {
    let bits = value.bitPattern
    for shift in stride(from: 56, through: 0, by: -8) {
      values.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
    }
  }

  /// Record `record`'s value, of this column's kind (``Kind/init(_:)``).
  @inline(__always)
  mutating func append(_ value: AttributeValue, record: Int) {
    mark(record)
    switch value {
    case .integer(let v):
      widen(v)
      Varint.appendDelta(v, previous: &previous, to: &values)
    case .double(let v), .date(let v): appendDouble(v)
    case .bool(let v): values.append(v ? 1 : 0)
    case .decimal(let v), .string(let v), .uri(let v):
      let before = values.count
      values.append(contentsOf: v.utf8)
      Varint.append(UInt64(values.count - before), to: &lengths)
    case .data(let v), .uuid(let v), .transformed(let v):
      values.append(contentsOf: v)
      Varint.append(UInt64(v.count), to: &lengths)
    case .composite:
      preconditionFailure("a composite value has no column of its own; its elements have")
    }
  }

  /// Record `record`'s integer (an `.integer` column).
  @inline(__always)
  mutating func append(integer value: Int64, record: Int) {
    mark(record)
    widen(value)
    Varint.appendDelta(value, previous: &previous, to: &values)
  }

  /// Record `record`'s string (a `.string` column).
  @inline(__always)
  mutating func append(string value: String, record: Int) {
    mark(record)
    let before = values.count
    values.append(contentsOf: value.utf8)
    Varint.append(UInt64(values.count - before), to: &lengths)
  }

  /// Record `record`'s text or blob, as its bytes (a `.string` or `.data` column).
  @inline(__always)
  mutating func append(bytes: UnsafeBufferPointer<UInt8>, record: Int) {
    mark(record)
    values.append(contentsOf: bytes)
    Varint.append(UInt64(bytes.count), to: &lengths)
  }

  /// Record `record`'s list (an `.integers` column).
  mutating func append(list: some Collection<Int64>, record: Int) {
    mark(record)
    Varint.append(UInt64(list.count), to: &lengths)
    for value in list {
      widen(value)
      Varint.appendDelta(value, previous: &previous, to: &values)
    }
  }

  @inline(__always)
  private mutating func widen(_ value: Int64) {
    lowest = min(lowest, value)
    highest = max(highest, value)
  }

  /// The smallest and largest integer appended; nil when none was.
  var integerRange: ClosedRange<Int64>? { lowest <= highest ? lowest...highest : nil }

  /// The bounds of the values appended (``ValueBounds``), read as `kind`; nil when the column
  /// is not of that kind's values, or they have none.
  func bounds(as kind: ValueBounds.Kind) -> ValueBounds? {
    switch (kind, self.kind) {
    case (.integers, .integer):
      return integerRange.map(ValueBounds.integers)
    case (.reals, .real), (.reals, .date):
      var reals = ValueBounds.Reals()
      values.withUnsafeBytes { buffer in
        for start in stride(from: 0, to: buffer.count - 7, by: 8) {
          let bits = buffer.loadUnaligned(fromByteOffset: start, as: UInt64.self)
          reals.take(Double(bitPattern: UInt64(bigEndian: bits)))
        }
      }
      return reals.bounds
    case (.texts, .string):
      var lengths = Varint.Reader(self.lengths)
      var start = 0
      return values.withUnsafeBytes { buffer in
        ValueBounds.texts {
          guard let length = lengths.next() else { return nil }
          defer { start += Int(length) }
          return UnsafeRawBufferPointer(rebasing: buffer[start..<start + Int(length)])
        }
      }
    default:
      return nil
    }
  }

  /// Empties the column, keeping its buffers' capacity.
  mutating func reset() {
    present.removeAll(keepingCapacity: true)
    values.removeAll(keepingCapacity: true)
    lengths.removeAll(keepingCapacity: true)
    presentCount = 0
    previous = 0
    lowest = .max
    highest = .min
  }

  /// The column as the archive holds it, for a chunk of `count` records: `key`, `type`,
  /// `present` (only when some record has no value), `lengths` (strings, data and lists),
  /// `words` (a text column of at least ``ColumnLayout/framedValuesBytes`` that `coder` codes
  /// as numbered words, ``WordCoding``) and `values`, with the size of `values`. The writer
  /// shares the buffers (``BinaryPropertyListWriter/data(sharing:)``): reset it before this
  /// column changes, or the change copies them.
  func write(into writer: inout BinaryPropertyListWriter, count: Int, coder: inout WordCoder?)
    -> (
      column: BinaryPropertyListWriter.Reference, values: BinaryPropertyListWriter.Reference,
      size: Int
    )
  {
    let start = writer.stackCount
    writer.push(writer.string(ColumnLayout.key))
    writer.push(writer.string(key))
    writer.push(writer.string(ColumnLayout.type))
    writer.push(writer.string(kind.rawValue))
    if presentCount < count {
      writer.push(writer.string(ColumnLayout.present))
      var bitmap = present
      bitmap.append(contentsOf: repeatElement(0, count: (count + 7) / 8 - bitmap.count))
      writer.push(writer.data(bitmap))
    }
    switch kind {
    case .string, .data, .integers:
      writer.push(writer.string(ColumnLayout.lengths))
      writer.push(writer.data(sharing: lengths))
    default: break
    }
    let data: BinaryPropertyListWriter.Reference
    let size: Int
    if kind == .string, values.count >= ColumnLayout.framedValuesBytes,
      coder?.code(values: values, lengths: lengths, count: presentCount) == true, let coder
    {
      writer.push(writer.string(ColumnLayout.words))
      writer.push(writer.data(coder.words))
      data = writer.data(coder.tokens)
      size = coder.tokens.count
    } else {
      data = writer.data(sharing: values)
      size = values.count
    }
    writer.push(writer.string(ColumnLayout.values))
    writer.push(data)
    return (writer.makeDictionary(fromStackIndex: start), data, size)
  }
}
