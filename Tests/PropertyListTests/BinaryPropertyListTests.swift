import PropertyList
import Testing

@Suite("Binary property lists")
struct BinaryPropertyListTests {
  @Test func everyKindRoundTripsThroughTheBinaryFormat() throws {
    var value = SampleValues.portable
    if case .dictionary(var entries) = value {
      entries["null"] = .null
      entries["uid"] = .uid(70_000)
      entries["fractionalDate"] = .date(PropertyListDate(secondsSinceReferenceDate: 1.000_001))
      value = .dictionary(entries)
    }
    let bytes = value.binaryPropertyList()
    #expect(bytes.starts(with: Array("bplist00".utf8)))
    #expect(try PropertyListValue(binaryPropertyList: bytes) == value)
  }

  @Test func equalValuesEncodeToEqualBytes() {
    let a: PropertyListValue = ["z": 1, "a": 2, "m": ["y": 1, "b": 2]]
    let b: PropertyListValue = ["m": ["b": 2, "y": 1], "a": 2, "z": 1]
    #expect(a.binaryPropertyList() == b.binaryPropertyList())
  }

  @Test func integersUseTheSmallestEncodingAndNegativesUseEightBytes() {
    func encodedInteger(_ value: Int64) -> [UInt8] {
      var writer = BinaryPropertyListWriter()
      let root = writer.integer(value)
      let bytes = writer.serialized(root: root)
      return Array(bytes[8..<(bytes.count - 32 - 1)])  // the one object, minus the offset table
    }
    #expect(encodedInteger(7) == [0x10, 7])
    #expect(encodedInteger(256) == [0x11, 1, 0])
    #expect(encodedInteger(65_536) == [0x12, 0, 1, 0, 0])
    #expect(encodedInteger(1 << 32) == [0x13, 0, 0, 0, 1, 0, 0, 0, 0])
    #expect(encodedInteger(-1) == [0x13, 255, 255, 255, 255, 255, 255, 255, 255])
  }

  @Test func stringsAreUniquedAndAsciiStaysSingleByte() throws {
    var writer = BinaryPropertyListWriter()
    let start = writer.stackCount
    for _ in 0..<100 { writer.push(writer.string("repeated")) }
    let root = writer.makeArray(fromStackIndex: start)
    #expect(writer.objectCount == 2)
    let bytes = writer.serialized(root: root)
    #expect(bytes.contains(0x58))  // ASCII string marker with length 8
    #expect(try PropertyListValue(binaryPropertyList: bytes).arrayValue?.count == 100)
  }

  @Test func nonAsciiStringsAreWrittenAsUtf16WithSurrogatePairs() throws {
    let value: PropertyListValue = "🎉x"
    let bytes = value.binaryPropertyList()
    #expect(bytes[8] == 0x63)  // UTF-16, three code units (a surrogate pair and x)
    #expect(try PropertyListValue(binaryPropertyList: bytes) == value)
  }

  @Test func referenceAndOffsetSizesGrowOnlyWhenNeeded() throws {
    let small: PropertyListValue = .array((0..<10).map { .integer(Int64($0)) })
    let smallBytes = small.binaryPropertyList()
    #expect(smallBytes[smallBytes.count - 26] == 1)  // offset size
    #expect(smallBytes[smallBytes.count - 25] == 1)  // reference size
    let large: PropertyListValue = .array((0..<300).map { .string("s\($0)") })
    let largeBytes = large.binaryPropertyList()
    #expect(largeBytes[largeBytes.count - 26] == 2)
    #expect(largeBytes[largeBytes.count - 25] == 2)
    #expect(try PropertyListValue(binaryPropertyList: largeBytes) == large)
  }

  @Test func listsOfOver65536ObjectsUseThreeByteReferencesAndOffsets() throws {
    let value: PropertyListValue = .array((0..<70_000).map { .integer(Int64($0) + 1_000_000) })
    let bytes = value.binaryPropertyList()
    #expect(bytes[bytes.count - 26] == 3)  // offsets: the last lies below 16 MiB
    #expect(bytes[bytes.count - 25] == 3)  // references: 70,001 objects
    #expect(try PropertyListValue(binaryPropertyList: bytes) == value)
  }

  @Test func aWriterResetForTheNextChunkStartsEmpty() throws {
    var writer = BinaryPropertyListWriter()
    _ = writer.value(SampleValues.record(1))
    writer.reset()
    let root = writer.value(SampleValues.record(2))
    #expect(
      try PropertyListValue(binaryPropertyList: writer.serialized(root: root))
        == SampleValues.record(2))
  }

  @Test func theObjectByObjectReaderWalksRecordsWithoutATree() throws {
    let chunk: PropertyListValue = .array((0..<50).map(SampleValues.record))
    let reader = try BinaryPropertyListReader(bytes: chunk.binaryPropertyList())
    let records = try reader.arrayElements(of: reader.topObject)
    #expect(records.count == 50)
    let entries = try reader.dictionaryEntries(of: records[7])
    var fields: [String: PropertyListValue] = [:]
    for (key, value) in entries where try reader.kind(of: value) == .scalar {
      fields[try reader.string(at: key)] = try reader.scalar(at: value)
    }
    #expect(fields["class"] == "Book")
    #expect(fields["pk"] == 7)
  }

  @Test func aDictionarysEntriesComeInStoredOrderRepeatsIncludedAndNestedOnesAsDecoded() throws {
    // Keys out of order and one key twice, as a writer other than ours may leave them.
    var writer = BinaryPropertyListWriter()
    let start = writer.stackCount
    for (key, value) in [("b", 1), ("a", 2), ("b", 3)] {
      writer.push(writer.string(key))
      writer.push(writer.integer(Int64(value)))
    }
    let root = writer.makeDictionary(fromStackIndex: start)
    let flat = try BinaryPropertyListReader(bytes: writer.serialized(root: root))
    var entries: [(key: String, value: PropertyListValue)] = []
    #expect(try flat.forEachDictionaryEntry { entries.append(($0, $1)) })
    #expect(entries.map(\.key) == ["b", "a", "b"])
    #expect(entries.map(\.value) == [1, 2, 3])
    // The whole-tree decoder keeps the last of a repeated key; so does a dictionary of these.
    #expect(
      try flat.decode() == .dictionary(Dictionary(entries, uniquingKeysWith: { _, last in last })))
    // A value that is a container: the entries of the decoded dictionary, in any order.
    let nested: PropertyListValue = ["list": [1, "two"], "name": "n", "inner": ["x": 1.5]]
    let reader = try BinaryPropertyListReader(bytes: nested.binaryPropertyList())
    var nestedEntries: [(String, PropertyListValue)] = []
    #expect(try reader.forEachDictionaryEntry { nestedEntries.append(($0, $1)) })
    #expect(.dictionary(Dictionary(uniqueKeysWithValues: nestedEntries)) == nested)
    // Not a dictionary at the top: false, not an error, and no entry.
    let array = try BinaryPropertyListReader(
      bytes: PropertyListValue.array([1]).binaryPropertyList())
    var called = false
    #expect(try !array.forEachDictionaryEntry { _, _ in called = true })
    #expect(!called)
  }

  /// An array holding the level below twice, `levels` deep: 2^levels paths, levels+1 objects.
  func doublingArrays(levels: Int) -> [UInt8] {
    var writer = BinaryPropertyListWriter()
    var level = writer.integer(1)
    for _ in 0..<levels {
      let start = writer.stackCount
      writer.push(level)
      writer.push(level)
      level = writer.makeArray(fromStackIndex: start)
    }
    return writer.serialized(root: level)
  }

  @Test func aDagOfSharedContainersDecodesWithinItsBudgetAndIsRefusedBeyondIt() throws {
    // 10 levels: 1,024 leaves, well within the budget, every path there.
    let value = try PropertyListValue(binaryPropertyList: doublingArrays(levels: 10))
    var depth = 0
    var current = value
    while case .array(let elements) = current {
      depth += 1
      current = elements[1]
    }
    #expect(depth == 10)
    // 60 levels: a walk of the tree would meet 2^60 leaves; refused, not built.
    #expect {
      try PropertyListValue(binaryPropertyList: doublingArrays(levels: 60))
    } throws: { error in
      "\(error)".contains("decoding would take more than")
    }
  }

  @Test func aWritersGenerationChangesOnResetAndDiffersBetweenWriters() throws {
    var first = BinaryPropertyListWriter()
    let second = BinaryPropertyListWriter()
    #expect(first.generation != second.generation)
    let before = first.generation
    let long = String(repeating: "x", count: 40)
    let a = first.string(long, uniquing: false)
    let b = first.string(long, uniquing: false)
    #expect(a != b)
    #expect(first.string("key") == first.string("key"))
    first.push(a)
    first.push(b)
    let root = first.makeArray(fromStackIndex: 0)
    let bytes = first.serialized(root: root)
    #expect(
      try PropertyListValue(binaryPropertyList: bytes) == .array([.string(long), .string(long)]))
    first.reset()
    #expect(first.generation != before)
  }

  @Test("data shared with the writer serializes to the bytes a copy gives, payloads where said")
  func sharedDataSerializesAsCopiedData() throws {
    // Sizes either side of the one-byte count (15) and of the 2-byte one (65,536).
    for size in [0, 14, 15, 255, 256, 65_535, 65_536, 70_000] {
      let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
      func list(sharing: Bool) -> (bytes: [UInt8], ranges: [Range<Int>]) {
        var writer = BinaryPropertyListWriter()
        let start = writer.stackCount
        writer.push(writer.string("values"))
        let data = sharing ? writer.data(sharing: payload) : writer.data(payload)
        writer.push(data)
        writer.push(writer.string("count"))
        writer.push(writer.integer(Int64(size)))
        let root = writer.makeDictionary(fromStackIndex: start)
        return (writer.serialized(root: root), writer.payloadRanges(of: [data]))
      }
      let shared = list(sharing: true)
      let copied = list(sharing: false)
      #expect(shared.bytes == copied.bytes, "\(size) bytes")
      #expect(shared.ranges == copied.ranges, "\(size) bytes")
      #expect(Array(shared.bytes[shared.ranges[0]]) == payload)
      #expect(
        try PropertyListValue(binaryPropertyList: shared.bytes)
          == ["values": .data(payload), "count": .integer(Int64(size))])
    }
  }

  @Test("a reset writer lets go of the data it shared, so the caller's next change is in place")
  func resetReleasesSharedData() throws {
    func address(_ buffer: [UInt8]) -> UnsafePointer<UInt8>? {
      buffer.withUnsafeBufferPointer { $0.baseAddress }
    }
    var writer = BinaryPropertyListWriter()
    var buffer = [UInt8](repeating: 7, count: 1_000)
    // Shared, not copied: a change now copies the caller's buffer, and the list keeps the old.
    let before = address(buffer)
    let data = writer.data(sharing: buffer)
    buffer[0] = 8
    #expect(address(buffer) != before)
    #expect(
      try PropertyListValue(binaryPropertyList: writer.serialized(root: data))
        == .data(
          [UInt8](repeating: 7, count: 1_000)))
    // Once the writer is reset, the change happens in place.
    writer.push(writer.data(sharing: buffer))
    writer.reset()
    let after = address(buffer)
    buffer[1] = 8
    #expect(address(buffer) == after)
  }
}
