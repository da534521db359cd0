/// One row of a rowid table encoded in SQLite's record format
/// (<https://sqlite.org/fileformat2.html#record_format>), as an `INSERT` would store it: each
/// value converted by its column's affinity, the `INTEGER PRIMARY KEY` column kept as the
/// rowid and NULL in the record, trailing NULLs left out.
///
/// Values are set column by column (``setInteger(_:at:)`` and its siblings), then
/// ``encode()`` writes the record into ``bytes``. A value SQLite would convert to or from text
/// (a number in a text column, a text in a numeric one) is not converted here: the setter
/// returns `false` and the row must go through SQLite instead. Texts and blobs are held by
/// pointer until ``encode()``; they must stay valid until then.
package struct RowRecord {
  private enum Slot {
    case null
    case integer(Int64)
    case real(Double)
    case text(UnsafeRawBufferPointer)
    case blob(UnsafeRawBufferPointer)
  }

  /// Each column's affinity, in table order.
  package let affinities: [ColumnAffinity]
  /// The column that is the rowid (`INTEGER PRIMARY KEY`).
  package let rowidColumn: Int
  private var slots: [Slot]
  /// The row's rowid, once set.
  package private(set) var rowid: Int64 = 0
  /// The encoded record, after ``encode()``.
  package private(set) var bytes: [UInt8] = []

  /// A record of a table whose columns have `affinities` and whose column `rowidColumn` is its
  /// `INTEGER PRIMARY KEY`.
  package init(affinities: [ColumnAffinity], rowidColumn: Int) {
    self.affinities = affinities
    self.rowidColumn = rowidColumn
    slots = [Slot](repeating: .null, count: affinities.count)
    bytes.reserveCapacity(256)
  }

  /// Clears every value to NULL, for the next row.
  package mutating func clear() {
    for index in slots.indices { slots[index] = .null }
  }

  /// Sets column `column` to NULL.
  package mutating func setNull(at column: Int) { slots[column] = .null }

  /// Sets column `column` to `value`, converted by its affinity; `false` when SQLite would
  /// store it as text. The rowid column takes the value as the row's rowid.
  @discardableResult
  package mutating func setInteger(_ value: Int64, at column: Int) -> Bool {
    if column == rowidColumn {
      rowid = value
      slots[column] = .null
      return true
    }
    switch affinities[column] {
    case .text: return false
    case .real:
      // An integer in a REAL column is kept as an integer when it fits in six bytes (and read
      // back as a real), else stored as the real it converts to.
      slots[column] =
        Self.sixByteRange.contains(value) ? .integer(value) : .real(Double(value))
    case .integer, .numeric, .blob: slots[column] = .integer(value)
    }
    return true
  }

  /// Sets column `column` to `value`, converted by its affinity as `sqlite3_bind_double` and
  /// an insert would: NaN is NULL, a whole real in a numeric column an integer; `false` when
  /// SQLite would store it as text.
  @discardableResult
  package mutating func setReal(_ value: Double, at column: Int) -> Bool {
    guard !value.isNaN else {
      slots[column] = .null
      return true
    }
    let affinity = affinities[column]
    if affinity == .text { return false }
    if affinity.prefersIntegers, let whole = Self.wholeInteger(value) {
      return setInteger(whole, at: column)
    }
    slots[column] = .real(value)
    return true
  }

  /// Sets column `column` to the UTF-8 text `value` (held by pointer until ``encode()``);
  /// `false` in a column whose affinity would try to read it as a number.
  @discardableResult
  package mutating func setText(_ value: UnsafeRawBufferPointer, at column: Int) -> Bool {
    switch affinities[column] {
    case .text, .blob:
      slots[column] = .text(value)
      return true
    case .integer, .numeric, .real: return false
    }
  }

  /// Sets column `column` to the blob `value` (held by pointer until ``encode()``): SQLite
  /// converts no blob.
  package mutating func setBlob(_ value: UnsafeRawBufferPointer, at column: Int) {
    slots[column] = .blob(value)
  }

  /// Encodes the values set into ``bytes``.
  package mutating func encode() {
    var last = slots.count - 1
    while last > 0, case .null = slots[last] { last -= 1 }
    var headerBody = 0
    var bodySize = 0
    for index in 0...last {
      let (type, length) = Self.serialType(slots[index])
      headerBody += Self.varintLength(UInt64(type))
      bodySize += length
    }
    let headerSize = Self.headerSize(serialTypes: headerBody)
    bytes.removeAll(keepingCapacity: true)
    bytes.reserveCapacity(headerSize + bodySize)
    Self.appendVarint(UInt64(headerSize), to: &bytes)
    for index in 0...last {
      Self.appendVarint(UInt64(Self.serialType(slots[index]).type), to: &bytes)
    }
    for index in 0...last {
      switch slots[index] {
      case .null: break
      case .integer(let value):
        Self.appendBigEndian(value, length: Self.serialType(slots[index]).length, to: &bytes)
      case .real(let value):
        Self.appendBigEndian(Int64(bitPattern: value.bitPattern), length: 8, to: &bytes)
      case .text(let value), .blob(let value):
        bytes.append(contentsOf: value)
      }
    }
  }

  /// The value set at `column` when it is NULL (`.some(nil)`) or an integer, as an index on the
  /// column keeps it; nil for a real, a text or a blob.
  package func integerOrNull(at column: Int) -> Int64?? {
    switch slots[column] {
    case .null: return .some(nil)
    case .integer(let value): return .some(value)
    case .real, .text, .blob: return nil
    }
  }

  /// Appends the key that sorts this row (its rowid set) in an index on `columns`
  /// (``IndexSortKey``); false, appending nothing, when one of their values is a real, which
  /// such a key cannot sort among integers.
  package func appendIndexSortKey(of columns: [Int], to key: inout [UInt8]) -> Bool {
    for column in columns {
      if case .real = slots[column] { return false }
    }
    for column in columns {
      switch slots[column] {
      case .null: IndexSortKey.appendNull(to: &key)
      case .integer(let value): IndexSortKey.appendInteger(value, to: &key)
      case .text(let value): IndexSortKey.appendBytes(value, isText: true, to: &key)
      case .blob(let value): IndexSortKey.appendBytes(value, isText: false, to: &key)
      case .real: break
      }
    }
    IndexSortKey.appendRowid(rowid, to: &key)
    return true
  }

  /// Appends the record an index on one column keeps for a row: the column's `value` (NULL
  /// when nil) and the row's `rowid`, each stored as ``encode()`` stores an integer.
  package static func appendIndexKey(_ value: Int64?, rowid: Int64, to bytes: inout [UInt8]) {
    let first = serialType(value.map(Slot.integer) ?? .null)
    let second = serialType(.integer(rowid))
    // Three one-byte varints: serial types of integers are 0 to 9.
    bytes.append(3)
    bytes.append(UInt8(first.type))
    bytes.append(UInt8(second.type))
    appendBigEndian(value ?? 0, length: first.length, to: &bytes)
    appendBigEndian(rowid, length: second.length, to: &bytes)
  }

  /// Appends the low `length` bytes of `integer`, most significant first.
  @inline(__always)
  static func appendBigEndian(_ integer: Int64, length: Int, to bytes: inout [UInt8]) {
    var shift = (length - 1) * 8
    while shift >= 0 {
      bytes.append(UInt8(truncatingIfNeeded: integer >> Int64(shift)))
      shift -= 8
    }
  }

  /// The longest row SQLite takes by default (`SQLITE_MAX_LENGTH`, for a string, a blob or a
  /// row's record): a longer one is refused by an insert, and is not written here either.
  package static let longestRecord = 1_000_000_000

  /// Integers SQLite keeps as integers in a REAL column: those that fit in six bytes.
  static let sixByteRange: ClosedRange<Int64> = -140_737_488_355_328...140_737_488_355_327

  /// `value` as an integer when it is one exactly and lies strictly between the smallest and
  /// largest 64-bit integers (SQLite's rule for turning a real into an integer).
  static func wholeInteger(_ value: Double) -> Int64? {
    guard let whole = Int64(exactly: value), whole != .min, whole != .max else { return nil }
    return whole
  }

  /// A value's serial type and the length of its body.
  private static func serialType(_ slot: Slot) -> (type: Int, length: Int) {
    switch slot {
    case .null: return (0, 0)
    case .integer(let value): return integerSerialType(value)
    case .real: return (7, 8)
    case .text(let value): return (13 + 2 * value.count, value.count)
    case .blob(let value): return (12 + 2 * value.count, value.count)
    }
  }

  /// The size of a record's header whose serial types take `serialTypes` bytes: they and the
  /// varint of the size itself, which counts its own bytes.
  static func headerSize(serialTypes: Int) -> Int {
    serialTypes + (varintLength(UInt64(serialTypes + 1)) > 1 ? 2 : 1)
  }

  /// An integer's serial type and the length of its body.
  @inline(__always)
  static func integerSerialType(_ value: Int64) -> (type: Int, length: Int) {
    let magnitude = value < 0 ? UInt64(bitPattern: ~value) : UInt64(value)
    if magnitude <= 127 {
      // Schema format 4 (every database SQLite has made since 3.3.0) stores 0 and 1 in the
      // type alone.
      if value == 0 || value == 1 { return (8 + Int(value), 0) }
      return (1, 1)
    }
    if magnitude <= 32767 { return (2, 2) }
    if magnitude <= 8_388_607 { return (3, 3) }
    if magnitude <= 2_147_483_647 { return (4, 4) }
    if magnitude <= 140_737_488_355_327 { return (5, 6) }
    return (6, 8)
  }

  /// The bytes SQLite's variable-length integer takes for `value`.
  package static func varintLength(_ value: UInt64) -> Int {
    if value >> 56 != 0 { return 9 }
    var length = 1
    var rest = value >> 7
    while rest != 0 {
      length += 1
      rest >>= 7
    }
    return length
  }

  /// Appends `value` as SQLite's variable-length integer: big-endian groups of seven bits, a
  /// ninth byte carrying eight.
  package static func appendVarint(_ value: UInt64, to bytes: inout [UInt8]) {
    // Serial types, sizes and most keys: one or two bytes.
    if value < 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: value))
      return
    }
    if value < 0x4000 {
      bytes.append(UInt8(truncatingIfNeeded: value >> 7) | 0x80)
      bytes.append(UInt8(truncatingIfNeeded: value) & 0x7F)
      return
    }
    if value >> 56 != 0 {
      var high = value >> 8
      var groups = [UInt8](repeating: 0, count: 8)
      for index in stride(from: 7, through: 0, by: -1) {
        groups[index] = UInt8(high & 0x7F) | 0x80
        high >>= 7
      }
      bytes.append(contentsOf: groups)
      bytes.append(UInt8(truncatingIfNeeded: value))
      return
    }
    let length = varintLength(value)
    for index in stride(from: length - 1, through: 0, by: -1) {
      let group = UInt8((value >> UInt64(7 * index)) & 0x7F)
      bytes.append(index == 0 ? group : group | 0x80)
    }
  }
}
