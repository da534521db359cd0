import ObjectStore
import PropertyList

/// One column of a format-2 chunk as read (``ColumnLayout``, ``ColumnChunkParts``): which
/// records have a value, and their values, each accessor checking that the buffers hold
/// exactly that many values of the column's kind. Its byte strings are read in place.
struct ColumnReader {
  let key: String
  let kind: ColumnBuilder.Kind
  /// The records that have a value, in order.
  let records: [Int]
  private let column: ColumnChunkParts.Column
  private let member: String

  /// Reads the column's key, kind and `present` bitmap for a chunk of `count` records.
  init(_ column: ColumnChunkParts.Column, count: Int, member: String)
    throws(ArchiveFormatError)
  {
    self.column = column
    self.member = member
    guard let key = column.key else {
      throw ArchiveFormatError(member: member, "a column has no key")
    }
    guard let type = column.type, let kind = ColumnBuilder.Kind(rawValue: type) else {
      throw ArchiveFormatError(
        member: member,
        "column \(key) has type \(column.type ?? "none"), which is not one of \(ColumnBuilder.Kind.allCases.map(\.rawValue).joined(separator: ", "))"
      )
    }
    self.key = key
    self.kind = kind
    switch column.words {
    case .absent: break
    case .data where kind == .string: break
    default:
      throw ArchiveFormatError(
        member: member, "column \(key): words belong to a column of strings, as data")
    }
    let bitmap: ArraySlice<UInt8>
    switch column.present {
    case .absent:
      records = Array(0..<count)
      return
    case .data(let bytes) where bytes.count == (count + 7) / 8:
      bitmap = bytes
    default:
      throw ArchiveFormatError(
        member: member, "column \(key): present is not a bitmap of \(count) records")
    }
    var records: [Int] = []
    for (byteIndex, byte) in bitmap.enumerated() where byte != 0 {
      for bit in 0..<8 where byte & (1 << UInt8(bit)) != 0 {
        let record = byteIndex * 8 + bit
        guard record < count else {
          throw ArchiveFormatError(
            member: member, "column \(key): present marks a record past the chunk's \(count)")
        }
        records.append(record)
      }
    }
    self.records = records
  }

  private func bad(_ detail: String) -> ArchiveFormatError {
    ArchiveFormatError(member: member, "column \(key): \(detail)")
  }

  /// The column's `lengths` or `values`, in place.
  private func bytes(_ name: String) throws(ArchiveFormatError) -> ArraySlice<UInt8> {
    let found = name == ColumnLayout.values ? column.values : column.lengths
    guard case .data(let bytes) = found else { throw bad("\(name) is not data") }
    return bytes
  }

  /// The values of an `integer` column.
  func integers() throws(ArchiveFormatError) -> [Int64] {
    var reader = Varint.Reader(try bytes(ColumnLayout.values))
    var result: [Int64] = []
    result.reserveCapacity(records.count)
    for _ in records {
      guard let value = reader.nextDelta() else { throw bad("values end early") }
      result.append(value)
    }
    guard reader.isAtEnd else { throw bad("values run past its \(records.count) records") }
    return result
  }

  /// The values of a `real` or `date` column.
  func doubles() throws(ArchiveFormatError) -> [Double] {
    let values = try bytes(ColumnLayout.values)
    guard values.count == records.count * 8 else {
      throw bad("\(values.count) bytes of values for \(records.count) doubles")
    }
    return values.withUnsafeBytes { raw in
      (0..<records.count).map { index in
        Double(
          bitPattern: UInt64(
            bigEndian: raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)))
      }
    }
  }

  /// The values of a `bool` column.
  func bools() throws(ArchiveFormatError) -> [Bool] {
    let values = try bytes(ColumnLayout.values)
    guard values.count == records.count, values.allSatisfy({ $0 <= 1 }) else {
      throw bad("values are not \(records.count) booleans")
    }
    return values.map { $0 == 1 }
  }

  /// The byte ranges of the values `lengths` gives, one a record, in `size` bytes of values.
  private func ranges(size: Int) throws(ArchiveFormatError) -> [Range<Int>] {
    var lengths = Varint.Reader(try bytes(ColumnLayout.lengths))
    var result: [Range<Int>] = []
    result.reserveCapacity(records.count)
    var offset = 0
    for _ in records {
      guard let length = lengths.next(), length <= UInt64(size - offset) else {
        throw bad("lengths do not fit its values")
      }
      result.append(offset..<offset + Int(length))
      offset += Int(length)
    }
    guard lengths.isAtEnd, offset == size else {
      throw bad("lengths do not account for its values")
    }
    return result
  }

  /// The byte ranges of a `string` or `data` column's values, in place.
  private func ranges() throws(ArchiveFormatError) -> (
    values: ArraySlice<UInt8>, ranges: [Range<Int>]
  ) {
    let values = try bytes(ColumnLayout.values)
    return (values, try ranges(size: values.count))
  }

  /// Checks that `values` at `ranges` are each UTF-8: the values together are UTF-8, and each
  /// begins where a character does (values back to back are each UTF-8 exactly when that
  /// holds; one check of the whole is quicker than one a value).
  private func checkText(_ values: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>])
    throws(ArchiveFormatError)
  {
    do {
      _ = try UTF8Span(validating: values.span)
    } catch {
      throw bad("a value is not UTF-8")
    }
    for range in ranges where range.lowerBound < values.count {
      // A continuation byte (10xxxxxx) cannot begin a value.
      guard values[range.lowerBound] & 0xC0 != 0x80 else {
        throw bad("a value is not UTF-8")
      }
    }
  }

  /// The values of a `string` column coded as numbered words (``WordCoding``), decoded into a
  /// batch's buffer and checked as UTF-8; nil for a column not coded.
  private func decodedTexts() throws(ArchiveFormatError) -> ObjectBatch.Bytes? {
    guard case .data(let words) = column.words else { return nil }
    let tokens = try bytes(ColumnLayout.values)
    let lengths = try bytes(ColumnLayout.lengths)
    let size: Int
    do {
      size = try WordCoding.size(
        words: words, tokens: tokens, lengths: lengths, count: records.count)
    } catch {
      throw bad(error.detail)
    }
    let ranges = try ranges(size: size)
    let texts: ObjectBatch.Bytes
    do {
      texts = try ObjectBatch.Bytes(byteCount: size + WordCoding.padding, ranges: ranges) {
        buffer throws(WordCoding.Malformed) in
        try WordCoding.decode(
          words: words, tokens: tokens, lengths: lengths, count: records.count, into: buffer)
      }
    } catch {
      throw bad(error.detail)
    }
    try checkText(
      UnsafeBufferPointer(
        start: texts.baseAddress.assumingMemoryBound(to: UInt8.self), count: size),
      texts.ranges)
    return texts
  }

  /// The byte ranges of a `string` column's values in place, each checked to be UTF-8.
  private func textRanges() throws(ArchiveFormatError) -> (
    values: ArraySlice<UInt8>, ranges: [Range<Int>]
  ) {
    let (values, ranges) = try ranges()
    try values.withUnsafeBufferPointer { buffer throws(ArchiveFormatError) in
      try checkText(buffer, ranges)
    }
    return (values, ranges)
  }

  /// The values of a `string` column.
  func strings() throws(ArchiveFormatError) -> [String] {
    if let texts = try decodedTexts() {
      return texts.ranges.indices.map { String(decoding: texts[$0], as: UTF8.self) }
    }
    let (values, ranges) = try textRanges()
    let start = values.startIndex
    return ranges.map {
      String(decoding: values[(start + $0.lowerBound)..<(start + $0.upperBound)], as: UTF8.self)
    }
  }

  /// The values of a `string` column, in one buffer.
  func texts() throws(ArchiveFormatError) -> ObjectBatch.Bytes {
    if let texts = try decodedTexts() { return texts }
    let (values, ranges) = try textRanges()
    return values.withUnsafeBytes { ObjectBatch.Bytes(copying: $0, ranges: ranges) }
  }

  /// The values of a `data` column, in one buffer.
  func blobs() throws(ArchiveFormatError) -> ObjectBatch.Bytes {
    let (values, ranges) = try ranges()
    return values.withUnsafeBytes { ObjectBatch.Bytes(copying: $0, ranges: ranges) }
  }

  /// The values of an `integers` column.
  func lists() throws(ArchiveFormatError) -> [[Int64]] {
    var lengths = Varint.Reader(try bytes(ColumnLayout.lengths))
    var values = Varint.Reader(try bytes(ColumnLayout.values))
    var result: [[Int64]] = []
    result.reserveCapacity(records.count)
    for _ in records {
      guard let length = lengths.next(), length <= UInt64(Int.max) else {
        throw bad("lengths end early")
      }
      var list: [Int64] = []
      for _ in 0..<Int(length) {
        guard let value = values.nextDelta() else { throw bad("values end early") }
        list.append(value)
      }
      result.append(list)
    }
    guard lengths.isAtEnd, values.isAtEnd else {
      throw bad("lengths or values run past its \(records.count) records")
    }
    return result
  }
}
