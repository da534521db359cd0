import ArchiveFormat
import GraphVault
import ObjectModel
import ObjectStore
import PropertyList
import TestSupport
import Testing

@Suite("Format 2's column chunks")
struct ColumnChunkTests {
  static let member = "objects/GraphicNovel/000001.plist"

  /// Three graphic novels: every kind of column, values missing here and there, to-many lists
  /// with and without order keys, a stored value the model does not describe.
  static let novels: [(ObjectRecord, [(name: String, rows: [JoinCursor.Pair])])] = {
    var first = RecordCodingTests.book
    first.attributes["sales"] = .integer(Int64.min)
    var second = ObjectRecord(
      entity: "GraphicNovel", primaryKey: 9, version: 1,
      attributes: [
        "title": .string("Ünïcødé ✓"), "sales": .integer(Int64.max), "rating": .double(.nan),
      ],
      toOne: ["author": ObjectReference(entity: "Author", primaryKey: 1)])
    second.extraColumns["ZOTHER"] = .integer(12)
    let third = ObjectRecord(entity: "GraphicNovel", primaryKey: 4, version: 2)
    let tags = [JoinCursor.Pair(source: 7, destination: 5), .init(source: 7, destination: 2)]
    return [(first, [("tags", tags)]), (second, []), (third, [("tags", [])])]
  }()

  static func chunk() throws -> [UInt8] {
    var encoder = ColumnChunkEncoder(model: try SampleLibrary.model())
    for (record, links) in novels { encoder.add(record, manyToMany: links) }
    let bytes = encoder.serialized()
    return try #require(bytes)
  }

  @Test func varintsRoundTripEveryDifferenceAndRefuseOverlongOnes() throws {
    var random = SystemRandomNumberGenerator()
    let values: [Int64] =
      [0, 1, -1, .max, .min, .max - 1, .min + 1, 127, 128, -64, -65]
      + (0..<2_000).map { _ in
        Int64.random(in: .min ... .max, using: &random) >> Int64.random(in: 0...63)
      }
    var bytes: [UInt8] = []
    var previous: Int64 = 0
    for value in values { Varint.appendDelta(value, previous: &previous, to: &bytes) }
    var reader = Varint.Reader(bytes)
    #expect(values.map { _ in reader.nextDelta() } == values)
    #expect(reader.isAtEnd)
    var overlong = Varint.Reader(Array(repeating: 0xFF, count: 11) + [0])
    #expect(overlong.next() == nil)
    var cut = Varint.Reader([0x80, 0x80])
    #expect(cut.next() == nil)
  }

  @Test func recordsComeBackWithTheKeysAndValuesFormatOneHolds() throws {
    let model = try SampleLibrary.model()
    let decoder = RecordDecoder(model: model, member: Self.member)
    let columns = try decoder.decodeChunk(try Self.chunk())
    let encoder = RecordEncoder(model: model)
    var writer = BinaryPropertyListWriter()
    for (record, links) in Self.novels {
      writer.push(encoder.encode(record, manyToMany: links, into: &writer))
    }
    let root = writer.makeArray(fromStackIndex: 0)
    let rows = try decoder.decodeChunk(writer.serialized(root: root))
    #expect(columns.count == 3)
    /// NaN is not equal to itself: reals compared by their bits.
    func bits(_ record: ObjectRecord) -> ObjectRecord {
      var record = record
      record.attributes = record.attributes.mapValues {
        if case .double(let v) = $0 { return .integer(Int64(bitPattern: v.bitPattern)) }
        return $0
      }
      return record
    }
    for (a, b) in zip(columns, rows) {
      #expect(bits(a.0) == bits(b.0))
      #expect(a.1.mapValues { $0.map(\.0) } == b.1.mapValues { $0.map(\.0) })
      #expect(a.1.mapValues { $0.map(\.1) } == b.1.mapValues { $0.map(\.1) })
    }
    #expect(columns[0].1["tags"]?.map(\.0) == [5, 2])
    #expect(columns[1].0.extraColumns == ["ZOTHER": .integer(12)])
    #expect(columns[0].0.attributes["sales"] == .integer(.min))
    #expect(columns[1].0.attributes["sales"] == .integer(.max))
    // One class-tagged dictionary of columns, which any plist reader reads.
    let plain = try PropertyListValue(binaryPropertyList: try Self.chunk())
    #expect(plain["class"] == "GraphicNovel")
    #expect(plain["count"] == 3)
    let keys = plain["columns"]?.arrayValue?.compactMap { $0["key"]?.stringValue } ?? []
    #expect(
      keys == keys.sorted() && keys.contains("author@entity")
        && keys.contains("@columns/ZAPPCOLUMN"))
  }

  /// A scan that tests a few columns of a chunk decodes those and the keys; the objects it
  /// gives hold exactly the named columns' values of the whole decode.
  @Test func aChunkDecodedInPartHoldsTheNamedColumnsOfTheWholeAndNothingElse() throws {
    let decoder = RecordDecoder(model: try SampleLibrary.model(), member: Self.member)
    let chunk = try #require(try decoder.columnChunk(Self.chunk()))
    let whole = try decoder.decodeBatch(chunk)
    let names: Set = ["title", "author", "tags", "ZAPPCOLUMN"]
    let part = try decoder.decodeBatch(chunk, only: names)
    #expect(part.primaryKeys == whole.primaryKeys)
    #expect(part.versions == whole.versions)
    #expect(part.attributes.map(\.name) == ["title"])
    #expect(part.toOne.map(\.name) == ["author"])
    #expect(part.toMany.map(\.name) == ["tags"])
    #expect(part.storedColumns.map(\.name) == ["ZAPPCOLUMN"])
    for ((partial, partialLinks), (full, fullLinks)) in zip(part.records, whole.records) {
      #expect(partial.reference == full.reference)
      #expect(partial.attributes == full.attributes.filter { names.contains($0.key) })
      #expect(partial.toOne == full.toOne.filter { names.contains($0.key) })
      #expect(partial.extraColumns == full.extraColumns.filter { names.contains($0.key) })
      #expect(partialLinks["tags"]?.map(\.0) == fullLinks["tags"]?.map(\.0))
      #expect(partialLinks["tags"]?.map(\.1) == fullLinks["tags"]?.map(\.1))
    }
    #expect(whole.attributes.count > 1 && whole.storedColumns.count > 1)
    let keys = try decoder.decodeBatch(chunk, only: [])
    #expect(keys.primaryKeys == whole.primaryKeys)
    #expect(
      keys.attributes.isEmpty && keys.toOne.isEmpty && keys.toMany.isEmpty
        && keys.storedColumns.isEmpty)
    // Format 1's chunk of records is no chunk of columns.
    var writer = BinaryPropertyListWriter()
    let encoder = RecordEncoder(model: try SampleLibrary.model())
    writer.push(encoder.encode(Self.novels[0].0, manyToMany: [], into: &writer))
    let root = writer.makeArray(fromStackIndex: 0)
    let records = writer.serialized(root: root)
    #expect(try decoder.columnChunk(records) == nil)
  }

  @Test(arguments: [nil, [], ["title"], ["author", "tags", "ZAPPCOLUMN"], ["cover", "ZOTHER"]])
  func aChunkReadForSomeColumnsDecodesAsTheWholeChunkDoesForThem(names: Set<String>?) throws {
    let decoder = RecordDecoder(model: try SampleLibrary.model(), member: Self.member)
    let bytes = try Self.chunk()
    let whole = try #require(try decoder.columnChunk(bytes))
    let part = try #require(try decoder.columnChunk(bytes, only: names))
    let fromWhole = try decoder.decodeBatch(whole, only: names)
    let fromPart = try decoder.decodeBatch(part, only: names)
    #expect(fromPart.primaryKeys == fromWhole.primaryKeys)
    #expect(fromPart.versions == fromWhole.versions)
    for ((a, aLinks), (b, bLinks)) in zip(fromPart.records, fromWhole.records) {
      // Values compared by their text: a NaN rating is equal to itself there.
      #expect(a.reference == b.reference && a.toOne == b.toOne)
      #expect(a.attributes.mapValues { "\($0)" } == b.attributes.mapValues { "\($0)" })
      #expect(a.extraColumns.mapValues { "\($0)" } == b.extraColumns.mapValues { "\($0)" })
      #expect(aLinks.mapValues { $0.map(\.0) } == bLinks.mapValues { $0.map(\.0) })
      #expect(aLinks.mapValues { $0.map(\.1) } == bLinks.mapValues { $0.map(\.1) })
    }
    // The columns not asked for are not there at all.
    let kept = part["columns"]?.arrayValue?.count ?? 0
    let all = whole["columns"]?.arrayValue?.count ?? 0
    if let names {
      #expect(kept < all, "\(names)")
    } else {
      #expect(kept == all)
    }
  }

  @Test func aChunkReadForSomeColumnsStillRefusesOneTheModelDoesNotDescribe() throws {
    let bytes = try Self.damaged(Self.column("title") { $0["key"] = "subtitle" })
    let decoder = RecordDecoder(model: try SampleLibrary.model(), member: Self.member)
    let part = try #require(try decoder.columnChunk(bytes, only: ["author"]))
    #expect {
      _ = try decoder.decodeBatch(part, only: ["author"])
    } throws: { error in
      "\(error)".contains("subtitle, which the model does not describe")
    }
  }

  @Test func columnsSharingOneLargeValueCannotMakeAChunkReadInPartLarge() throws {
    // A forger's chunk: two thousand title columns, each naming the same 1 MiB string (the
    // writer stores it once), would decode to 2 GiB.
    let large = PropertyListValue.string(String(repeating: "x", count: 1 << 20))
    let bytes = try Self.damaged { top in
      top["columns"] = .array(
        Array(
          repeating: [
            "key": "title", "type": "string", "values": large,
          ], count: 2_000))
    }
    #expect(bytes.count < 2 << 20)
    let decoder = RecordDecoder(model: try SampleLibrary.model(), member: Self.member)
    #expect {
      _ = try decoder.columnChunk(bytes, only: ["title"])
    } throws: { error in
      "\(error)".contains("budget")
    }
  }

  @Test(arguments: SampleWorkload.allCases)
  func rowsAndRecordsOfAStoreMakeTheSameChunks(workload: SampleWorkload) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("sample.sqlite").path
    try workload.generate(at: path, objects: 1_500)
    try Self.expectSameChunksFromRowsAndRecords(path)
  }

  @Test func textsNotAllASCIIOrNotUTF8OrStoredAsBlobsMakeTheSameChunksFromRowsAsFromRecords()
    throws
  {
    let directory = try TemporaryDirectory()
    let path = directory.path("sample.sqlite").path
    try SampleLibrary.generate(at: path, objects: 1_500)
    // Rows read their ASCII texts and their blobs as bytes, and any other value as a value:
    // accents, bytes that are not UTF-8 in a TEXT, a blob where a string goes, a text where a
    // blob goes, a cover bound as text.
    let edit = try Subprocess.run(
      "python3",
      [
        "-c",
        """
        import sqlite3, sys
        db = sqlite3.connect(sys.argv[1])
        db.execute("UPDATE ZBOOK SET ZTITLE = 'Über ' || Z_PK WHERE Z_PK % 5 = 0")
        db.execute("UPDATE ZBOOK SET ZTITLE = CAST(X'FF41' || CAST(Z_PK AS BLOB) AS TEXT) WHERE Z_PK % 5 = 1")
        db.execute("UPDATE ZBOOK SET ZTITLE = X'0102' WHERE Z_PK % 5 = 2")
        db.execute("UPDATE ZBOOK SET ZUNIQUEID = 'not a uuid ' || Z_PK WHERE Z_PK % 7 = 0")
        db.execute("UPDATE ZBOOK SET ZCOVER = CAST(ZCOVER AS TEXT) WHERE ZCOVER IS NOT NULL AND Z_PK % 3 = 0")
        db.commit()
        """, path,
      ])
    #expect(edit.status == 0, "\(edit.stderr)")
    try Self.expectSameChunksFromRowsAndRecords(path)
  }

  /// Expects every entity of the store at `path` to make the same chunk, and the same ranges,
  /// from rows (backup's fast path) as from records.
  static func expectSameChunksFromRowsAndRecords(_ path: String) throws {
    let store = try CoreDataStore(path: path)
    let model = try #require(try store.cachedModel())
    let layout = try store.layout(for: model)
    for entity in model.entities where !entity.isAbstract {
      var fromRows = ColumnChunkEncoder(model: model)
      var fromRecords = ColumnChunkEncoder(model: model)
      try store.forEachObjectRow(of: entity.name, layout: layout) {
        fromRows.add($0, manyToMany: [])
      }
      try store.forEachObject(of: entity.name, layout: layout) {
        fromRecords.add($0, manyToMany: [])
      }
      let (a, b) = (fromRows.serialized(), fromRecords.serialized())
      #expect(a == b, "\(entity.name)")
      // The ranges the index gets are those a reader works out from the chunk decoded.
      let ranges = fromRows.ranges()
      #expect(ranges == fromRecords.ranges(), "\(entity.name)")
      if let a {
        let decoder = RecordDecoder(model: model, member: "objects/\(entity.name)/000001.plist")
        let batch = try decoder.decodeBatch(try #require(try decoder.columnChunk(a)))
        #expect(ranges == ChunkRanges(batch), "\(entity.name)")
        #expect(ranges?.links.isEmpty == false || batch.toOne.isEmpty, "\(entity.name)")
      }
    }
  }

  @Test func theRangesOfAChunkSayWhichKeysItMayHoldAndComeBackFromTheIndex() throws {
    var encoder = ColumnChunkEncoder(model: try SampleLibrary.model())
    for (record, links) in Self.novels { encoder.add(record, manyToMany: links) }
    let ranges = try #require(encoder.ranges())
    // Keys 4, 7 and 9; authors 1 (and the first novel's); tags 2 and 5; ZOTHER 12.
    #expect(ranges.keys == 4...9)
    #expect(ranges.links["tags"] == 2...5)
    #expect(ranges.links["@columns/ZOTHER"] == 12...12)
    #expect(ranges.mayHold(keys: [5]) && !ranges.mayHold(keys: [3, 10]))
    #expect(ranges.mayHold("tags", anyOf: [3]) && !ranges.mayHold("tags", anyOf: [1, 6]))
    #expect(!ranges.mayHold("editor", anyOf: [1]))
    // The bounds of the attributes' values: titles as bytes, sales as integers, dates as
    // reals; a NaN leaves the ratings none, and decimals and booleans have none.
    #expect(
      ranges.values?["title"]
        == .texts(low: Array("Dune".utf8), high: Array("Ünïcødé ✓".utf8)))
    #expect(ranges.values?["sales"] == .integers(Int64.min...Int64.max))
    #expect(ranges.values?["publishedAt"] == .reals(86_400.25...86_400.25))
    #expect(ranges.values?.keys.sorted() == ["edition", "publishedAt", "sales", "title"])
    let entry: PropertyListValue = ["path": "p", "ranges": ranges.propertyList]
    #expect(try ChunkRanges(reading: entry, member: "p") == ranges)
    #expect(try ChunkRanges(reading: ["path": "p"], member: "p") == nil)
    let long = PropertyListValue.data(Array(repeating: 65, count: ValueBounds.textLimit + 1))
    for damaged: PropertyListValue in [
      ["keys": [9, 4], "links": [:]], ["keys": [4], "links": [:]], ["keys": [4, 9]],
      ["keys": [4, 9], "links": ["tags": ["a", "b"]]],
      ["keys": [4, 9], "links": [:], "values": ["edition": [3, 2]]],
      ["keys": [4, 9], "links": [:], "values": ["title": [.data([1]), "b"]]],
      ["keys": [4, 9], "links": [:], "values": ["title": [.data([1]), long]]],
      ["keys": [4, 9], "links": [:], "values": ["rating": [.real(1.5)]]],
      ["keys": [4, 9], "links": [:], "values": "none"],
    ] {
      #expect(throws: ArchiveFormatError.self) {
        try ChunkRanges(reading: ["path": "p", "ranges": damaged], member: "p")
      }
    }
    // A chunk decoded is held to its ranges.
    let decoder = RecordDecoder(model: try SampleLibrary.model(), member: Self.member)
    let batch = try decoder.decodeBatch(try #require(try decoder.columnChunk(Self.chunk())))
    try ranges.check(batch, member: Self.member)
    var lying = ranges
    lying.links["tags"] = 2...4
    #expect(throws: ArchiveFormatError.self) { try lying.check(batch, member: Self.member) }
    var hiding = ranges
    hiding.values?["title"] = .texts(low: Array("Dune".utf8), high: Array("Dunes".utf8))
    #expect(throws: ArchiveFormatError.self) { try hiding.check(batch, member: Self.member) }
    // An index written before chunks had bounds of their values gives none, and is not
    // held to them.
    var older = ranges
    older.values = nil
    try older.check(batch, member: Self.member)
    let read: [String: ChunkRanges?] = ["p": ChunkRanges(batch)]
    let index: PropertyListValue = ["members": [["path": "p", "ranges": older.propertyList]]]
    #expect(ArchiveIndex.rangeProblems(index, against: read).isEmpty)
    let lyingIndex: PropertyListValue = ["members": [["path": "p", "ranges": hiding.propertyList]]]
    #expect(ArchiveIndex.rangeProblems(lyingIndex, against: read).count == 1)
  }

  /// The chunk's property list with `change` made to it.
  static func damaged(_ change: (inout [String: PropertyListValue]) -> Void) throws -> [UInt8] {
    guard case .dictionary(var top) = try PropertyListValue(binaryPropertyList: try chunk()) else {
      throw ArchiveFormatError(member: member, "not a dictionary")
    }
    change(&top)
    return PropertyListValue.dictionary(top).binaryPropertyList()
  }

  /// Changes column `key` of the chunk.
  static func column(_ key: String, _ change: @escaping (inout [String: PropertyListValue]) -> Void)
    -> (inout [String: PropertyListValue]) -> Void
  {
    { top in
      top["columns"] = .array(
        (top["columns"]?.arrayValue ?? []).map { column in
          guard case .dictionary(var fields) = column, fields["key"] == .string(key) else {
            return column
          }
          change(&fields)
          return .dictionary(fields)
        })
    }
  }

  @Test(arguments: [
    ("a column whose values end early", "values end early"),
    ("a column with values past its records", "run past"),
    ("lengths that overrun the values", "lengths"),
    ("a present bitmap of the wrong size", "bitmap"),
    ("a column of the wrong kind", "not String"),
    ("a column the model does not describe", "does not describe"),
    ("a count larger than the keys", "lacks"),
    ("an unknown column type", "not one of"),
    ("an entity the model lacks", "does not have"),
    ("a string that is not UTF-8", "UTF-8"),
  ])
  func aDamagedChunkIsRefusedNamingTheMemberAndTheColumn(damage: String, expected: String) throws {
    let change: (inout [String: PropertyListValue]) -> Void
    switch damage {
    case "a column whose values end early":
      change = Self.column("edition") { $0["values"] = .data([]) }
    case "a column with values past its records":
      change = Self.column("edition") { $0["values"] = .data([2, 2, 2, 2, 2]) }
    case "lengths that overrun the values":
      change = Self.column("title") { $0["lengths"] = .data([100, 100]) }
    case "a present bitmap of the wrong size":
      change = Self.column("cover") { $0["present"] = .data([1, 0, 0]) }
    case "a column of the wrong kind":
      change = Self.column("title") { $0["type"] = "data" }
    case "a column the model does not describe":
      change = Self.column("title") { $0["key"] = "subtitle" }
    case "a count larger than the keys":
      change = { $0["count"] = .integer(1 << 40) }
    case "an unknown column type":
      change = Self.column("title") { $0["type"] = "text" }
    case "an entity the model lacks":
      change = { $0["class"] = "Magazine" }
    default:
      change = Self.column("title") {
        if case .data(var values)? = $0["values"] {
          values[0] = 0xFF
          $0["values"] = .data(values)
        }
      }
    }
    let bytes = try Self.damaged(change)
    #expect {
      _ = try RecordDecoder(model: try SampleLibrary.model(), member: Self.member).decodeChunk(
        bytes)
    } throws: { error in
      let text = (error as? ArchiveFormatError)?.description ?? ""
      return text.hasPrefix(Self.member + ": ") && text.contains(expected)
    }
  }

  /// What a chunk decodes to, as text (its records, or the error): read in place, as
  /// `restore` and `verify` read it, and through its whole decoded tree, as a scan reads it.
  static func bothWays(_ bytes: [UInt8], _ decoder: RecordDecoder) -> (String, String) {
    /// A record as text, its dictionaries in key order.
    func text(_ record: ObjectRecord, _ links: [String: [(Int64, Int64?)]]) -> String {
      func sorted<Value>(_ values: [String: Value]) -> String {
        values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
      }
      return
        "\(record.entity)/\(record.primaryKey)/\(record.version) \(sorted(record.attributes)) \(sorted(record.toOne)) \(sorted(record.extraColumns)) \(sorted(links))"
    }
    func text(_ body: () throws -> [(ObjectRecord, [String: [(Int64, Int64?)]])]) -> String {
      do {
        return try body().map { text($0.0, $0.1) }.joined(separator: "\n")
      } catch {
        return "error: \(error)"
      }
    }
    let inPlace = text { try decoder.decodeChunk(bytes) }
    let tree = text {
      guard let chunk = try decoder.columnChunk(bytes) else {
        return try decoder.decodeChunk(bytes)
      }
      return ObjectChunk.columns(try decoder.decodeBatch(chunk)).storedRecords ?? []
    }
    return (inPlace, tree)
  }

  /// A chunk's byte strings are read where the list holds them, not copied out of it: the
  /// same records, or the same error, as its decoded tree gives, for the writer's chunk, every
  /// damaged one above, and thousands with bytes flipped or cut.
  @Test func aChunkReadInPlaceDecodesAsItsWholeTreeDoes() throws {
    let bytes = try Self.chunk()
    let decoder = RecordDecoder(model: try SampleLibrary.model(), member: Self.member)
    let (inPlace, tree) = Self.bothWays(bytes, decoder)
    #expect(inPlace == tree)
    #expect(!inPlace.hasPrefix("error"))
    for damage in [
      Self.column("edition") { $0["values"] = .data([]) },
      Self.column("title") { $0["lengths"] = .data([100, 100]) },
      Self.column("cover") { $0["present"] = .data([1, 0, 0]) },
      Self.column("cover") { $0["present"] = .integer(3) },
      Self.column("title") { $0["values"] = .array([.data([65])]) },
      Self.column("title") { $0["note"] = .dictionary(["a": 1]) },
      Self.column("title") { $0["key"] = .integer(4) },
      { $0["pk"] = .string("1") },
      { $0["columns"] = .integer(0) },
      { $0["columns"] = .array([.integer(0)]) },
      { $0["count"] = .integer(1 << 40) },
      { $0["extra"] = .data([1, 2, 3]) },
    ] {
      let (inPlace, tree) = Self.bothWays(try Self.damaged(damage), decoder)
      #expect(inPlace == tree)
    }
    var differing = 0
    for damaged in Self.damagedCopies(of: bytes, seed: 42) {
      let (inPlace, tree) = Self.bothWays(damaged, decoder)
      if inPlace != tree { differing += 1 }
    }
    #expect(differing == 0)
  }

  /// The writer's chunk made again by hand: its scalars and byte strings as they are, its
  /// columns those `columns` makes of one shared data value of `size` bytes.
  static func handMade(
    size: Int,
    columns: (inout BinaryPropertyListWriter, BinaryPropertyListWriter.Reference) ->
      [BinaryPropertyListWriter.Reference]
  ) throws -> [UInt8] {
    guard case .dictionary(let top) = try PropertyListValue(binaryPropertyList: try chunk()) else {
      throw ArchiveFormatError(member: member, "not a dictionary")
    }
    var writer = BinaryPropertyListWriter()
    let shared = writer.data(Array(repeating: 7, count: size))
    let made = columns(&writer, shared)
    let start = writer.stackCount
    for (key, value) in top.sorted(by: { $0.key < $1.key }) {
      writer.push(writer.string(key))
      writer.push(key == "columns" ? writer.array(made) : writer.value(value))
    }
    let root = writer.makeDictionary(fromStackIndex: start)
    return writer.serialized(root: root)
  }

  /// Columns sharing one large value would decode to far more than the chunk: read in place,
  /// they are held to the tree's budget, and refused as the tree refuses them.
  @Test func columnsSharingOneLargeValueAreRefusedReadInPlaceToo() throws {
    let bytes = try Self.handMade(size: 1 << 20) { writer, shared in
      (0..<2_000).map { _ in
        let start = writer.stackCount
        for (key, value) in [
          ("key", writer.string("cover")), ("type", writer.string("data")),
          ("lengths", writer.data([])), ("values", shared),
        ] {
          writer.push(writer.string(key))
          writer.push(value)
        }
        return writer.makeDictionary(fromStackIndex: start)
      }
    }
    #expect(bytes.count < 2 << 20)
    let decoder = RecordDecoder(model: try SampleLibrary.model(), member: Self.member)
    let (inPlace, tree) = Self.bothWays(bytes, decoder)
    #expect(inPlace == tree)
    #expect(inPlace.contains("decoding would take more than"), "\(inPlace)")
  }

  /// A key twice in a column's dictionary: the tree keeps the last, and so does the chunk
  /// read in place (it leaves such a chunk to the tree).
  @Test func aKeyTwiceDecodesAsTheTreeDecodesIt() throws {
    let bytes = try Self.handMade(size: 3) { writer, shared in
      let start = writer.stackCount
      for (key, value) in [
        ("key", writer.string("cover")), ("type", writer.string("data")),
        ("lengths", writer.data([3])), ("values", writer.data([1, 2, 3, 4])),
        ("values", shared), ("present", writer.data([1])),
      ] {
        writer.push(writer.string(key))
        writer.push(value)
      }
      return [writer.makeDictionary(fromStackIndex: start)]
    }
    let decoder = RecordDecoder(model: try SampleLibrary.model(), member: Self.member)
    let (inPlace, tree) = Self.bothWays(bytes, decoder)
    #expect(inPlace == tree)
    #expect(inPlace.contains("cover=data([7, 7, 7])"), "\(inPlace)")
  }

  /// Two titles whose bytes together spell "é" (C3 A9), one byte each: the values as a whole
  /// are UTF-8, neither title is, and the chunk is refused; split where a character begins,
  /// they are read.
  @Test func aValueCutInsideACharacterIsNotUTF8EvenWhenTheWholeIs() throws {
    let decoder = RecordDecoder(model: try SampleLibrary.model(), member: Self.member)
    let cut = try Self.damaged(
      Self.column("title") {
        $0["values"] = .data([0xC3, 0xA9])
        $0["lengths"] = .data([1, 1])
      })
    #expect(throws: ArchiveFormatError.self) { try decoder.decodeChunk(cut) }
    let (inPlace, tree) = Self.bothWays(cut, decoder)
    #expect(inPlace == tree && inPlace.contains("not UTF-8"))
    let whole = try Self.damaged(
      Self.column("title") {
        $0["values"] = .data([0xC3, 0xA9, 0x61])
        $0["lengths"] = .data([2, 1])
      })
    let titles = try decoder.decodeChunk(whole).compactMap { $0.0.attributes["title"] }
    #expect(titles == [.string("é"), .string("a")])
  }

  /// 3,000 copies of `bytes`, a third cut short, the others with one to four bytes flipped.
  static func damagedCopies(of bytes: [UInt8], seed: UInt64) -> [[UInt8]] {
    var random = SplitMix64(seed: seed)
    return (0..<3_000).map { round in
      var damaged = bytes
      if round % 3 == 0 {
        damaged.removeLast(Int(random.next() % UInt64(bytes.count)))
      } else {
        for _ in 0...(round % 4) {
          let at = Int(random.next() % UInt64(bytes.count))
          damaged[at] ^= UInt8(truncatingIfNeeded: random.next() | 1)
        }
      }
      return damaged
    }
  }

  @Test func flippedBytesAndCutsNeverCrashTheReader() throws {
    let model = try SampleLibrary.model()
    let bytes = try Self.chunk()
    let decoder = RecordDecoder(model: model, member: Self.member)
    var refused = 0
    for damaged in Self.damagedCopies(of: bytes, seed: 15) {
      do { _ = try decoder.decodeChunk(damaged) } catch { refused += 1 }
      // Read in part, as a scan reads it: refused or decoded, never a crash.
      if let part = try? decoder.columnChunk(damaged, only: ["title", "author"]) {
        _ = try? decoder.decodeBatch(part, only: ["title", "author"])
      }
    }
    #expect(refused > 1_000)
  }
}
