import ObjectStore

/// A batch of books of ``LibraryModel``, from the values each object has (by position), for
/// the tests that check what SQLite chooses of a batch.
enum BookBatch {
  static func make(
    count: Int, titles: [(Int, String)], ratings: [(Int, Double)], editions: [(Int, Int64)],
    inPrint: [(Int, Bool)] = [], dates: [(Int, Double)]
  ) -> ObjectBatch {
    var bytes: [UInt8] = []
    var ranges: [Range<Int>] = []
    for (_, title) in titles {
      let start = bytes.count
      bytes += Array(title.utf8)
      ranges.append(start..<bytes.count)
    }
    var batch = ObjectBatch(
      entity: "Book", primaryKeys: (1...count).map(Int64.init),
      versions: Array(repeating: 1, count: count))
    batch.attributes = [
      ObjectBatch.Attribute(
        name: "title", type: .string, records: titles.map(\.0),
        values: .texts(ObjectBatch.Bytes(copying: bytes, ranges: ranges))),
      ObjectBatch.Attribute(
        name: "rating", type: .double, records: ratings.map(\.0), values: .reals(ratings.map(\.1))),
      ObjectBatch.Attribute(
        name: "edition", type: .integer32, records: editions.map(\.0),
        values: .integers(editions.map(\.1))),
      ObjectBatch.Attribute(
        name: "inPrint", type: .boolean, records: inPrint.map(\.0),
        values: .booleans(inPrint.map(\.1))),
      ObjectBatch.Attribute(
        name: "publishedAt", type: .date, records: dates.map(\.0), values: .reals(dates.map(\.1))),
    ]
    return batch
  }

  /// The titles `texts`, one object each.
  static func texts(_ texts: [String]) -> ObjectBatch.Attribute {
    make(
      count: texts.count, titles: Array(texts.enumerated()), ratings: [], editions: [], dates: []
    ).attributes[0]
  }
}
