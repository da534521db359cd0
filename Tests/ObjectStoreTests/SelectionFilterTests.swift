import Foundation
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// ``SelectionFilter`` decides, batch by batch, which objects a selection's predicate chooses:
/// checked against the selection's own query on a store holding the same objects
/// (``FixtureCutter/select(_:)``), and ``ObjectBatch/picking(rows:)`` against the records it
/// keeps.
@Suite("Choosing objects of a batch by a selection's predicate")
struct SelectionFilterTests {
  /// Books with every kind of value, some missing, the same for the same seed.
  static func books(_ count: Int, seed: UInt64) -> ObjectBatch {
    var random = SplitMix64(seed: seed)
    func next(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &random) }
    var titles: [(Int, String)] = []
    var ratings: [(Int, Double)] = []
    var editions: [(Int, Int64)] = []
    var inPrint: [(Int, Bool)] = []
    var dates: [(Int, Double)] = []
    for index in 0..<count {
      titles.append((index, ["b\(next(50))", "Book \(index)", "xylophone", "B-side"][next(4)]))
      if next(4) > 0 { ratings.append((index, Double(next(50)) / 10)) }
      if next(3) > 0 { editions.append((index, Int64(next(6)))) }
      inPrint.append((index, next(2) == 0))
      if next(2) == 0 { dates.append((index, Double(next(1_000_000_000)))) }
    }
    return BookBatch.make(
      count: count, titles: titles, ratings: ratings, editions: editions, inPrint: inPrint,
      dates: dates)
  }

  static let predicates = [
    "title BEGINSWITH 'b'",
    "rating > 2.5 AND inPrint == YES",
    "edition IN {1, 3}",
    "title CONTAINS[c] 'X' OR rating == nil",
    "NOT (edition BETWEEN {2, 4})",
    "title MATCHES 'b[0-9]+'",
    "publishedAt < CAST(500000000, 'NSDate') AND title LIKE[c] 'B*'",
  ]

  @Test(arguments: predicates)
  func theFilterChoosesWhatTheSelectionsQueryChoosesInAStore(predicate: String) throws {
    let model = try LibraryModel.make()
    let batch = Self.books(400, seed: 7)
    let directory = try TemporaryDirectory()
    let path = directory.path("books.sqlite").path
    try StoreCreator.create(at: path, model: model)
    let context = try ObjectContext(storePath: path, model: model)
    for (record, _) in batch.records {
      let book = try context.insert("Book", primaryKey: record.primaryKey)
      for (name, value) in record.attributes { try book.setValue(value, for: name) }
    }
    try context.save()
    let selection = FixtureCutter.Selection(entity: "Book", predicate: predicate)
    let store = try CoreDataStore(path: path)
    let expected = try FixtureCutter(store: store, model: model).select(selection).selected
    let filter = try #require(try SelectionFilter(selection, model: model))
    // Twice: the private table is emptied after each batch.
    for _ in 0..<2 {
      let chosen = try filter.matches(batch).map { batch.primaryKeys[$0] }
      #expect(chosen == expected.sorted())
    }
    #expect(!expected.isEmpty && expected.count < batch.count, "\(expected.count) chosen")
  }

  @Test func aPredicateThatReadsOtherObjectsIsNotDecidedByTheBatch() throws {
    let model = try LibraryModel.make()
    for predicate in ["author.alias == 'x'", "tags.@count > 1", "ANY tags.name == 'x'"] {
      let selection = FixtureCutter.Selection(entity: "Book", predicate: predicate)
      #expect(try SelectionFilter(selection, model: model) == nil, "\(predicate)")
    }
    #expect(try SelectionFilter(FixtureCutter.Selection(entity: "Book"), model: model) == nil)
  }

  @Test func pickingRowsKeepsTheirValuesLinksAndStoredColumns() throws {
    var batch = Self.books(60, seed: 3)
    batch.toOne = [
      ObjectBatch.ToOne(
        name: "author", records: [1, 4, 5, 30], keys: [7, 8, 9, 10],
        entities: ["Author", "Author", "Author", "Author"])
    ]
    batch.toMany = [
      ObjectBatch.ToMany(name: "tags", records: [4, 59], rows: [[(1, nil)], [(2, 3)]])
    ]
    batch.storedColumns = [
      ObjectBatch.StoredColumn(name: "ZEXTRA", records: [0, 5], values: .integers([11, 12]))
    ]
    let rows = [0, 4, 5, 31, 59]
    let picked = batch.picking(rows: rows)
    let all = batch.records
    #expect(picked.count == rows.count)
    for (position, (record, manyToMany)) in picked.records.enumerated() {
      let (expected, expectedLinks) = all[rows[position]]
      #expect(record == expected)
      #expect(manyToMany.mapValues { $0.map(\.0) } == expectedLinks.mapValues { $0.map(\.0) })
      #expect(manyToMany.mapValues { $0.map(\.1) } == expectedLinks.mapValues { $0.map(\.1) })
    }
  }
}
