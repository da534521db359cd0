import Foundation
import TestSupport
import Testing

/// `graphvault fixture` on the built binary, checked with SQL written here against the source
/// store and the restored fixture.
@Suite(
  "graphvault fixture", .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct FixtureCommandTests {
  let workspace: TemporaryDirectory
  let store: String

  init() throws {
    workspace = try TemporaryDirectory()
    store = workspace.path("Library.sqlite").path
    let made = try BuiltTool.run(["sample", store, "--objects", "600", "-q"])
    #expect(made.status == 0, "\(made.stderr)")
  }

  func keys(_ database: String, _ sql: String) throws -> Set<Int> {
    Set(try sqlRows(database, sql).compactMap { Int($0) })
  }

  /// Cuts a fixture and restores it; returns the restored store's path.
  func cut(_ arguments: [String], name: String) throws -> (archive: String, restored: String) {
    let archive = workspace.path("\(name).gvault").path
    let result = try BuiltTool.run(["fixture", store] + arguments + ["--output", archive, "-q"])
    #expect(result.status == 0, "\(result.stderr)")
    let verify = try BuiltTool.run(["verify", archive])
    #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    let restored = workspace.path("\(name).sqlite").path
    let restore = try BuiltTool.run(["restore", archive, "--to", restored, "-q"])
    #expect(restore.status == 0, "\(restore.stderr)")
    return (archive, restored)
  }

  @Test func theSelectionIsWhatThePredicateSelectsWithItsToOneClosureAndNothingElse() throws {
    let (_, fixture) = try cut(
      [
        "--entity", "Book", "--where", "rating < 1 AND title CONTAINS 'orbit'", "--sort", "-sales",
        "--limit", "6",
      ],
      name: "plain")
    let selected = try keys(
      store,
      "SELECT Z_PK FROM ZBOOK WHERE ZRATING < 1 AND instr(ZTITLE, 'orbit') > 0 ORDER BY ZSALES DESC, Z_PK LIMIT 6"
    )
    #expect(selected.count == 6)
    #expect(try keys(fixture, "SELECT Z_PK FROM ZBOOK") == selected)
    let list = selected.map(String.init).joined(separator: ",")
    // Their authors (to-one), and nothing along to-many relationships.
    #expect(
      try keys(fixture, "SELECT Z_PK FROM ZWRITER")
        == keys(store, "SELECT DISTINCT ZAUTHOR FROM ZBOOK WHERE Z_PK IN (\(list))"))
    #expect(try sqlRows(fixture, "SELECT count(*) FROM ZPAGE") == ["0"])
    #expect(try sqlRows(fixture, "SELECT count(*) FROM ZTAG") == ["0"])
    #expect(try sqlRows(fixture, "SELECT count(*) FROM Z_1TAGS") == ["0"])
    // Every reference resolves, and Z_MAX covers the keys.
    #expect(
      try sqlRows(
        fixture, "SELECT count(*) FROM ZBOOK WHERE ZAUTHOR NOT IN (SELECT Z_PK FROM ZWRITER)")
        == ["0"])
    #expect(
      try sqlRows(fixture, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'")
        == sqlRows(fixture, "SELECT max(Z_PK) FROM ZBOOK"))
  }

  @Test func includeFollowsExactlyThePathsGiven() throws {
    let (_, fixture) = try cut(
      ["--entity", "Book", "--where", "sales > 900000", "--include", "pages", "--include", "tags"],
      name: "included")
    let selected = try keys(store, "SELECT Z_PK FROM ZBOOK WHERE ZSALES > 900000")
    let list = selected.map(String.init).joined(separator: ",")
    #expect(try keys(fixture, "SELECT Z_PK FROM ZBOOK") == selected)
    #expect(
      try keys(fixture, "SELECT Z_PK FROM ZPAGE")
        == keys(store, "SELECT Z_PK FROM ZPAGE WHERE ZBOOK IN (\(list))"))
    #expect(
      try keys(fixture, "SELECT Z_PK FROM ZTAG")
        == keys(store, "SELECT DISTINCT Z_4TAGS FROM Z_1TAGS WHERE Z_1BOOKS IN (\(list))"))
    // Join rows between the selected books and their tags; the tags' other books stay out.
    #expect(
      Set(try sqlRows(fixture, "SELECT Z_1BOOKS, Z_4TAGS FROM Z_1TAGS"))
        == Set(
          try sqlRows(store, "SELECT Z_1BOOKS, Z_4TAGS FROM Z_1TAGS WHERE Z_1BOOKS IN (\(list))")))
    // Ordered pages keep their order keys.
    #expect(
      try sqlRows(fixture, "SELECT Z_PK, Z_FOK_BOOK FROM ZPAGE ORDER BY Z_PK")
        == sqlRows(
          store, "SELECT Z_PK, Z_FOK_BOOK FROM ZPAGE WHERE ZBOOK IN (\(list)) ORDER BY Z_PK")
    )

    // Through a to-one, then a to-many: the author's other books come, their pages do not.
    let (_, deep) = try cut(
      ["--entity", "Book", "--where", "sales > 990000", "--include", "author.books"], name: "deep")
    let authors = try keys(store, "SELECT DISTINCT ZAUTHOR FROM ZBOOK WHERE ZSALES > 990000")
    #expect(!authors.isEmpty)
    #expect(
      try keys(deep, "SELECT Z_PK FROM ZBOOK")
        == keys(
          store,
          "SELECT Z_PK FROM ZBOOK WHERE ZAUTHOR IN (\(authors.map(String.init).joined(separator: ",")))"
        ))
    #expect(try sqlRows(deep, "SELECT count(*) FROM ZPAGE") == ["0"])
  }

  @Test func aFixtureWrittenIntoATestsFolderLeavesNothingElseThere() throws {
    // What SwiftPM copies into a test bundle (`resources: [.copy("Fixtures")]`) and what git
    // adds: hidden lock files would go too.
    let fixtures = workspace.path("Tests/AppTests/Fixtures")
    try FileManager.default.createDirectory(at: fixtures, withIntermediateDirectories: true)
    let archive = fixtures.appendingPathComponent("books.gvault").path
    let result = try BuiltTool.run([
      "fixture", store, "--entity", "Book", "--limit", "5", "--output", archive, "-q",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let backup = try BuiltTool.run([
      "backup", store, "--output", fixtures.appendingPathComponent("whole.gvault").path, "-q",
    ])
    #expect(backup.status == 0, "\(backup.stderr)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: fixtures.path).sorted() == [
        "books.gvault", "whole.gvault",
      ])
  }

  @Test func twoRunsAreByteIdenticalAndTheTimeIsTheOnlyClock() throws {
    let arguments = ["--entity", "Page", "--where", "number == 2", "--limit", "20"]
    let (first, _) = try cut(arguments, name: "one")
    let (second, _) = try cut(arguments, name: "two")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: first))
        == Data(contentsOf: URL(fileURLWithPath: second)))
    let (timed, _) = try cut(arguments + ["--time", "2026-01-31T03:00:00Z"], name: "timed")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: first))
        != Data(contentsOf: URL(fileURLWithPath: timed)))
    let listed = try BuiltTool.run(["list", timed])
    #expect(listed.stdout.contains("created 2026-01-31T03:00:00Z"), "\(listed.stdout)")
  }

  @Test func theSameCutFromACopyOfTheStoreElsewhereIsTheSameFile() throws {
    let elsewhere = workspace.path("elsewhere/deeper").path
    try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
    let copy = elsewhere + "/" + URL(fileURLWithPath: store).lastPathComponent
    try FileManager.default.copyItem(atPath: store, toPath: copy)
    let arguments = ["--entity", "Book", "--limit", "5", "--include", "pages"]
    let (here, _) = try cut(arguments, name: "here")
    let there = workspace.path("there.gvault").path
    let result = try BuiltTool.run(["fixture", copy] + arguments + ["--output", there])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: here))
        == Data(contentsOf: URL(fileURLWithPath: there)))
    // The header names the store it was cut from by its name alone.
    let listed = try BuiltTool.run(["list", there])
    #expect(listed.stdout.contains("  source \(URL(fileURLWithPath: store).lastPathComponent)\n"))
    #expect(!listed.stdout.contains(elsewhere))
  }

  @Test func aFixtureCutFromAnArchiveHoldsWhatOneCutFromTheStoreHolds() throws {
    let archive = workspace.path("full.gvault").path
    #expect(try BuiltTool.run(["backup", store, "--output", archive, "-q"]).status == 0)
    let arguments = [
      "--entity", "Book", "--where", "ANY tags.name BEGINSWITH 'sci'", "--limit", "4",
    ]
    let fromArchive = workspace.path("from-archive.gvault").path
    let result = try BuiltTool.run(["fixture", archive] + arguments + ["--output", fromArchive])
    #expect(result.status == 0, "\(result.stderr)")
    let (_, fromStore) = try cut(arguments, name: "from-store")
    let restored = workspace.path("from-archive.sqlite").path
    #expect(try BuiltTool.run(["restore", fromArchive, "--to", restored, "-q"]).status == 0)
    for table in ["ZBOOK", "ZWRITER", "ZPAGE", "ZTAG", "Z_1TAGS", "Z_PRIMARYKEY"] {
      #expect(
        try sqlRows(restored, "SELECT * FROM \(table) ORDER BY 1, 2")
          == sqlRows(fromStore, "SELECT * FROM \(table) ORDER BY 1, 2"), "\(table)")
    }
  }

  /// Cuts the same fixtures from `source` backed up twice under one name: a framed archive
  /// (read in part, what each selection reaches) and a gzip one (read whole); expects the same
  /// bytes.
  func expectTheSameCutsFromPartAndWhole(
    of source: String, name: String, _ selections: [[String]]
  ) throws {
    var archives: [String] = []
    for (folder, compression) in [("framed", "zstd"), ("whole", "gzip")] {
      let directory = workspace.path(folder).path
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      let archive = directory + "/\(name).gvault"
      let backup = try BuiltTool.run([
        "backup", source, "--output", archive, "--compression", compression, "-q",
      ])
      #expect(backup.status == 0, "\(backup.stderr)")
      archives.append(archive)
    }
    for (number, selection) in selections.enumerated() {
      var cuts: [Data] = []
      for archive in archives {
        let output = archive + "-\(number).fixture"
        let result = try BuiltTool.run(["fixture", archive] + selection + ["--output", output])
        #expect(result.status == 0, "\(selection): \(result.stderr)")
        cuts.append(try Data(contentsOf: URL(fileURLWithPath: output)))
      }
      #expect(cuts[0] == cuts[1], "\(selection)")
    }
  }

  @Test func aFixtureCutFromPartOfAnArchiveIsByteForByteTheOneCutFromAllOfIt() throws {
    try expectTheSameCutsFromPartAndWhole(
      of: store, name: "Library",
      [
        ["--entity", "Book", "--where", "title BEGINSWITH 'Book 1'", "--include", "pages"],
        ["--entity", "Book", "--where", "edition > 2", "--sort", "-title", "--limit", "7"],
        ["--entity", "Page", "--limit", "5"],
        [
          "--entity", "Author", "--include", "books.pages", "--include", "books.tags", "--limit",
          "2",
        ],
        ["--entity", "Book", "--where", "ANY tags.name BEGINSWITH 'sci'", "--limit", "4"],
        ["--entity", "Tag", "--include", "books", "--scrub", "Book.title=hash"],
      ])
  }

  /// A real Core Data store: derived counts, persistent history, an app's own columns.
  @Test(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func aFixtureCutFromPartOfACoreDataStoresArchiveIsTheOneCutFromAllOfIt() throws {
    let source = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: workspace.url)
    try expectTheSameCutsFromPartAndWhole(
      of: source.path, name: "SampleModel2",
      [
        ["--entity", "Book", "--limit", "3", "--include", "pages"],
        ["--entity", "Page", "--where", "number < 3"],
      ])
  }

  @Test func mistakesInTheSelectionAreUsageErrorsAndWriteNothing() throws {
    let output = workspace.path("never.gvault").path
    let cases: [([String], Int32, String)] = [
      (["--entity", "Nope"], 64, "the model has no entity Nope"),
      (["--entity", "Book", "--where", "title =="], 64, "at position 8"),
      (["--entity", "Book", "--where", "nosuch > 1"], 64, "Book has no key nosuch"),
      (["--entity", "Book", "--include", "pages.nope"], 64, "Page has no relationship nope"),
      (["--entity", "Book", "--sort", "nope"], 64, "no attribute nope to sort by"),
    ]
    for (arguments, status, message) in cases {
      let result = try BuiltTool.run(["fixture", store] + arguments + ["--output", output])
      #expect(result.status == status, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
    let missing = try BuiltTool.run([
      "fixture", workspace.path("missing.sqlite").path, "--entity", "Book", "--output", output,
    ])
    #expect(missing.status == 66, "\(missing.stderr)")
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  /// Every table's rows, as text, with one column left out of one table.
  func rows(_ database: String, skipping: (table: String, column: String)? = nil) throws -> [String]
  {
    var lines: [String] = []
    for table in ["ZBOOK", "ZWRITER", "ZPAGE", "ZTAG", "Z_1TAGS", "Z_PRIMARYKEY", "Z_METADATA"] {
      let columns = try sqlRows(database, "SELECT name FROM pragma_table_info('\(table)')")
        .filter { table != skipping?.table || $0 != skipping?.column }
      lines += try sqlRows(
        database, "SELECT \(columns.joined(separator: ", ")) FROM \(table) ORDER BY 1, 2"
      )
      .map { "\(table): \($0)" }
    }
    return lines
  }

  @Test func eachScrubRuleChangesItsAttributeAndNothingElse() throws {
    let base = [
      "--entity", "Book", "--where", "sales > 700000", "--include", "pages", "--include", "tags",
    ]
    let (_, plain) = try cut(base, name: "unscrubbed")
    let rules: [(rule: String, table: String, column: String)] = [
      ("Book.title", "ZBOOK", "ZTITLE"), ("Book.sales", "ZBOOK", "ZSALES"),
      ("Book.publishedAt", "ZBOOK", "ZPUBLISHEDAT"), ("Book.cover", "ZBOOK", "ZCOVER"),
      ("Book.uniqueID", "ZBOOK", "ZUNIQUEID"), ("Book.price=hash", "ZBOOK", "ZPRICE"),
      ("Writer.alias=hash", "ZWRITER", "ZALIAS"), ("Page.text=null", "ZPAGE", "ZTEXT"),
      ("Tag.name=value:redacted", "ZTAG", "ZNAME"),
    ]
    for (index, rule) in rules.enumerated() {
      let (_, scrubbed) = try cut(base + ["--scrub", rule.rule], name: "scrubbed-\(index)")
      // Everything else is as it was.
      #expect(
        try rows(scrubbed, skipping: (rule.table, rule.column))
          == rows(plain, skipping: (rule.table, rule.column)), "\(rule.rule)")
      let before = try sqlRows(
        plain, "SELECT Z_PK, \(rule.column) FROM \(rule.table) ORDER BY Z_PK")
      let after = try sqlRows(
        scrubbed, "SELECT Z_PK, \(rule.column) FROM \(rule.table) ORDER BY Z_PK")
      #expect(before.count == after.count && !before.isEmpty)
      // Present values changed; missing ones stayed missing.
      for (old, new) in zip(before, after) {
        if old.hasSuffix("|None") {
          #expect(new == old, "\(rule.rule)")
        } else {
          #expect(new != old, "\(rule.rule): \(old) kept")
        }
      }
    }
    // Shapes: a fake string names the attribute and object, a fake blob keeps its length.
    let (_, fake) = try cut(
      base + ["--scrub", "Book.title", "--scrub", "Book.cover"], name: "shapes")
    #expect(
      try sqlRows(fake, "SELECT count(*) FROM ZBOOK WHERE ZTITLE <> 'Book.title-' || Z_PK") == ["0"]
    )
    #expect(
      try sqlRows(fake, "SELECT Z_PK, length(ZCOVER) FROM ZBOOK ORDER BY Z_PK")
        == sqlRows(plain, "SELECT Z_PK, length(ZCOVER) FROM ZBOOK ORDER BY Z_PK"))
    #expect(try sqlRows(fake, "SELECT count(DISTINCT ZUNIQUEID) = count(*) FROM ZBOOK") == ["1"])
  }

  @Test func hashingKeepsEqualValuesEqualAcrossFixturesAndDependsOnTheKey() throws {
    let (_, small) = try cut(
      ["--entity", "Book", "--limit", "5", "--scrub", "Writer.alias=hash"], name: "small")
    let (_, large) = try cut(
      ["--entity", "Book", "--limit", "40", "--scrub", "Writer.alias=hash"], name: "large")
    let smallAliases = try sqlRows(small, "SELECT Z_PK, ZALIAS FROM ZWRITER ORDER BY Z_PK")
    let largeAliases = Set(try sqlRows(large, "SELECT Z_PK, ZALIAS FROM ZWRITER"))
    #expect(!smallAliases.isEmpty && Set(smallAliases).isSubset(of: largeAliases))
    let key = workspace.path("scrub.key").path
    try Data("a secret of our own".utf8).write(to: URL(fileURLWithPath: key))
    let (_, keyed) = try cut(
      [
        "--entity", "Book", "--limit", "5", "--scrub", "Writer.alias=hash", "--scrub-key-file", key,
      ],
      name: "keyed")
    let keyedAliases = try sqlRows(keyed, "SELECT Z_PK, ZALIAS FROM ZWRITER ORDER BY Z_PK")
    #expect(keyedAliases.count == smallAliases.count)
    #expect(Set(keyedAliases).isDisjoint(with: smallAliases))
    // Unique before, unique after.
    #expect(try sqlRows(large, "SELECT count(DISTINCT ZALIAS) = count(*) FROM ZWRITER") == ["1"])
  }

  @Test func scrubRulesThatCannotHoldAreRefused() throws {
    let output = workspace.path("refused.gvault").path
    let cases: [([String], Int32, String)] = [
      (
        ["--scrub", "Writer.alias=null"], 64, "--scrub Writer.alias=null: the attribute is required"
      ),
      (["--scrub", "Writer.alias=value:same"], 64, "which must be unique"),
      (["--scrub", "Book.nope"], 64, "Book has no attribute nope"),
      (["--scrub", "Book.sales=value:many"], 64, "not a value of type Integer 64"),
      (["--scrub", "Writer.color"], 64, "no stand-in can be made for Transformable values"),
      (["--scrub", "Book"], 64, "expected ENTITY.ATTRIBUTE"),
      (["--scrub", "Book.title=scramble"], 64, "expected ENTITY.ATTRIBUTE"),
    ]
    for (arguments, status, message) in cases {
      let result = try BuiltTool.run(
        ["fixture", store, "--entity", "Book", "--limit", "5"] + arguments + ["--output", output])
      #expect(result.status == status, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
    #expect(!FileManager.default.fileExists(atPath: output))
  }

  /// A real Core Data store: a derived `pagesCount` is recomputed over the pages the fixture
  /// keeps, and the persistent-history tables come empty.
  @Test(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func aFixtureOfACoreDataStoreKeepsDerivedCountsConsistent() throws {
    let source = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: workspace.url)
    let archive = workspace.path("cd.gvault").path
    let result = try BuiltTool.run([
      "fixture", source.path, "--entity", "Book", "--limit", "3", "--include", "pages",
      "--output", archive, "-q",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let restored = workspace.path("cd.sqlite").path
    let restore = try BuiltTool.run(["restore", archive, "--to", restored, "-q"])
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(try sqlRows(restored, "SELECT count(*) FROM ZBOOK") == ["3"])
    #expect(
      try sqlRows(
        restored,
        "SELECT count(*) FROM ZBOOK b WHERE b.ZPAGESCOUNT IS NOT (SELECT count(*) FROM ZPAGE p WHERE p.ZBOOK = b.Z_PK)"
      ) == ["0"])
    #expect(try sqlRows(restored, "SELECT count(*) FROM ZPAGE") != ["0"])
    #expect(try sqlRows(restored, "SELECT count(*) FROM ACHANGE") == ["0"])
    // Feedbacks point at books by a to-one the fixture did not follow from books: none came.
    #expect(try sqlRows(restored, "SELECT count(*) FROM ZFEEDBACK") == ["0"])
  }
}
