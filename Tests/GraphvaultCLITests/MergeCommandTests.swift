import Foundation
import TestSupport
import Testing

/// `graphvault merge` on the built binary: books deleted from a sample store after its backup
/// (with their pages and tag links), other books changed and inserted since; the merge brings
/// the deleted ones back, checked with SQL (Python's sqlite3) through natural keys.
@Suite(
  "graphvault merge", .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct MergeCommandTests {
  let workspace: TemporaryDirectory
  let store: String
  let archive: String
  /// The books deleted after the backup, by title, and what they had.
  let deletedTitles: [String]
  let deletedPages: [String]
  let deletedTags: [String]

  static let selection = [
    "--entity", "Book", "--where", "title BEGINSWITH 'Book 2:' OR title BEGINSWITH 'Book 7:'",
    "--include", "pages", "--include", "tags",
  ]

  init() throws {
    workspace = try TemporaryDirectory()
    store = workspace.path("Library.sqlite").path
    archive = workspace.path("before.gvault").path
    let made = try BuiltTool.run(["sample", store, "--objects", "600", "-q"])
    #expect(made.status == 0, "\(made.stderr)")
    let backup = try BuiltTool.run(["backup", store, "--output", archive, "-q"])
    #expect(backup.status == 0, "\(backup.stderr)")
    deletedTitles = try sqlRows(store, "SELECT ZTITLE FROM ZBOOK WHERE Z_PK IN (2, 7) ORDER BY 1")
    deletedPages = try Self.pages(store, "b.Z_PK IN (2, 7)")
    deletedTags = try Self.tags(store, "b.Z_PK IN (2, 7)")
    try sqlScript(
      store,
      """
      DELETE FROM Z_1TAGS WHERE Z_1BOOKS IN (2, 7);
      DELETE FROM ZPAGE WHERE ZBOOK IN (2, 7);
      DELETE FROM ZBOOK WHERE Z_PK IN (2, 7);
      UPDATE ZBOOK SET ZTITLE = 'Written since', Z_OPT = Z_OPT + 1 WHERE Z_PK = 3;
      INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZAUTHOR, Z5_AUTHOR)
        SELECT (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book') + 1, Z_ENT, 1,
          'Inserted since', ZAUTHOR, Z5_AUTHOR FROM ZBOOK WHERE Z_PK = 1;
      UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + 1 WHERE Z_NAME = 'Book';
      """)
  }

  /// Pages of the books `condition` picks, named by their book's title: `title|number|text`.
  static func pages(_ database: String, _ condition: String) throws -> [String] {
    try sqlRows(
      database,
      "SELECT b.ZTITLE, p.ZNUMBER, p.ZTEXT, p.Z_FOK_BOOK FROM ZPAGE p JOIN ZBOOK b ON p.ZBOOK = b.Z_PK WHERE \(condition) ORDER BY 1, 2"
    )
  }

  /// Tag links of the books `condition` picks, by title and tag name.
  static func tags(_ database: String, _ condition: String) throws -> [String] {
    try sqlRows(
      database,
      "SELECT b.ZTITLE, t.ZNAME FROM Z_1TAGS j JOIN ZBOOK b ON j.Z_1BOOKS = b.Z_PK JOIN ZTAG t ON j.Z_4TAGS = t.Z_PK WHERE \(condition) ORDER BY 1, 2"
    )
  }

  /// What must hold of any store after a merge.
  func expectWhole(_ database: String) throws {
    #expect(try sqlRows(database, "PRAGMA integrity_check") == ["ok"])
    #expect(
      try sqlRows(
        database, "SELECT count(*) FROM ZPAGE WHERE ZBOOK NOT IN (SELECT Z_PK FROM ZBOOK)")
        == ["0"])
    #expect(
      try sqlRows(
        database,
        "SELECT count(*) FROM ZBOOK WHERE ZAUTHOR IS NOT NULL AND ZAUTHOR NOT IN (SELECT Z_PK FROM ZWRITER)"
      ) == ["0"])
    #expect(
      try sqlRows(
        database,
        "SELECT count(*) FROM Z_1TAGS WHERE Z_1BOOKS NOT IN (SELECT Z_PK FROM ZBOOK) OR Z_4TAGS NOT IN (SELECT Z_PK FROM ZTAG)"
      ) == ["0"])
    for (table, root) in [
      ("ZBOOK", "Book"), ("ZPAGE", "Page"), ("ZTAG", "Tag"), ("ZWRITER", "Writer"),
    ] {
      #expect(
        try sqlRows(
          database,
          "SELECT (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = '\(root)') >= (SELECT ifnull(max(Z_PK), 0) FROM \(table))"
        ) == ["1"], "\(table)")
    }
  }

  @Test func deletedObjectsComeBackWithTheirRelationshipsAndNothingWrittenSinceIsLost() throws {
    let since = try sqlRows(store, "SELECT Z_PK, ZTITLE FROM ZBOOK WHERE ZTITLE LIKE '% since'")
    let result = try BuiltTool.run(
      ["merge", archive, "--into", store] + Self.selection + ["--json"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      try sqlRows(
        store,
        "SELECT ZTITLE FROM ZBOOK WHERE ZTITLE IN ('\(deletedTitles.joined(separator: "', '"))') ORDER BY 1"
      )
        == deletedTitles)
    let restored = "b.ZTITLE IN ('\(deletedTitles.joined(separator: "', '"))')"
    #expect(try Self.pages(store, restored) == deletedPages)
    #expect(try Self.tags(store, restored) == deletedTags)
    // Written since: untouched.
    #expect(
      try sqlRows(store, "SELECT Z_PK, ZTITLE FROM ZBOOK WHERE ZTITLE LIKE '% since'") == since)
    try expectWhole(store)
    #expect(try sqlRows(store, "PRAGMA journal_mode") == ["wal"])
    let json = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
    let entities = json?["entities"] as? [String: [String: Int]]
    #expect(entities?["Book"]?["inserted"] == 2)
    #expect(entities?["Page"]?["inserted"] == deletedPages.count)
    // Nothing left to bring back: a second merge inserts nothing.
    let again = try BuiltTool.run(["merge", archive, "--into", store, "--json"] + Self.selection)
    #expect(again.status == 0, "\(again.stderr)")
    let second = try JSONSerialization.jsonObject(with: Data(again.stdoutBytes)) as? [String: Any]
    let secondEntities = second?["entities"] as? [String: [String: Int]] ?? [:]
    #expect(secondEntities.values.allSatisfy { ($0["inserted"] ?? 0) == 0 }, "\(secondEntities)")
  }

  @Test func aDryRunPrintsThePlanAndWritesNothing() throws {
    let before = try Data(contentsOf: URL(fileURLWithPath: store))
    let wal = try? Data(contentsOf: URL(fileURLWithPath: store + "-wal"))
    let result = try BuiltTool.run(
      ["merge", archive, "--into", store, "--dry-run"] + Self.selection)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.hasPrefix("dry run: nothing was written"), "\(result.stdout)")
    #expect(result.stdout.contains("  Book: 2 to insert"), "\(result.stdout)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == before)
    // A reader of a WAL store may leave an empty log where there was none; nothing more.
    let walAfter = try? Data(contentsOf: URL(fileURLWithPath: store + "-wal"))
    #expect(walAfter == wal || (wal == nil && walAfter?.isEmpty == true))
  }

  @Test func aDryRunListsTheObjectsItWouldInsertAndTheRealMergeInsertsExactlyThose() throws {
    let dry = try BuiltTool.run(
      ["merge", archive, "--into", store, "--dry-run", "--json"] + Self.selection)
    #expect(dry.status == 0, "\(dry.stderr)")
    let plan = try #require(
      try JSONSerialization.jsonObject(with: Data(dry.stdoutBytes)) as? [String: Any])
    let fates = plan["objects"] as? [[String: Any]] ?? []
    let toInsert = Set(
      fates.filter { $0["action"] as? String == "insert" }.compactMap { fate in
        (fate["entity"] as? String).flatMap { entity in
          (fate["source"] as? Int).map { "\(entity) p\($0)" }
        }
      })
    // The two books and their pages.
    #expect(toInsert.contains("Book p2") && toInsert.contains("Book p7"), "\(toInsert)")
    #expect(toInsert.count == 2 + deletedPages.count, "\(toInsert)")
    let counted = (plan["entities"] as? [String: [String: Int]] ?? [:]).values.reduce(0) {
      $0 + ($1["inserted"] ?? 0)
    }
    #expect(counted == toInsert.count)
    #expect(
      fates.contains { $0["action"] as? String == "present" && $0["entity"] as? String == "Tag" })

    // The text lists them one a line.
    let text = try BuiltTool.run(["merge", archive, "--into", store, "--dry-run"] + Self.selection)
    #expect(text.stdout.contains("\n  insert   Book p2\n"), "\(text.stdout)")

    // The real merge inserts those objects under those keys (they were free), nothing else.
    let booksBefore = Set(try sqlRows(store, "SELECT 'Book p' || Z_PK FROM ZBOOK"))
    let pagesBefore = Set(try sqlRows(store, "SELECT 'Page p' || Z_PK FROM ZPAGE"))
    let merged = try BuiltTool.run(["merge", archive, "--into", store] + Self.selection)
    #expect(merged.status == 0, "\(merged.stderr)")
    let added =
      Set(try sqlRows(store, "SELECT 'Book p' || Z_PK FROM ZBOOK")).subtracting(booksBefore)
      .union(Set(try sqlRows(store, "SELECT 'Page p' || Z_PK FROM ZPAGE")).subtracting(pagesBefore))
    #expect(added == toInsert)
  }

  @Test func eachConflictPolicyDoesWhatItSays() throws {
    let book3 = ["--entity", "Book", "--where", "title BEGINSWITH 'Book 3:'"]
    let original = try sqlRows(try restoredArchive(), "SELECT ZTITLE FROM ZBOOK WHERE Z_PK = 3")
    let bytes = try Data(contentsOf: URL(fileURLWithPath: store))
    let fail = try BuiltTool.run(
      ["merge", archive, "--into", store, "--on-conflict", "fail"] + book3)
    #expect(fail.status == 73, "\(fail.stderr)")
    #expect(fail.stderr.contains("/p3 (title)"), "\(fail.stderr)")
    #expect(try Data(contentsOf: URL(fileURLWithPath: store)) == bytes)
    let skip = try BuiltTool.run(["merge", archive, "--into", store] + book3)
    #expect(skip.status == 0, "\(skip.stderr)")
    #expect(skip.stdout.contains("1 kept as the store has them"), "\(skip.stdout)")
    #expect(try sqlRows(store, "SELECT ZTITLE FROM ZBOOK WHERE Z_PK = 3") == ["Written since"])
    let replace = try BuiltTool.run(
      ["merge", archive, "--into", store, "--on-conflict", "replace"] + book3)
    #expect(replace.status == 0, "\(replace.stderr)")
    #expect(try sqlRows(store, "SELECT ZTITLE FROM ZBOOK WHERE Z_PK = 3") == original)
    try expectWhole(store)
  }

  func restoredArchive() throws -> String {
    let path = workspace.path("restored.sqlite").path
    if !FileManager.default.fileExists(atPath: path) {
      let result = try BuiltTool.run(["restore", archive, "--to", path, "-q"])
      #expect(result.status == 0, "\(result.stderr)")
    }
    return path
  }

  @Test func anObjectWhoseKeyIsTakenIsInsertedUnderANewOneAndFoundByItsNaturalKey() throws {
    // Another book under deleted book 2's primary key.
    try sqlScript(
      store,
      """
      INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZUNIQUEID)
        SELECT 2, Z_ENT, 1, 'Another book', X'00112233445566778899AABBCCDDEEFF' FROM ZBOOK
        WHERE Z_PK = 1;
      """)
    let result = try BuiltTool.run(
      ["merge", archive, "--into", store, "--key", "Book.uniqueID", "--json"] + Self.selection)
    #expect(result.status == 0, "\(result.stderr)")
    let json = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
    let book = (json?["entities"] as? [String: [String: Int]])?["Book"]
    #expect(book?["inserted"] == 2)
    #expect(book?["renumbered"] == 1)
    #expect(try sqlRows(store, "SELECT ZTITLE FROM ZBOOK WHERE Z_PK = 2") == ["Another book"])
    let restored = "b.ZTITLE IN ('\(deletedTitles.joined(separator: "', '"))')"
    #expect(try Self.pages(store, restored) == deletedPages)
    #expect(try Self.tags(store, restored) == deletedTags)
    try expectWhole(store)
  }

  @Test func aMergeAcrossModelVersionsMigratesTheSourceFirst() throws {
    let archives = SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Archives")
    let target = workspace.path("v2.sqlite").path
    let restore = try BuiltTool.run([
      "restore", archives.appendingPathComponent("Library-2.gvault").path, "--to", target, "-q",
    ])
    #expect(restore.status == 0, "\(restore.stderr)")
    let result = try BuiltTool.run([
      "merge", archives.appendingPathComponent("Library-1.gvault").path, "--into", target,
      "--entity", "Author", "--model",
      SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Library.xcdatamodeld").path,
      "--json",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let json = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
    #expect(json?["migrated"] as? String == "Library → Library 2")
    #expect(try sqlRows(target, "PRAGMA integrity_check") == ["ok"])
  }

  /// An archive of an older version is restored straight into the store's model in one pass:
  /// plain (its first members read ahead), encrypted or on standard input (the restore decides
  /// as it reads them). The same merge from a store restored from it (migrated through the
  /// road a store takes) must write the same rows and say the same.
  @Test func anOlderArchiveMergedInOnePassGivesWhatTheStoreItHoldsGives() throws {
    let archives = SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Archives")
    let model = SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Library.xcdatamodeld")
      .path
    let older = archives.appendingPathComponent("Library-1.gvault").path
    let olderStore = workspace.path("v1.sqlite").path
    #expect(try BuiltTool.run(["restore", older, "--to", olderStore, "-q"]).status == 0)
    let password = workspace.path("password").path
    try Data("older and wiser\n".utf8).write(to: URL(fileURLWithPath: password))
    chmod(password, 0o600)
    let sealed = workspace.path("v1-sealed.gvault").path
    let backup = try BuiltTool.run([
      "backup", olderStore, "--model", model, "--output", sealed, "--password-file", password,
      "-q",
    ])
    #expect(backup.status == 0, "\(backup.stderr)")
    let roads: [(source: String, extra: [String], input: [UInt8])] = [
      (older, [], []), (olderStore, [], []), (sealed, ["--password-file", password], []),
      ("-", [], Array(try Data(contentsOf: URL(fileURLWithPath: older)))),
    ]
    var reports: [NSDictionary] = []
    var rows: [[String]] = []
    for (index, road) in roads.enumerated() {
      let target = workspace.path("v2-\(index).sqlite").path
      let restore = try BuiltTool.run([
        "restore", archives.appendingPathComponent("Library-2.gvault").path, "--to", target, "-q",
      ])
      #expect(restore.status == 0, "\(restore.stderr)")
      try sqlScript(target, "DELETE FROM ZWRITER WHERE Z_PK IN (SELECT min(Z_PK) FROM ZWRITER);")
      let result = try BuiltTool.run(
        ["merge", road.source, "--into", target, "--entity", "Author", "--json", "--model", model]
          + road.extra, input: road.input)
      #expect(result.status == 0, "\(road.source): \(result.stderr)")
      var json =
        try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any] ?? [:]
      json["source"] = nil
      json["store"] = nil
      reports.append(json as NSDictionary)
      rows.append(try sqlRows(target, "SELECT * FROM ZWRITER ORDER BY Z_PK"))
    }
    #expect(reports.first?["migrated"] as? String == "Library → Library 2")
    for index in roads.indices.dropFirst() {
      #expect(reports[index] == reports[0], "\(roads[index].source)")
      #expect(rows[index] == rows[0], "\(roads[index].source)")
    }
    #expect(rows.first?.isEmpty == false)
  }

  @Test func aStoreLockedByAWriterGivesSeventyFiveAfterTheWait() throws {
    let holder = try #require(
      try RunningProcess.holdingWriteLock(on: store, ready: workspace.path("locked").path))
    defer {
      holder.send(SIGKILL)
      _ = holder.wait()
    }
    let result = try BuiltTool.run(
      ["merge", archive, "--into", store, "--wait", "1"] + Self.selection)
    #expect(result.status == 75, "\(result.stdout)\(result.stderr)")
    #expect(try sqlRows(store, "SELECT count(*) FROM ZBOOK WHERE Z_PK IN (2, 7)") == ["0"])
  }

  /// A real Core Data store, whose triggers keep a derived `pagesCount`: a book deleted with
  /// its pages, and two pages of another, come back; every count matches its pages again.
  @Test(.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func aMergeIntoACoreDataStoreLeavesItsDerivedCountsRight() throws {
    let copy = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: workspace.url)
    let backup = workspace.path("coredata.gvault").path
    #expect(try BuiltTool.run(["backup", copy.path, "--output", backup, "-q"]).status == 0)
    let pagesBefore = try sqlRows(
      copy.path, "SELECT ZBOOK, count(*) FROM ZPAGE WHERE ZBOOK IN (2, 3) GROUP BY ZBOOK")
    // Core Data's triggers call its functions to tell the app; stand-ins let Python delete.
    let deleted = try Subprocess.python(
      """
      import sqlite3, sys
      c = sqlite3.connect(sys.argv[1])
      for name in ('NSCoreDataDATriggerUpdatedAffectedObjectValue',
                   'NSCoreDataDATriggerInsertUpdatedAffectedObjectValue'):
          c.create_function(name, -1, lambda *arguments: None)
      c.execute('DELETE FROM ZPAGE WHERE ZBOOK = 2')
      c.execute('DELETE FROM ZBOOK WHERE Z_PK = 2')
      c.execute('DELETE FROM ZPAGE WHERE Z_PK IN (SELECT Z_PK FROM ZPAGE WHERE ZBOOK = 3 LIMIT 2)')
      c.commit()
      """, [copy.path])
    #expect(deleted.status == 0, "\(deleted.stderr)")
    let titles = try sqlRows(copy.path, "SELECT ZTITLE FROM ZBOOK WHERE Z_PK = 3")
    #expect(titles.count == 1)
    let result = try BuiltTool.run([
      "merge", backup, "--into", copy.path, "--entity", "Book", "--where",
      "title == 'title 13 - author 2' OR title == '\(titles.first ?? "")'", "--include", "pages",
    ])
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(
      try sqlRows(
        copy.path, "SELECT ZBOOK, count(*) FROM ZPAGE WHERE ZBOOK IN (2, 3) GROUP BY ZBOOK")
        == pagesBefore)
    #expect(
      try sqlRows(
        copy.path,
        "SELECT count(*) FROM ZBOOK b WHERE b.ZPAGESCOUNT IS NOT (SELECT count(*) FROM ZPAGE p WHERE p.ZBOOK = b.Z_PK)"
      ) == ["0"])
    #expect(try sqlRows(copy.path, "PRAGMA integrity_check") == ["ok"])
  }

  @Test func mistakesHaveTheirDocumentedStatuses() throws {
    let cases: [([String], Int32, String)] = [
      (["merge", archive, "--into", store, "--entity", "Nope"], 64, "Nope"),
      (["merge", archive, "--into", store, "--entity", "Book", "--key", "Book.nope"], 64, "nope"),
      (
        ["merge", archive, "--into", workspace.path("none.sqlite").path, "--entity", "Book"], 66,
        "none.sqlite"
      ),
      (["merge", store, "--into", store, "--entity", "Book"], 64, "same file"),
    ]
    for (arguments, status, message) in cases {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == status, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
  }
}
