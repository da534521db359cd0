import Foundation
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// Fetches done by SQLite, checked against SQL written by hand and run by Python's `sqlite3`:
/// sorts on attributes and to-one key paths (nil values, ties, strings in Core Data's binary
/// order), limits and offsets, counts, and unsaved changes merged as if they were saved.
@Suite(
  "Fetching in SQL", .enabled(if: Subprocess.isInstalled("python3"), "needs python3's sqlite3"))
struct FetchingTests {
  let directory: TemporaryDirectory
  let path: String
  let model: ObjectModel

  /// Titles with ties, case and accents, so that binary order shows.
  static let titles = [
    "apple", "Apple", "Émile", "emile", "Zebra", "zebra", "ß", "Ärger", "dune", "Dune", "dune",
    "Watchmen", "a", "", "Zz", "éa",
  ]

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Library.sqlite").path
    model = try LibraryModel.make()
    try StoreCreator.create(at: path, model: model)
    let context = try ObjectContext(storePath: path, model: model)
    var authors: [ManagedObject] = []
    for (index, alias) in ["mary", "Mary", "ann", "Zoë"].enumerated() {
      let author = try context.insert("Author")
      try author.setValue(.string(alias), for: "alias")
      try author.setValue(index == 2 ? nil : .integer(Int64(30 + index % 2)), for: "age")
      authors.append(author)
    }
    for index in 0..<64 {
      let book = try context.insert(index % 5 == 0 ? "GraphicNovel" : "Book")
      try book.setValue(.string(Self.titles[index % Self.titles.count]), for: "title")
      try book.setValue(index % 7 == 0 ? nil : .double(Double(index % 4) + 0.5), for: "rating")
      try book.setValue(.integer(Int64(index % 3)), for: "edition")
      if index % 6 != 0 { try book.setObject(authors[index % authors.count], for: "author") }
    }
    try context.save()
  }

  /// The primary keys a hand-written query gives.
  func keys(_ sql: String) throws -> [Int64] {
    try sqlRows(path, sql).map { Int64($0)! }
  }

  static let books =
    "b.Z_ENT IN (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME IN ('Book', 'GraphicNovel'))"

  @Test(arguments: [
    ([Sort("title")], "b.ZTITLE"),
    ([Sort("title", ascending: false)], "b.ZTITLE DESC"),
    ([Sort("rating", ascending: false), Sort("title")], "b.ZRATING DESC, b.ZTITLE"),
    ([Sort("author.alias"), Sort("title", ascending: false)], "w.ZALIAS, b.ZTITLE DESC"),
    ([Sort("author.alias", ascending: false)], "w.ZALIAS DESC"),
    ([Sort("edition"), Sort("author.alias", ascending: false)], "b.ZEDITION, w.ZALIAS DESC"),
  ])
  func sortsOnAttributesAndToOneKeyPathsEqualTheOrderSQLiteGives(
    descriptors: [Sort], order: String
  ) throws {
    let context = try ObjectContext(storePath: path, model: model)
    let fetched = try context.fetch(FetchRequest(entity: "Book", sortDescriptors: descriptors))
    let expected = try keys(
      "SELECT b.Z_PK FROM ZBOOK b LEFT JOIN ZWRITER w ON w.Z_PK = b.ZAUTHOR WHERE \(Self.books) ORDER BY \(order), b.Z_PK"
    )
    #expect(expected.count == 64)
    #expect(fetched.map(\.primaryKey) == expected)
  }

  @Test(arguments: [(0, 0), (5, 0), (5, 10), (0, 60), (3, 70), (100, 0)])
  func limitsAndOffsetsEqualSQLs(limit: Int, offset: Int) throws {
    let context = try ObjectContext(storePath: path, model: model)
    let request = FetchRequest(
      entity: "Book", predicate: "rating >= 1.5 OR title BEGINSWITH 'd'",
      sortDescriptors: [Sort("author.alias"), Sort("title")],
      fetchLimit: limit, fetchOffset: offset)
    let expected = try keys(
      """
      SELECT b.Z_PK FROM ZBOOK b LEFT JOIN ZWRITER w ON w.Z_PK = b.ZAUTHOR
      WHERE \(Self.books) AND (b.ZRATING >= 1.5 OR substr(b.ZTITLE, 1, 1) = 'd')
      ORDER BY w.ZALIAS, b.ZTITLE, b.Z_PK LIMIT \(limit == 0 ? -1 : limit) OFFSET \(offset)
      """)
    #expect(try context.fetch(request).map(\.primaryKey) == expected)
    #expect(try context.count(for: request) == expected.count)
  }

  /// The changes made in memory, then the same fetches after saving them: equal answers.
  @Test(arguments: [0, 4, 9])
  func unsavedChangesAnswerAsIfTheyWereSaved(limit: Int) throws {
    let context = try ObjectContext(storePath: path, model: model)
    let requests = [
      FetchRequest(entity: "Book", sortDescriptors: [Sort("title")], fetchLimit: limit),
      FetchRequest(
        entity: "Book", predicate: "rating > 1",
        sortDescriptors: [Sort("author.alias", ascending: false)], fetchLimit: limit,
        fetchOffset: 2),
      FetchRequest(
        entity: "Book", predicate: "title CONTAINS[c] 'e'",
        sortDescriptors: [Sort("rating"), Sort("title")], fetchLimit: limit,
        fetchOffset: 1),
      FetchRequest(entity: "GraphicNovel", fetchLimit: limit),
    ]
    let all = try context.fetch(FetchRequest(entity: "Book"))
    try all[3].setValue(.string("Aaaa"), for: "title")
    try all[10].setValue(.double(9), for: "rating")
    try all[11].setValue(nil, for: "rating")
    try context.delete(all[12])
    try context.delete(all[0])
    let ann = try #require(
      try context.fetch(FetchRequest(entity: "Author", predicate: "alias == 'ann'")).first)
    try all[20].setObject(ann, for: "author")
    for title in ["zz new", "Émile", "Aardvark"] {
      let book = try context.insert(title == "Émile" ? "GraphicNovel" : "Book")
      try book.setValue(.string(title), for: "title")
      try book.setValue(.double(2.5), for: "rating")
    }
    let unsaved = try requests.map { try context.fetch($0).map(\.primaryKey) }
    let counted = try requests.map { try context.count(for: $0) }
    try context.save()
    let saved = try requests.map {
      try ObjectContext(storePath: path, model: model).fetch($0).map(\.primaryKey)
    }
    #expect(unsaved == saved)
    #expect(counted == saved.map(\.count))
    #expect(saved[0].count == (limit == 0 ? 65 : limit))
  }

  @Test(arguments: [
    ("titel", "Book has no attribute titel"),
    ("author.nom", "Writer has no attribute nom (Writer's sort keys: alias)"),
    // Only Author, a sub-entity of the relationship's destination, has an age.
    ("author.age", "Writer has no attribute age"),
    ("pages.number", "Book has no to-one relationship pages"),
    ("scratch", "Book.scratch is transient"),
    ("author", "Book has no attribute author"),
  ])
  func anUnknownSortKeyIsAnErrorNamingTheKeys(key: String, says: String) throws {
    let context = try ObjectContext(storePath: path, model: model)
    #expect {
      _ = try context.fetch(FetchRequest(entity: "Book", sortDescriptors: [Sort(key)]))
    } throws: { error in
      let text = (error as? StoreError)?.description ?? ""
      return text.contains(says) && text.contains("sort keys: ")
    }
  }

  /// Core Data's `fetchLimit` reads only what it returns: the hooks see three objects.
  @Test func aLimitedFetchReadsOnlyTheRowsItReturns() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let awoken = Counter()
    try context.addHook(.awakeFromFetch, for: "Book") { _ in awoken.add() }
    let three = try context.fetch(
      FetchRequest(entity: "Book", sortDescriptors: [Sort("title")], fetchLimit: 3))
    #expect(three.count == 3)
    #expect(awoken.value == 3)
    #expect(try context.count(for: FetchRequest(entity: "Book", predicate: "rating < 2")) > 0)
    #expect(awoken.value == 3)
  }

  @Test func aBatchedWalkVisitsWhatTheFetchReturnsAndForgetsBetweenBatches() throws {
    let context = try ObjectContext(storePath: path, model: model)
    var request = FetchRequest(
      entity: "Book", predicate: "edition != 1",
      sortDescriptors: [Sort("author.alias"), Sort("rating")])
    let fetched = try context.fetch(request).map(\.primaryKey)
    try context.reset()
    request.fetchBatchSize = 7
    var walked: [Int64] = []
    try context.forEach(request) { walked.append($0.primaryKey) }
    #expect(walked == fetched)
  }

  /// A value with quotes and an apostrophe is a value: through `%@` it matches itself, and a
  /// value written to break out of the string matches nothing.
  @Test func placeholdersTakeValuesNeverText() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let tricky = #"O'Brien's "Tale" \ %@"#
    let book = try context.insert("Book")
    try book.setValue(.string(tricky), for: "title")
    try book.setValue(.integer(7), for: "edition")
    try context.save()
    func keys(_ predicate: Filter) throws -> [Int64] {
      try context.fetch(FetchRequest(entity: "Book", predicate: predicate)).map(\.primaryKey)
    }
    #expect(try keys(Filter(format: "title == %@", tricky)) == [book.primaryKey])
    #expect(
      try keys(Filter(format: "%K == %@ AND edition == %d", "title", tricky, 7)) == [
        book.primaryKey
      ])
    #expect(try keys(Filter(format: "title == %@", "x' OR title != 'y")).isEmpty)
    #expect(try keys(Filter(format: "title == %@ OR TRUEPREDICATE", "x")).count == 65)
    let rated = try keys(Filter(format: "rating > %f AND edition IN {%d, %i}", 1.5, 0, 2))
    #expect(
      rated
        == (try self.keys(
          "SELECT b.Z_PK FROM ZBOOK b WHERE \(Self.books) AND b.ZRATING > 1.5 AND b.ZEDITION IN (0, 2) ORDER BY b.Z_PK"
        )))
    let unrated = try keys(Filter(format: "rating == %@", Optional<Double>.none))
    #expect(
      unrated
        == (try self.keys(
          "SELECT b.Z_PK FROM ZBOOK b WHERE \(Self.books) AND b.ZRATING IS NULL ORDER BY b.Z_PK")))
    #expect(!unrated.isEmpty)
    let sorted = try context.fetch(
      FetchRequest(entity: "Book", predicate: Filter(format: "author.alias == %@", "Zoë")))
    #expect(
      sorted.count
        == (try self.keys(
          "SELECT b.Z_PK FROM ZBOOK b JOIN ZWRITER w ON w.Z_PK = b.ZAUTHOR WHERE w.ZALIAS = 'Zoë'"))
        .count)
  }

  @Test func objectsAndArraysAreArgumentsAsCoreDataTakesThem() throws {
    let context = try ObjectContext(storePath: path, model: model)
    func keys(_ predicate: Filter) throws -> [Int64] {
      try context.fetch(FetchRequest(entity: "Book", predicate: predicate)).map(\.primaryKey)
    }
    let authors = try context.fetch(
      FetchRequest(entity: "Author", sortDescriptors: [Sort("alias")]))
    let (first, second) = (authors[0], authors[1])
    func sql(_ condition: String) throws -> [Int64] {
      try self.keys(
        "SELECT b.Z_PK FROM ZBOOK b WHERE \(Self.books) AND \(condition) ORDER BY b.Z_PK")
    }
    // A to-one compared with an object, with another, with a list (nil in it), and its negation.
    let byFirst = try keys(Filter(format: "author == %@", first))
    #expect(byFirst == (try sql("b.ZAUTHOR = \(first.primaryKey)")))
    #expect(!byFirst.isEmpty)
    #expect(
      try keys(Filter(format: "author != %@", first))
        == (try sql("b.ZAUTHOR IS NOT \(first.primaryKey)")))
    #expect(
      try keys(Filter(format: "author IN %@", [first, second]))
        == (try sql("b.ZAUTHOR IN (\(first.primaryKey), \(second.primaryKey))")))
    #expect(
      try keys(Filter(format: "author IN %@", [first, nil] as [ManagedObject?]))
        == (try sql("(b.ZAUTHOR = \(first.primaryKey) OR b.ZAUTHOR IS NULL)")))
    #expect(try keys(Filter(format: "author == %@", first.reference)) == byFirst)
    // Arrays and sets of values.
    #expect(
      try keys(Filter(format: "title IN %@", ["dune", "Dune"]))
        == (try sql("b.ZTITLE IN ('dune', 'Dune')")))
    #expect(
      try keys(Filter(format: "edition IN %@ AND author == %@", Set([0, 2]), second))
        == (try sql("b.ZEDITION IN (0, 2) AND b.ZAUTHOR = \(second.primaryKey)")))
    #expect(try keys(Filter(format: "title IN %@", [String]())).isEmpty)

    // A to-many's members: ANY tags == %@, %@ IN tags, tags CONTAINS %@, NONE.
    let tag = try context.insert("Tag")
    try tag.setValue(.string("classic"), for: "name")
    let other = try context.insert("Tag")
    try other.setValue(.string("new"), for: "name")
    let books = try context.fetch(FetchRequest(entity: "Book", sortDescriptors: [Sort("title")]))
    for book in books.prefix(5) { try tag.add(book, to: "books") }
    try other.add(books[5], to: "books")
    let tagged = books.prefix(5).map(\.primaryKey).sorted()
    // Unsaved: evaluated in memory.
    #expect(try keys(Filter(format: "ANY tags == %@", tag)) == tagged)
    try context.save()
    // Saved: in SQL, against the join table as Python reads it.
    let joined = try sql(
      "b.Z_PK IN (SELECT Z_1BOOKS FROM Z_1TAGS WHERE Z_4TAGS = \(tag.primaryKey))")
    #expect(joined == tagged)
    #expect(try keys(Filter(format: "ANY tags == %@", tag)) == joined)
    #expect(try keys(Filter(format: "%@ IN tags", tag)) == joined)
    #expect(try keys(Filter(format: "tags CONTAINS %@", tag)) == joined)
    #expect(
      try keys(Filter(format: "ANY tags IN %@", [tag, other])).count == tagged.count + 1)
    #expect(try keys(Filter(format: "NONE tags == %@", tag)).count == books.count - 5)

    // An object of an entity the relationship does not hold is named.
    #expect {
      _ = try keys(Filter(format: "author == %@", tag))
    } throws: { error in
      (error as? StoreError)?.description.contains("does not fit Book.author") == true
    }
  }

  @Test func substitutionVariablesFillATemplate() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let template: Filter = "title BEGINSWITH $PREFIX AND edition >= $LOW"
    let filled = template.withSubstitutionVariables(["PREFIX": "d", "LOW": 1])
    let fetched = try context.fetch(FetchRequest(entity: "Book", predicate: filled))
    let expected = try keys(
      "SELECT b.Z_PK FROM ZBOOK b WHERE \(Self.books) AND substr(b.ZTITLE, 1, 1) = 'd' AND b.ZEDITION >= 1 ORDER BY b.Z_PK"
    )
    #expect(fetched.map(\.primaryKey) == expected)
    #expect(!expected.isEmpty)
    #expect {
      _ = try context.fetch(
        FetchRequest(entity: "Book", predicate: template.withSubstitutionVariables(["PREFIX": "d"]))
      )
    } throws: { error in
      let error = error as? StoreError
      return error?.kind == .invalidPredicate
        && error?.description.contains("no value for $LOW") == true
    }
  }

  @Test(arguments: [
    (Filter(format: "title == %@"), "no value given for this placeholder"),
    (Filter(format: "title == %@", "a", "b"), "2 values given for 1 placeholders"),
    (Filter(format: "%K == 1", 3), "%K takes a key path"),
    (Filter(format: "edition == %d", "three"), "%d does not take"),
    (Filter(format: "title == %q", "a"), "a placeholder is"),
  ])
  func aPlaceholderWithoutItsValueIsAnError(predicate: Filter, says: String) throws {
    let context = try ObjectContext(storePath: path, model: model)
    #expect {
      _ = try context.fetch(FetchRequest(entity: "Book", predicate: predicate))
    } throws: { error in
      let error = error as? StoreError
      return error?.kind == .invalidPredicate && error?.description.contains(says) == true
    }
  }

  /// The README's example, as it is written there.
  @Test func theReadmesFetchExampleRuns() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let obrien = try context.insert("Author")
    try obrien.setValue(.string("O'Brien"), for: "alias")
    for index in 0..<90 {
      let book = try context.insert("Book")
      try book.setValue(.string(index % 2 == 0 ? "The \(index)" : "A \(index)"), for: "title")
      try book.setValue(.date(Double(index)), for: "publishedAt")
      try book.setObject(obrien, for: "author")
    }
    try context.save()
    var printed: [String] = []
    func print(_ text: String) { printed.append(text) }

    let template: ObjectStore.Predicate = "title BEGINSWITH $PREFIX"
    let request = FetchRequest(
      entity: "Book",
      predicate: .and([
        ObjectStore.Predicate(format: "%K == %@", "author.alias", "O'Brien"),
        template.withSubstitutionVariables(["PREFIX": "The "]),
      ]),
      sortDescriptors: [ObjectStore.SortDescriptor("publishedAt", ascending: false)],
      fetchLimit: 20, fetchOffset: 40)
    let page = try context.fetch(request)  // the third page of twenty
    let total = try context.count(for: request)  // its limit and offset applied
    try context.forEach(FetchRequest(entity: "Book", fetchBatchSize: 500)) { book in
      if case .string(let title)? = try book.value(for: "title") { print(title) }
    }

    // 45 books begin with "The ", newest first: the third page holds the last five.
    #expect(
      try page.compactMap { try $0.value(for: "title") }
        == [8, 6, 4, 2, 0].map { .string("The \($0)") })
    #expect(total == 5)
    #expect(printed.count == 64 + 90)
  }

  @Test func aSaveInsideAWalkIsRefused() throws {
    let context = try ObjectContext(storePath: path, model: model)
    #expect {
      try context.forEach(FetchRequest(entity: "Book", fetchLimit: 1)) { book in
        try book.setValue(.string("changed"), for: "title")
        try context.save()
      }
    } throws: { error in
      (error as? StoreError)?.description.contains("forEach walk") == true
    }
  }
}

/// graphvault's sort descriptor and predicate (Foundation has types of those names too).
typealias Sort = ObjectStore.SortDescriptor
typealias Filter = ObjectStore.Predicate

/// A count shared with a hook.
final class Counter: @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0
  var value: Int { lock.withLock { count } }
  func add() { lock.withLock { count += 1 } }
}
