import Foundation
import ObjectModel
import ObjectStore
import SQLite
import TestSupport
import Testing

/// ``ValueBounds`` let a reader pass over a chunk whose values rule a predicate out: it must
/// never pass over one that holds an object the predicate chooses. Checked against SQLite
/// itself (``SelectionFilter/matches(_:)``, the selection's own query) on many small batches
/// of clustered values, as chunks of a store written in key order hold them.
@Suite("Bounds of a chunk's values")
struct ValueBoundsTests {
  /// `count` books whose values cluster around `base`, some missing; titles long enough to be
  /// cut, some with characters of several bytes where they are cut.
  static func books(_ count: Int, base: Int, random: inout SplitMix64) -> ObjectBatch {
    func next(_ bound: Int) -> Int { Int.random(in: 0..<bound, using: &random) }
    var titles: [(Int, String)] = []
    var ratings: [(Int, Double)] = []
    var editions: [(Int, Int64)] = []
    var dates: [(Int, Double)] = []
    for index in 0..<count {
      let number = base + next(40)
      let tails = [": a tale", String(repeating: "é", count: 30), " of ünïcödé ✓ and more"]
      let tail = next(2) == 0 ? "" : tails[next(tails.count)]
      if next(8) > 0 { titles.append((index, "Book \(number)\(tail)")) }
      if next(4) > 0 { ratings.append((index, Double(number % 50) / 10 + Double(next(3)))) }
      if next(3) > 0 { editions.append((index, Int64(number / 10 + next(3)))) }
      if next(2) == 0 { dates.append((index, Double(number) * 86_400 - 1e6)) }
    }
    return BookBatch.make(
      count: count, titles: titles, ratings: ratings, editions: editions, dates: dates)
  }

  static func bounds(_ batch: ObjectBatch) -> [String: ValueBounds] {
    var bounds: [String: ValueBounds] = [:]
    for attribute in batch.attributes { bounds[attribute.name] = ValueBounds(attribute) }
    return bounds
  }

  /// Predicates, and whether their bounds should rule some of the batches out.
  static let predicates: [(String, Bool)] = [
    ("title BEGINSWITH 'Book 12'", true),
    ("title MATCHES 'Book 1[0-2][0-9]:.*'", true),
    ("title LIKE 'Book 3?? of*'", true),
    ("title MATCHES 'Book [2-3][0-4][0-9] of [tuü].*'", true),
    ("title MATCHES 'Book 4[05-7]9.*'", true),
    ("title == 'Book 250'", true),
    ("title < 'Book 150' OR title > 'Book 98'", true),
    ("title BETWEEN {'Book 200', 'Book 210'}", true),
    ("title IN {'Book 17', 'Book 333: a tale'}", true),
    ("title MATCHES 'Book 1[0-9][0-9]\(String(repeating: "é", count: 25)).*'", true),
    ("title >= 'Book 199éééééééééééééééé'", true),
    ("rating > -1", false),
    ("rating <= 0.2 AND edition >= 30", true),
    ("edition == 12 OR edition BETWEEN {50, 51}", true),
    ("edition < 12.5", true),
    ("edition IN {7, 44}", true),
    ("publishedAt > CAST(30000000, 'NSDate')", true),
    ("NOT (edition BETWEEN {2, 4})", false),
    ("title != 'Book 1' AND edition == 15", true),
    ("title BEGINSWITH[c] 'book 12'", false),
    ("title == nil OR edition == 12", false),
    ("title ENDSWITH 'tale' AND rating < 0", true),
    ("title MATCHES '(Book 12).*'", false),
  ]

  @Test(arguments: predicates)
  func aBatchTheBoundsRuleOutHoldsNoObjectThePredicateChooses(
    predicate: String, rulesSomeOut: Bool
  ) throws {
    let model = try LibraryModel.make()
    let selection = FixtureCutter.Selection(entity: "Book", predicate: predicate)
    let filter = try #require(try SelectionFilter(selection, model: model))
    var random = SplitMix64(seed: 11)
    var (ruledOut, chosen) = (0, 0)
    for round in 0..<400 {
      let batch = Self.books(
        1 + round % 25, base: 100 + Int.random(in: 0..<400, using: &random), random: &random)
      let matches = try filter.matches(batch)
      chosen += matches.count
      if !filter.mayMatch(within: Self.bounds(batch)) {
        ruledOut += 1
        #expect(matches.isEmpty, "\(predicate): a batch ruled out holds \(matches.count) chosen")
      }
    }
    #expect(chosen > 0 || predicate.contains("rating < 0"), "\(predicate) chooses none")
    #expect((ruledOut > 0) == rulesSomeOut, "\(predicate): \(ruledOut) of 400 ruled out")
  }

  @Test func aTextsBoundsAreCutAtACharactersStartAndStillBoundEveryValue() throws {
    let texts = [
      "Book 1" + String(repeating: "é", count: 30), "Book 2" + String(repeating: "✓", count: 20),
      "Book 10", "", "Book 2",
    ]
    let attribute = BookBatch.texts(texts)
    guard case .texts(let low, let high)? = ValueBounds(attribute) else {
      Issue.record("no text bounds")
      return
    }
    #expect(low.isEmpty)
    #expect(high.count <= ValueBounds.textLimit && high.count > ValueBounds.textLimit - 3)
    #expect(String(validating: high, as: UTF8.self) != nil)
    #expect(Array(texts[1].utf8).starts(with: high))
    // Every value is within them as their readers take them.
    let bounds = try #require(ValueBounds(attribute))
    for text in texts {
      #expect(bounds.mayEqual(.text(text)), "\(text)")
      #expect(bounds.mayBegin(with: text), "\(text)")
    }
    #expect(!bounds.mayEqual(.text("Book 3")) && !bounds.mayBegin(with: "C"))
    #expect(bounds.mayBe(atLeast: .text(texts[1] + "z"), strictly: true))
  }

  @Test func numbersCompareAcrossIntegersAndRealsAndANaNLeavesNoBounds() throws {
    let integers = ValueBounds.integers(10...20)
    #expect(integers.mayEqual(.real(10.0)) && !integers.mayEqual(.real(20.5)))
    #expect(!integers.mayBe(atMost: .integer(10), strictly: true))
    #expect(integers.mayBe(atMost: .integer(10), strictly: false))
    // A double cannot tell 2^53 + 1 from 2^53: such a bound rules nothing out.
    let huge = ValueBounds.integers((1 << 53 + 1)...(1 << 53 + 1))
    #expect(huge.mayEqual(.real(9_007_199_254_740_992)))
    let reals = ValueBounds.reals(0.5...2.5)
    #expect(reals.mayEqual(.integer(1)) && !reals.mayEqual(.integer(3)))
    #expect(reals.mayEqual(.text("2")), "text against numbers rules nothing out")
    let nan = ObjectBatch.Attribute(
      name: "rating", type: .double, records: [0, 1], values: .reals([1, .nan]))
    #expect(ValueBounds(nan) == nil)
    let flags = ObjectBatch.Attribute(
      name: "inPrint", type: .boolean, records: [0], values: .booleans([true]))
    #expect(ValueBounds(flags) == nil)
  }
}
