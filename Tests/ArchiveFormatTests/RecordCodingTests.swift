import ArchiveFormat
import GraphVault
import ObjectModel
import ObjectStore
import PropertyList
import Testing

@Suite("Records in a chunk")
struct RecordCodingTests {
  static let book: ObjectRecord = {
    var record = ObjectRecord(
      entity: "GraphicNovel", primaryKey: 7, version: 3,
      attributes: [
        "title": .string("Dune"), "edition": .integer(2), "inPrint": .bool(false),
        "price": .decimal("12.50"), "rating": .double(4.5), "publishedAt": .date(86_400.25),
        "uniqueID": .uuid(Array(0..<16)), "cover": .data([1, 2, 3]),
        "isBlackAndWhite": .bool(true),
      ],
      toOne: ["author": ObjectReference(entity: "Author", primaryKey: 3)])
    record.extraColumns["ZAPPCOLUMN"] = .string("kept as stored")
    return record
  }()

  @Test func aRecordEncodedIntoAChunkDecodesToTheSameRecordAndLinks() throws {
    let model = try SampleLibrary.model()
    let encoder = RecordEncoder(model: model)
    var writer = BinaryPropertyListWriter()
    let tags = [JoinCursor.Pair(source: 7, destination: 2), .init(source: 7, destination: 5)]
    let first = encoder.encode(Self.book, manyToMany: [("tags", tags)], into: &writer)
    writer.push(first)
    let other = ObjectRecord(entity: "Tag", primaryKey: 2, attributes: ["name": .string("sf")])
    let second = encoder.encode(other, manyToMany: [], into: &writer)
    writer.push(second)
    let root = writer.makeArray(fromStackIndex: 0)
    let bytes = writer.serialized(root: root)

    let decoded = try RecordDecoder(model: model, member: "objects/x/000001.plist")
      .decodeChunk(bytes)
    #expect(decoded.count == 2)
    #expect(decoded[0].0 == Self.book)
    #expect(decoded[0].1["tags"]?.map(\.0) == [2, 5])
    #expect(decoded[1].0 == other)
    // The chunk is an ordinary binary plist of class-tagged dictionaries.
    let plain = try PropertyListValue(binaryPropertyList: bytes)
    #expect(plain.arrayValue?.first?["class"] == "GraphicNovel")
    #expect(plain.arrayValue?.first?["author@entity"] == "Author")
  }

  @Test func aValueOfTheWrongTypeNamesTheMemberAndTheRecord() throws {
    let model = try SampleLibrary.model()
    let record: PropertyListValue = ["class": "Book", "pk": 1, "opt": 1, "title": 42]
    let bytes = PropertyListValue.array([record]).binaryPropertyList()
    #expect {
      _ = try RecordDecoder(model: model, member: "objects/Book/000001.plist").decodeChunk(bytes)
    } throws: { error in
      let text = (error as? ArchiveFormatError)?.description ?? ""
      return text.hasPrefix("objects/Book/000001.plist: ") && text.contains("title")
    }
  }

  @Test func aChunkThatIsNotAPropertyListIsDamaged() throws {
    let model = try SampleLibrary.model()
    #expect(throws: ArchiveFormatError.self) {
      _ = try RecordDecoder(model: model, member: "objects/Book/000001.plist")
        .decodeChunk(Array("not a plist".utf8))
    }
  }
}

@Suite("Header and index")
struct HeaderAndIndexTests {
  @Test func aHeaderReadsBackWhatWasRecorded() throws {
    let model = try SampleLibrary.model()
    let made = ArchiveHeader(
      created: PropertyListDate(secondsSince1970: 1_800_000_000), compression: .xz,
      tool: "graphvault test", sourcePath: "/data/Library.sqlite", sourceUUID: "UUID-1",
      journalMode: "wal", model: model)
    let read = ArchiveHeader(
      reading: try PropertyListValue(binaryPropertyList: made.plist.binaryPropertyList()))
    #expect(read.formatVersion == ArchiveLayout.formatVersion)
    #expect(read.created == PropertyListDate(secondsSince1970: 1_800_000_000))
    #expect(read.sourcePath == "/data/Library.sqlite")
    #expect(read.sourceUUID == "UUID-1")
    #expect(read.journalMode == "wal")
    #expect(read.modelName == model.name)
    #expect(read.modelVersionName == model.versionName)
    #expect(read.plist["compression"] == "xz")
  }

  static let seen = [
    (path: "graphvault.plist", size: 10, sha256: "aa"),
    (path: "objects/Tag/000001.plist", size: 20, sha256: "bb"),
  ]

  static func index(sha: String = "bb", tags: Int = 2) -> PropertyListValue {
    [
      "members": [
        ["path": "graphvault.plist", "size": 10, "sha256": "aa"],
        ["path": "objects/Tag/000001.plist", "size": 20, "sha256": .string(sha)],
      ],
      "objects": ["Tag": .integer(Int64(tags))],
    ]
  }

  @Test func anIndexThatListsWhatWasReadPasses() throws {
    try ArchiveIndex.check(Self.index(), against: Self.seen, objects: ["Tag": 2], tables: [:])
  }

  @Test func aChecksumOrCountThatDiffersIsNamed() throws {
    #expect {
      try ArchiveIndex.check(
        Self.index(sha: "cc"), against: Self.seen, objects: ["Tag": 2], tables: [:])
    } throws: { error in
      (error as? ArchiveFormatError).map {
        $0.member == "objects/Tag/000001.plist" && $0.detail.contains("damaged")
      } == true
    }
    #expect {
      try ArchiveIndex.check(
        Self.index(tags: 3), against: Self.seen, objects: ["Tag": 2], tables: [:])
    } throws: { error in
      (error as? ArchiveFormatError)?.detail.contains("counts 3 objects of Tag") == true
    }
  }
}
