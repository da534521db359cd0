#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An index's record (the indexed values, then the rowid) written as bytes that compare, byte
/// by byte (`memcmp`), in the order SQLite keeps the records of an ascending index whose
/// columns have the BINARY collation: NULL before integers, integers by value, then texts, then
/// blobs, each by its bytes, a shorter one before a longer one it begins; the rowid last.
/// What a loader gathers of each row to sort them into an index without SQLite
/// (``RowRecord/appendIndexSortKey(of:to:)``), turned back into the record the index keeps by
/// ``appendRecord(of:to:)``.
///
/// Each value is a tag byte and its bytes: an integer's eight, big-endian with the sign bit
/// flipped; a text's or blob's own bytes with each zero byte followed by `0xFF`, ended by two
/// zero bytes. The rowid's eight bytes, as an integer's, end the key. Reals are not kept: an
/// integer and a real compare by value, which bytes alone cannot say.
package enum IndexSortKey {
  static let null: UInt8 = 1
  static let integer: UInt8 = 2
  static let text: UInt8 = 3
  static let blob: UInt8 = 4

  /// Appends a NULL value.
  static func appendNull(to key: inout [UInt8]) { key.append(null) }

  /// Appends an integer value.
  static func appendInteger(_ value: Int64, to key: inout [UInt8]) {
    key.append(integer)
    appendOrdered(value, to: &key)
  }

  /// Appends a text's or a blob's bytes.
  static func appendBytes(_ bytes: UnsafeRawBufferPointer, isText: Bool, to key: inout [UInt8]) {
    key.append(isText ? text : blob)
    var rest = bytes
    while let zero = firstZero(in: rest) {
      key.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[...zero]))
      key.append(0xFF)
      rest = UnsafeRawBufferPointer(rebasing: rest[(zero + 1)...])
    }
    key.append(contentsOf: rest)
    key.append(0)
    key.append(0)
  }

  /// Appends the rowid, which ends a key.
  static func appendRowid(_ rowid: Int64, to key: inout [UInt8]) { appendOrdered(rowid, to: &key) }

  /// The key's bytes that say its values, without the rowid: two keys whose values are equal
  /// and hold no NULL are two rows a unique index refuses.
  package static func values(of key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: key.dropLast(8))
  }

  /// Appends the record an index keeps for `key` (a whole key, as made here): its values and
  /// rowid as ``RowRecord`` stores them. Returns whether a value is NULL.
  @discardableResult
  package static func appendRecord(of key: UnsafeRawBufferPointer, to record: inout [UInt8])
    -> Bool
  {
    let rowid = ordered(key, at: key.count - 8)
    let rowidType = RowRecord.integerSerialType(rowid)
    // The key is read three times (the header's size, the serial types, the bodies) rather
    // than its values kept: a key is a few dozen bytes.
    var headerBody = RowRecord.varintLength(UInt64(rowidType.type))
    var hasNull = false
    forEachValue(of: key) { type, _ in
      headerBody += RowRecord.varintLength(UInt64(type))
      if type == 0 { hasNull = true }
    }
    RowRecord.appendVarint(UInt64(RowRecord.headerSize(serialTypes: headerBody)), to: &record)
    forEachValue(of: key) { type, _ in RowRecord.appendVarint(UInt64(type), to: &record) }
    RowRecord.appendVarint(UInt64(rowidType.type), to: &record)
    forEachValue(of: key) { type, bytes in
      switch type {
      case 0: break
      case 1...9:
        let integer = ordered(key, at: bytes.lowerBound)
        RowRecord.appendBigEndian(
          integer, length: RowRecord.integerSerialType(integer).length, to: &record)
      default:
        // The bytes without the 0xFF after each zero byte.
        var rest = UnsafeRawBufferPointer(rebasing: key[bytes])
        while let zero = firstZero(in: rest) {
          record.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[...zero]))
          rest = UnsafeRawBufferPointer(rebasing: rest[(zero + 2)...])
        }
        record.append(contentsOf: rest)
      }
    }
    RowRecord.appendBigEndian(rowid, length: rowidType.length, to: &record)
    return hasNull
  }

  /// Calls `body` with each value of `key`: its serial type in a record, and where its bytes
  /// lie in the key (escaped, for a text or a blob).
  @inline(__always)
  private static func forEachValue(
    of key: UnsafeRawBufferPointer, _ body: (_ type: Int, _ bytes: Range<Int>) -> Void
  ) {
    var position = 0
    let valuesEnd = key.count - 8
    while position < valuesEnd {
      let tag = key[position]
      position += 1
      switch tag {
      case null: body(0, position..<position)
      case integer:
        body(RowRecord.integerSerialType(ordered(key, at: position)).type, position..<position + 8)
        position += 8
      default:
        // The bytes up to two zero bytes, a zero byte followed by 0xFF standing for one.
        let start = position
        var escapes = 0
        while true {
          let zero = position + firstZero(in: UnsafeRawBufferPointer(rebasing: key[position...]))!
          if key[zero + 1] == 0 {
            position = zero
            break
          }
          escapes += 1
          position = zero + 2
        }
        body((tag == text ? 13 : 12) + 2 * (position - start - escapes), start..<position)
        position += 2
      }
    }
  }

  /// Appends `value`'s eight bytes, big-endian with the sign bit flipped: unsigned order is
  /// then signed order.
  private static func appendOrdered(_ value: Int64, to key: inout [UInt8]) {
    let bits = UInt64(bitPattern: value) ^ (1 << 63)
    withUnsafeBytes(of: bits.bigEndian) { key.append(contentsOf: $0) }
  }

  /// The integer whose eight ordered bytes begin at `position`.
  private static func ordered(_ key: UnsafeRawBufferPointer, at position: Int) -> Int64 {
    let bits = UInt64(bigEndian: key.loadUnaligned(fromByteOffset: position, as: UInt64.self))
    return Int64(bitPattern: bits ^ (1 << 63))
  }

  /// The offset of the first zero byte of `bytes` (whose indices begin at zero).
  private static func firstZero(in bytes: UnsafeRawBufferPointer) -> Int? {
    guard let base = bytes.baseAddress, !bytes.isEmpty,
      let found = memchr(base, 0, bytes.count)
    else { return nil }
    return UnsafeRawPointer(found) - base
  }
}
