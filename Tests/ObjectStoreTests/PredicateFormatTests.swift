import Foundation
import ObjectModel
import SQLite
import TestSupport
import Testing

@testable import ObjectStore

/// `NSPredicate`-format predicates on the sample store, each checked three ways: the fetch
/// (SQL narrowing, memory deciding), the SQL alone and the memory evaluator alone, against SQL
/// written here by hand over the store's tables.
@Suite("Predicates in NSPredicate format", .serialized)
struct PredicateFormatTests {
  /// A sample store (the Library model, 600 objects) made by the built tool, with the model
  /// it carries; made once.
  static let store: (path: String, model: ObjectModel) = {
    let directory = try! TemporaryDirectory.forTheRun("graphvault-test")
    let path = directory.path("Library.sqlite").path
    let made = try! BuiltTool.run(["sample", path, "--objects", "600", "-q"])
    precondition(made.status == 0, made.stderr)
    let model = try! CoreDataStore(path: path).cachedModel()!
    return (path, model)
  }()

  /// (entity, predicate, SQL selecting the expected Z_PKs).
  static let cases: [(String, String, String)] = [
    ("Book", "sales == 506566", "SELECT Z_PK FROM ZBOOK WHERE ZSALES = 506566"),
    ("Book", "sales != 506566", "SELECT Z_PK FROM ZBOOK WHERE ZSALES IS NOT 506566"),
    ("Book", "sales < 478222", "SELECT Z_PK FROM ZBOOK WHERE ZSALES < 478222"),
    ("Book", "sales <= 478222", "SELECT Z_PK FROM ZBOOK WHERE ZSALES <= 478222"),
    ("Book", "sales > 600000", "SELECT Z_PK FROM ZBOOK WHERE ZSALES > 600000"),
    (
      "Book", "sales >= 200000 AND sales =< 400000",
      "SELECT Z_PK FROM ZBOOK WHERE ZSALES BETWEEN 200000 AND 400000"
    ),
    ("Book", "rating BETWEEN {1, 2.5}", "SELECT Z_PK FROM ZBOOK WHERE ZRATING BETWEEN 1 AND 2.5"),
    (
      "Book", "rating IN {0.1, 0.3, 4.9}", "SELECT Z_PK FROM ZBOOK WHERE ZRATING IN (0.1, 0.3, 4.9)"
    ),
    (
      "Book", "NOT (rating IN {0.1, 0.3, 4.9})",
      "SELECT Z_PK FROM ZBOOK WHERE ZRATING NOT IN (0.1, 0.3, 4.9)"
    ),
    ("Book", "2 > rating", "SELECT Z_PK FROM ZBOOK WHERE ZRATING < 2"),
    (
      "Book", "sales > 500000 OR rating < 1",
      "SELECT Z_PK FROM ZBOOK WHERE ZSALES > 500000 OR ZRATING < 1"
    ),
    ("Book", "price >= 5000.5", "SELECT Z_PK FROM ZBOOK WHERE ZPRICE >= 5000.5"),
    ("Book", "weight < 1.2", "SELECT Z_PK FROM ZBOOK WHERE ZWEIGHT < 1.2"),
    (
      "Book", "inPrint == YES AND rating < 1",
      "SELECT Z_PK FROM ZBOOK WHERE ZINPRINT = 1 AND ZRATING < 1"
    ),
    ("Book", "inPrint == NO", "SELECT Z_PK FROM ZBOOK WHERE ZINPRINT = 0"),
    ("Book", "cover == nil", "SELECT Z_PK FROM ZBOOK WHERE ZCOVER IS NULL"),
    ("Book", "cover != NULL", "SELECT Z_PK FROM ZBOOK WHERE ZCOVER IS NOT NULL"),
    (
      "Book", "publishedAt > CAST(300000000, \"NSDate\")",
      "SELECT Z_PK FROM ZBOOK WHERE ZPUBLISHEDAT > 300000000"
    ),
    (
      "Book", "publishedAt < CAST(\"2010-06-01T00:00:00Z\", \"NSDate\")",
      "SELECT Z_PK FROM ZBOOK WHERE ZPUBLISHEDAT < 297043200"
    ),
    (
      "Book", "publishedAt >= '2012-01-01'",
      "SELECT Z_PK FROM ZBOOK WHERE ZPUBLISHEDAT >= 347155200"
    ),
    (
      "Book", "title BEGINSWITH 'Book 1'",
      "SELECT Z_PK FROM ZBOOK WHERE substr(ZTITLE, 1, 6) = 'Book 1'"
    ),
    (
      "Book", "title ENDSWITH 'orbit'",
      "SELECT Z_PK FROM ZBOOK WHERE ZTITLE LIKE '%orbit' AND ZTITLE GLOB '*orbit'"
    ),
    ("Book", "title CONTAINS 'garden'", "SELECT Z_PK FROM ZBOOK WHERE instr(ZTITLE, 'garden') > 0"),
    (
      "Book", "title CONTAINS[c] 'GARDEN'",
      "SELECT Z_PK FROM ZBOOK WHERE instr(lower(ZTITLE), 'garden') > 0"
    ),
    (
      "Book", "title BEGINSWITH[cd] 'böok 2'",
      "SELECT Z_PK FROM ZBOOK WHERE lower(ZTITLE) LIKE 'book 2%'"
    ),
    ("Book", "title LIKE 'Book ?: *'", "SELECT Z_PK FROM ZBOOK WHERE ZTITLE GLOB 'Book ?: *'"),
    (
      "Book", "title LIKE[c] 'book 1*'", "SELECT Z_PK FROM ZBOOK WHERE lower(ZTITLE) GLOB 'book 1*'"
    ),
    (
      "Book", "title MATCHES 'Book [0-9]+: orbit .*'",
      "SELECT Z_PK FROM ZBOOK WHERE ZTITLE GLOB 'Book [0-9]*: orbit *' AND ZTITLE NOT GLOB 'Book *[^0-9]*: orbit *'"
    ),
    (
      "Book", "title MATCHES 'Book 1[0-9]: .*|Book 2: .*'",
      "SELECT Z_PK FROM ZBOOK WHERE ZTITLE GLOB 'Book 1[0-9]: *' OR ZTITLE GLOB 'Book 2: *'"
    ),
    (
      "Book", "title MATCHES 'Books? 2: .*'", "SELECT Z_PK FROM ZBOOK WHERE ZTITLE GLOB 'Book 2: *'"
    ),
    (
      "Book", "title ==[c] 'BOOK 2: ORBIT SIGNAL GARDEN'",
      "SELECT Z_PK FROM ZBOOK WHERE lower(ZTITLE) = 'book 2: orbit signal garden'"
    ),
    (
      "Book", "title IN {'Book 1: orbit signal orbit', 'nope'}",
      "SELECT Z_PK FROM ZBOOK WHERE ZTITLE IN ('Book 1: orbit signal orbit')"
    ),
    (
      "Book", "author.alias == 'author-3'",
      "SELECT b.Z_PK FROM ZBOOK b JOIN ZWRITER w ON w.Z_PK = b.ZAUTHOR WHERE w.ZALIAS = 'author-3'"
    ),
    (
      "Book", "author.alias BEGINSWITH 'author-1'",
      "SELECT b.Z_PK FROM ZBOOK b JOIN ZWRITER w ON w.Z_PK = b.ZAUTHOR WHERE w.ZALIAS LIKE 'author-1%'"
    ),
    ("Book", "author == nil", "SELECT Z_PK FROM ZBOOK WHERE ZAUTHOR IS NULL"),
    (
      "Book", "author != nil AND author.alias != 'author-1'",
      "SELECT b.Z_PK FROM ZBOOK b JOIN ZWRITER w ON w.Z_PK = b.ZAUTHOR WHERE w.ZALIAS <> 'author-1'"
    ),
    (
      "Book", "pages.@count > 2",
      "SELECT b.Z_PK FROM ZBOOK b WHERE (SELECT count(*) FROM ZPAGE p WHERE p.ZBOOK = b.Z_PK) > 2"
    ),
    (
      "Book", "pages.@count == 0",
      "SELECT b.Z_PK FROM ZBOOK b WHERE NOT EXISTS (SELECT 1 FROM ZPAGE p WHERE p.ZBOOK = b.Z_PK)"
    ),
    ("Book", "ANY pages.number > 2", "SELECT DISTINCT p.ZBOOK FROM ZPAGE p WHERE p.ZNUMBER > 2"),
    ("Book", "SOME pages.number == 3", "SELECT DISTINCT p.ZBOOK FROM ZPAGE p WHERE p.ZNUMBER = 3"),
    (
      "Book", "ALL pages.number <= 2",
      "SELECT b.Z_PK FROM ZBOOK b WHERE NOT EXISTS (SELECT 1 FROM ZPAGE p WHERE p.ZBOOK = b.Z_PK AND NOT p.ZNUMBER <= 2)"
    ),
    (
      "Book", "NONE pages.text CONTAINS 'harbor'",
      "SELECT b.Z_PK FROM ZBOOK b WHERE NOT EXISTS (SELECT 1 FROM ZPAGE p WHERE p.ZBOOK = b.Z_PK AND instr(p.ZTEXT, 'harbor') > 0)"
    ),
    (
      "Book", "ANY tags.name BEGINSWITH 'sci'",
      "SELECT DISTINCT j.Z_1BOOKS FROM Z_1TAGS j JOIN ZTAG t ON t.Z_PK = j.Z_4TAGS WHERE t.ZNAME LIKE 'sci%'"
    ),
    (
      "Book", "tags.@count >= 2",
      "SELECT b.Z_PK FROM ZBOOK b WHERE (SELECT count(*) FROM Z_1TAGS j WHERE j.Z_1BOOKS = b.Z_PK) >= 2"
    ),
    (
      "Tag", "ANY books.sales < 15000",
      "SELECT DISTINCT j.Z_4TAGS FROM Z_1TAGS j JOIN ZBOOK b ON b.Z_PK = j.Z_1BOOKS WHERE b.ZSALES < 15000"
    ),
    (
      "Writer", "books.@count > 15",
      "SELECT w.Z_PK FROM ZWRITER w WHERE (SELECT count(*) FROM ZBOOK b WHERE b.ZAUTHOR = w.Z_PK) > 15"
    ),
    (
      "Page", "book.author.alias ENDSWITH '-2'",
      "SELECT p.Z_PK FROM ZPAGE p JOIN ZBOOK b ON b.Z_PK = p.ZBOOK JOIN ZWRITER w ON w.Z_PK = b.ZAUTHOR WHERE w.ZALIAS LIKE '%-2'"
    ),
    (
      "Page", "book.author.alias == nil",
      "SELECT p.Z_PK FROM ZPAGE p LEFT JOIN ZBOOK b ON b.Z_PK = p.ZBOOK LEFT JOIN ZWRITER w ON w.Z_PK = b.ZAUTHOR WHERE w.ZALIAS IS NULL"
    ),
    (
      "GraphicNovel", "isBlackAndWhite == YES",
      "SELECT Z_PK FROM ZBOOK WHERE Z_ENT = 2 AND ZISBLACKANDWHITE = 1"
    ),
    ("Book", "TRUEPREDICATE", "SELECT Z_PK FROM ZBOOK"),
    (
      "Book", "FALSEPREDICATE OR (rating < 1 && !(inPrint == NO))",
      "SELECT Z_PK FROM ZBOOK WHERE ZRATING < 1"
    ),
    (
      "Book", "uniqueID == nil OR uniqueID == '6BA7B810-9DAD-11D1-80B4-00C04FD430C8'",
      "SELECT Z_PK FROM ZBOOK WHERE ZUNIQUEID IS NULL"
    ),
  ]

  static func expected(_ sql: String) throws -> Set<Int64> {
    let db = try Database(path: store.path, mode: .readOnly)
    return Set(try db.prepare(sql).allRows().compactMap { $0[0].integerValue })
  }

  @Test(arguments: 0..<cases.count)
  func aPredicateSelectsWhatItsSQLSelects(index: Int) throws {
    let (entity, text, sql) = Self.cases[index]
    let expected = try Self.expected(sql)
    let context = try ObjectContext(storePath: Self.store.path, model: Self.store.model)
    let fetched = Set(
      try context.fetch(FetchRequest(entity: entity, predicate: .format(text))).map(\.primaryKey))
    #expect(fetched == expected, "\(text): \(fetched.count) fetched, \(expected.count) expected")
    // The SQL alone and the memory evaluator alone agree with it.
    let resolved = try context.resolve(
      Predicate.Format(text: text, arguments: [], variables: [:]), for: entity)
    let table = try #require(context.layout.table(for: entity))
    var translator = PredicateSQL(layout: context.layout)
    var bindings: [SQLiteValue] = []
    let condition = try translator.condition(resolved, alias: table.name, bindings: &bindings)
    let numbers = context.model.hierarchy(from: entity).compactMap {
      context.layout.entityNumbers[$0.name]
    }
    let statement = try context.store.database.prepare(
      "SELECT Z_PK FROM \(table.name) WHERE Z_ENT IN (\(numbers.map(String.init).joined(separator: ", "))) AND (\(condition))"
    )
    try statement.bind(bindings)
    let bySQL = Set(try statement.allRows().compactMap { $0[0].integerValue })
    #expect(bySQL == expected, "\(text): SQL alone")
    let everything = try context.fetch(FetchRequest(entity: entity))
    let memory = PredicateMemory(context: context)
    let inMemory = Set(try everything.filter { try memory.matches(resolved, $0) }.map(\.primaryKey))
    #expect(inMemory == expected, "\(text): memory alone")
    // Neither too few nor all: the case tells something (TRUEPREDICATE aside).
    if !text.hasPrefix("TRUE") { #expect(expected.count < everything.count || expected.isEmpty) }
  }

  @Test func theCasesSelectSomethingAndCoverEveryOperatorAndModifier() throws {
    var nonEmpty = 0
    for (_, _, sql) in Self.cases where !(try Self.expected(sql)).isEmpty { nonEmpty += 1 }
    #expect(nonEmpty >= Self.cases.count - 5)
    let all = Self.cases.map(\.1).joined(separator: " ")
    for word in [
      "==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES",
      " IN ", "BETWEEN", "[c]", "[cd]", "ANY", "ALL", "NONE", "@count", "NOT", "AND", "OR", "nil",
      "YES", "NO", "CAST",
    ] {
      #expect(all.contains(word), "no case uses \(word)")
    }
  }

  @Test func likeAndMatchesTakeTheWholeStringAndNotOneWithALineBreakAfterIt() throws {
    for (source, text) in [(StringPattern.Source.regex("b[0-9]"), "b1"), (.like("b?"), "b1")] {
      let pattern = try StringPattern(source, options: [])
      #expect(pattern.matches(text))
      #expect(!pattern.matches(text + "\n"), "\(source)")
      #expect(!pattern.matches("a" + text))
    }
  }

  @Test func sqliteRulesOutRowsByAGlobThatEveryMatchOfThePatternMatches() throws {
    let cases: [(PredicateSyntax.Operator, String, String?)] = [
      (.beginsWith, "a*b[c?", "a[*]b[[]c[?]*"),
      (.endsWith, "-2", "*-2"),
      (.like, "Book ?: *", "Book ?: *"),
      (.like, "a\\*b*", "a[*]b*"),
      (.like, "*", nil),
      (.matches, "Book 1[0-2][0-9][0-9]:.*", "Book 1[0-2][0-9][0-9]:*"),
      (.matches, "Book [0-9]+", "Book [0-9]*"),
      (.matches, "Books? 2", "Book* 2"),
      (.matches, "^a.c$", "a?c"),
      (.matches, "x[^]a]y", "x[^]a]y"),
      (.matches, "ab{0,2}c", "a*"),
      (.matches, "ab+?c", "ab*c"),
      (.matches, "a[[:alpha:]]b", "a*"),
      (.matches, "a|b", nil),
      (.matches, "(?i)book", nil),
      (.matches, "\\d+", nil),
      (.contains, "garden", nil),
    ]
    for (op, operand, glob) in cases {
      #expect(GlobFilter.pattern(op, operand) == glob, "\(op) \(operand)")
    }
    // Against ICU's regular expressions: every string a pattern matches, SQLite's GLOB of the
    // filter matches too. Random patterns of literals, dots, classes, quantifiers and groups
    // over a small alphabet, and random strings over it.
    let database = try Database(path: ":memory:")
    let statement = try database.prepare("SELECT ? GLOB ?")
    var random = SplitMix64(seed: 24)
    let atoms = ["a", "b", "c", "1", ".", "[ab]", "[^a]", "[0-9]", "[]a]", "(ab)", "\\d", "-", "]"]
    let quantifiers = ["", "", "", "*", "+", "?", "{1,2}", "*?", "++"]
    var checked = 0
    for _ in 0..<1500 {
      var pattern = ""
      for _ in 0..<Int.random(in: 1...5, using: &random) {
        pattern += atoms.randomElement(using: &random)! + quantifiers.randomElement(using: &random)!
      }
      guard let glob = GlobFilter.pattern(.matches, pattern),
        let exact = try? StringPattern(.regex(pattern), options: [])
      else { continue }
      for _ in 0..<40 {
        let subject = String(
          (0..<Int.random(in: 0...6, using: &random)).map { _ in
            "abc1-]x\n".randomElement(using: &random)!
          })
        guard exact.matches(subject) else { continue }
        checked += 1
        statement.reset()
        try statement.bind([.text(subject), .text(glob)])
        #expect(
          try statement.allRows().first?[0].integerValue == 1,
          "\(subject.debugDescription) matches \(pattern) but not GLOB \(glob)")
      }
    }
    #expect(checked > 1000)
  }

  @Test func theReadmesExampleRunsAndAgreesWithItsSQL() throws {
    let context = try ObjectContext(storePath: Self.store.path, model: Self.store.model)
    let books = try context.fetch(
      FetchRequest(
        entity: "Book",
        predicate:
          "ANY tags.name BEGINSWITH[c] 'sci-fi' AND publishedAt > '2012-01-01' AND NOT (title CONTAINS 'draft')",
        sortDescriptors: [SortDescriptor("title")]))
    let expected = try Self.expected(
      "SELECT DISTINCT b.Z_PK FROM ZBOOK b JOIN Z_1TAGS j ON j.Z_1BOOKS = b.Z_PK JOIN ZTAG t ON t.Z_PK = j.Z_4TAGS WHERE lower(t.ZNAME) LIKE 'sci-fi%' AND b.ZPUBLISHEDAT > 347155200 AND instr(b.ZTITLE, 'draft') = 0"
    )
    #expect(!expected.isEmpty)
    #expect(Set(books.map(\.primaryKey)) == expected)
  }

  @Test func pendingChangesAreSeenByAFormatPredicate() throws {
    let context = try ObjectContext(storePath: Self.store.path, model: Self.store.model)
    let book = try context.insert("Book")
    try book.setValue(.string("Zzz pending"), for: "title")
    let found = try context.fetch(FetchRequest(entity: "Book", predicate: "title BEGINSWITH 'Zzz'"))
    #expect(found.map(\.reference) == [book.reference])
    context.rollback()
  }

  /// (predicate, the start of the message, its position).
  static let bad: [(String, String, Int)] = [
    ("title ==", "a value (a string, a number, nil, YES, NO, CAST(…)) expected, found the end", 8),
    ("title = 'open", "a string is not closed", 8),
    ("(edition == 1", ") expected, found the end", 13),
    ("edition == 1 title", "AND, OR or the end expected, found title", 13),
    ("nosuch == 1", "Book has no key nosuch", 0),
    ("author.nosuch == 1", "Writer has no key nosuch", 0),
    ("edition BEGINSWITH 'a'", "BEGINSWITH needs a string; Book.edition is Integer 32", 8),
    ("title > 3", "the number 3 does not fit Book.title, which is String", 8),
    ("inPrint < YES", "< does not order Boolean values", 8),
    ("edition ==[c] 3", "[c] and [d] apply to string comparisons", 8),
    ("pages == nil", "Book.pages is a to-many relationship", 0),
    ("title.@count > 1", "@count needs a to-many relationship", 0),
    ("ANY title == 'x'", "ANY needs a key path through a to-many relationship", 0),
    ("edition BETWEEN {1}", "BETWEEN takes two values", 16),
    ("edition IN 3", "IN takes a list", 11),
    ("title MATCHES '('", "not a valid pattern", 14),
    ("edition < nil", "nil can only be compared with == or !=", 10),
    ("publishedAt > CAST('yesterday', \"NSDate\")", "\"yesterday\" is not an ISO 8601 date", 19),
    ("title == 1 ~ 2", "unexpected character \"~\"", 11),
    (
      "author == 'x'", "Book.author is a relationship: it can only be compared with objects or nil",
      7
    ),
    ("author.age > 40", "Writer has no key age", 0),
  ]

  @Test(arguments: 0..<bad.count)
  func aBadPredicateNamesWhatIsWrongAndWhere(index: Int) throws {
    let (text, message, position) = Self.bad[index]
    let context = try ObjectContext(storePath: Self.store.path, model: Self.store.model)
    do {
      _ = try context.fetch(FetchRequest(entity: "Book", predicate: .format(text)))
      Issue.record("\(text) was accepted")
    } catch {
      #expect(error.kind == .invalidPredicate)
      let cause = try #require(error.underlying as? PredicateFormatError)
      #expect(cause.message.hasPrefix(message), "\(text): \(cause.message)")
      #expect(cause.position == position, "\(text): at \(cause.position), \(cause.message)")
    }
  }
}
