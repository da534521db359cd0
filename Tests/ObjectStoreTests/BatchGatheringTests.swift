import ObjectModel
import ObjectStore
import Testing

/// Rows of several batches gathered into one (`ObjectBatch.gathering`), as a chain of archives
/// merges an entity's objects by key: each gathered object is the object picked, whatever
/// columns its batch has and wherever its values lie.
@Suite("Batches gathered from picks")
struct BatchGatheringTests {
  /// A batch of `count` books, keys from `firstKey`, whose values are chosen by `random`: each
  /// column kept by every object or by some only, an edition stored as text in some batches,
  /// to-one and many-to-many links, and a stored column outside the model.
  static func batch(count: Int, firstKey: Int64, random: inout SplitMix64) -> ObjectBatch {
    // Kept by every object of the batch about one time in three (a dense column).
    func some() -> [Int] {
      let dense = random.next() % 3 == 0
      return (0..<count).filter { _ in dense || random.next() % 3 != 0 }
    }
    var batch = ObjectBatch(
      entity: "Book", primaryKeys: (0..<Int64(count)).map { firstKey + $0 },
      versions: (0..<count).map { _ in Int64(random.next() % 5) })
    let titled = some()
    var bytes: [UInt8] = []
    var ranges: [Range<Int>] = []
    for record in titled {
      let start = bytes.count
      bytes += Array("Book \(firstKey + Int64(record)) · \(random.next() % 1000)".utf8)
      ranges.append(start..<bytes.count)
    }
    let rated = some()
    let edition = some()
    let editionAsText = random.next() % 2 == 0
    let editions: ObjectBatch.Values =
      editionAsText
      ? .texts(
        ObjectBatch.Bytes(
          copying: Array(String(repeating: "7", count: edition.count).utf8),
          ranges: edition.indices.map { $0..<$0 + 1 }))
      : .integers(edition.map { Int64($0) * 3 })
    batch.attributes = [
      ObjectBatch.Attribute(
        name: "title", type: .string, records: titled,
        values: .texts(ObjectBatch.Bytes(copying: bytes, ranges: ranges))),
      ObjectBatch.Attribute(
        name: "edition", type: .integer32, records: edition, values: editions),
      ObjectBatch.Attribute(
        name: "rating", type: .double, records: rated,
        values: .reals(rated.map { Double($0) / 4 })),
    ].shuffled(using: &random)
    let authored = some()
    batch.toOne = [
      ObjectBatch.ToOne(
        name: "author", records: authored, keys: authored.map { Int64($0 % 7 + 1) },
        entities: authored.map { _ in "Author" })
    ]
    let tagged = some()
    batch.toMany = [
      ObjectBatch.ToMany(
        name: "tags", records: tagged,
        rows: tagged.map { record in (0..<record % 3 + 1).map { (Int64($0 + 1), nil) } })
    ]
    if random.next() % 2 == 0 {
      let kept = some()
      batch.storedColumns = [
        ObjectBatch.StoredColumn(
          name: "ZLEGACY", records: kept, values: .integers(kept.map { Int64($0) }))
      ]
    }
    return batch
  }

  /// A batch's objects as records, each with its many-to-many rows spelled out.
  static func described(_ batch: ObjectBatch) -> [(ObjectRecord, [String])] {
    batch.records.map { record, links in
      (record, links.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.map(\.0))" })
    }
  }

  @Test(arguments: 1...12)
  func eachGatheredObjectIsTheObjectPickedWithEveryValueAndLink(seed: Int) {
    var random = SplitMix64(seed: UInt64(seed))
    let sources = (0..<3).map { index in
      Self.batch(count: 20 + index * 7, firstKey: Int64(index) * 1_000 + 1, random: &random)
    }
    // Runs of rows from one batch, then another, some rows left out: a merge by key.
    var picks: [(source: Int, row: Int)] = []
    var next = [0, 0, 0]
    while let source = (0..<3).filter({ next[$0] < sources[$0].count }).randomElement(
      using: &random)
    {
      for _ in 0..<(random.next() % 5 + 1) where next[source] < sources[source].count {
        if random.next() % 4 != 0 { picks.append((source, next[source])) }
        next[source] += 1
      }
    }
    let gathered = ObjectBatch.gathering(sources, picks)
    let expected = picks.map { Self.described(sources[$0.source])[$0.row] }
    let got = Self.described(gathered)
    #expect(got.map(\.0) == expected.map(\.0))
    #expect(got.map(\.1) == expected.map(\.1))
    #expect(gathered.count == picks.count)
    // An edition kept as text in one batch and as integers in another stays two columns,
    // each in the order of its objects.
    #expect(gathered.attributes.allSatisfy { $0.records == $0.records.sorted() })
  }

  @Test func columnsComeInTheOrderThePicksFirstMeetThem() {
    var first = ObjectBatch(entity: "Book", primaryKeys: [1, 2], versions: [1, 1])
    first.attributes = [
      ObjectBatch.Attribute(name: "rating", type: .double, records: [1], values: .reals([2])),
      ObjectBatch.Attribute(
        name: "edition", type: .integer32, records: [0], values: .integers([3])),
    ]
    var second = ObjectBatch(entity: "Book", primaryKeys: [3], versions: [1])
    second.attributes = [
      ObjectBatch.Attribute(
        name: "title", type: .string, records: [0],
        values: .texts(ObjectBatch.Bytes(copying: Array("x".utf8), ranges: [0..<1]))),
      ObjectBatch.Attribute(
        name: "edition", type: .integer32, records: [0], values: .integers([4])),
    ]
    // The second batch's object first: its title and edition, then the first's rating.
    let gathered = ObjectBatch.gathering([first, second], [(1, 0), (0, 0), (0, 1)])
    #expect(gathered.attributes.map(\.name) == ["title", "edition", "rating"])
    #expect(gathered.primaryKeys == [3, 1, 2])
    #expect(gathered.attributes[1].records == [0, 1])
    #expect(gathered.attributes[1].values.integer(at: 1) == 3)
  }
}
