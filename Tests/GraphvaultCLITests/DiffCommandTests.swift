import Foundation
import TestSupport
import Testing

/// `graphvault diff` on the built binary: a sample store backed up, then changed with SQL
/// (objects deleted with their pages and join rows, titles changed, a tag link moved, a book
/// inserted), backed up again; what diff reports is checked against a comparison written here
/// in Python over the two stores' tables.
@Suite(
  "graphvault diff", .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct DiffCommandTests {
  let workspace: TemporaryDirectory
  let store: String
  let before: String
  let after: String

  /// The changes made between the two archives.
  static let changes = """
    DELETE FROM Z_1TAGS WHERE Z_1BOOKS IN (2, 7);
    DELETE FROM ZPAGE WHERE ZBOOK IN (2, 7);
    DELETE FROM ZBOOK WHERE Z_PK IN (2, 7);
    UPDATE ZBOOK SET ZTITLE = 'It''s changed', Z_OPT = Z_OPT + 1 WHERE Z_PK IN (3, 11);
    UPDATE ZPAGE SET ZTEXT = NULL WHERE Z_PK = (SELECT min(Z_PK) FROM ZPAGE WHERE ZBOOK = 12);
    DELETE FROM Z_1TAGS WHERE Z_1BOOKS = 1;
    INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZAUTHOR, Z5_AUTHOR)
      SELECT (SELECT max(Z_PK) FROM ZBOOK) + 1, Z_ENT, 1, 'A new book', ZAUTHOR, Z5_AUTHOR
      FROM ZBOOK WHERE Z_PK = 1;
    UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM ZBOOK) WHERE Z_NAME = 'Book';
    """

  init() throws {
    workspace = try TemporaryDirectory()
    store = workspace.path("Library.sqlite").path
    before = workspace.path("before.gvault").path
    after = workspace.path("after.gvault").path
    let made = try BuiltTool.run(["sample", store, "--objects", "600", "-q"])
    #expect(made.status == 0, "\(made.stderr)")
    let first = try BuiltTool.run(["backup", store, "--output", before, "-q"])
    #expect(first.status == 0, "\(first.stderr)")
    try sqlScript(store, Self.changes)
    let second = try BuiltTool.run(["backup", store, "--output", after, "-q"])
    #expect(second.status == 0, "\(second.stderr)")
  }

  /// What differs between two stores, as `kind entity pk` lines, worked out from their tables:
  /// rows by primary key, every column but `Z_OPT` compared, and a book's tags (the join
  /// table Book owns) compared as a set.
  static func expected(_ old: String, _ new: String) throws -> Set<String> {
    let script = """
      import sqlite3, sys
      def load(path):
          c = sqlite3.connect(path)
          names = {r[0]: r[1] for r in c.execute('SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY')}
          tags = {}
          for book, tag in c.execute('SELECT Z_1BOOKS, Z_4TAGS FROM Z_1TAGS'):
              tags.setdefault(book, set()).add(tag)
          rows = {}
          for table in ['ZBOOK', 'ZPAGE', 'ZTAG', 'ZWRITER']:
              cur = c.execute('SELECT * FROM ' + table)
              cols = [d[0] for d in cur.description]
              for r in cur:
                  row = dict(zip(cols, r))
                  pk = row['Z_PK']
                  del row['Z_OPT']
                  if table == 'ZBOOK':
                      row['tags'] = sorted(tags.get(pk, ()))
                  rows[(names[row['Z_ENT']], pk)] = row
          return rows
      a, b = load(sys.argv[1]), load(sys.argv[2])
      for key in a.keys() - b.keys(): print('deleted', *key)
      for key in b.keys() - a.keys(): print('inserted', *key)
      for key in a.keys() & b.keys():
          if a[key] != b[key]: print('changed', *key)
      """
    let result = try Subprocess.python(script, [old, new])
    #expect(result.status == 0, "\(result.stderr)")
    return Set(result.stdout.split(separator: "\n").map(String.init))
  }

  /// Restores `archive` to a store in the workspace.
  func restored(_ archive: String, _ name: String) throws -> String {
    let path = workspace.path(name).path
    let result = try BuiltTool.run(["restore", archive, "--to", path, "-q"])
    #expect(result.status == 0, "\(result.stderr)")
    return path
  }

  static func document(_ result: ProcessResult) throws -> [String: Any] {
    try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
  }

  /// The `--json` document of a diff of `old` against `new` by the Library model's versions,
  /// without what names the sides (`names`: `old`, `new`), to compare with another's.
  func sidesUnnamed(
    _ old: String, _ new: String, _ extra: [String], names: [String], input: [UInt8] = []
  ) throws -> NSDictionary {
    // A restored store keeps no model of its own: every side names its version.
    let result = try BuiltTool.run(
      ["diff", old, new, "--json", "--model", Self.libraryModel] + extra, input: input)
    #expect(result.status == 0 || result.status == 1, "\(result.stderr)")
    var document = try Self.document(result)
    var summary = document["summary"] as? [String: Any] ?? [:]
    for name in names {
      summary[name] = nil
      document[name] = nil
    }
    document["summary"] = summary
    return document as NSDictionary
  }

  static func changeLines(_ document: [String: Any]) -> Set<String> {
    let changes = document["changes"] as? [[String: Any]] ?? []
    return Set(
      changes.map { change in
        let kind = change["kind"] as? String ?? "?"
        let key = (change[kind == "inserted" ? "newPrimaryKey" : "oldPrimaryKey"] as? Int) ?? -1
        return "\(kind) \(change["entity"] as? String ?? "?") \(key)"
      })
  }

  @Test func twoArchivesDifferByExactlyTheObjectsTheSQLInsertedDeletedAndChanged() throws {
    let result = try BuiltTool.run(["diff", before, after, "--json"])
    #expect(result.status == 1, "\(result.stderr)")
    let document = try Self.document(result)
    let expected = try Self.expected(try restored(before, "old.sqlite"), store)
    #expect(expected.count >= 8, "\(expected)")
    #expect(Self.changeLines(document) == expected)
    let summary = document["summary"] as? [String: Any]
    #expect(summary?["equal"] as? Bool == false)
    let book = (summary?["entities"] as? [String: Any])?["Book"] as? [String: Int]
    #expect(book?["inserted"] == 1)
  }

  /// Each change's properties as `name: old -> new` lines, in order.
  static func propertyLines(_ changes: [[String: Any]]) -> [[String]] {
    changes.map { change in
      (change["properties"] as? [[String: Any]] ?? []).map {
        "\($0["name"] as? String ?? "?"): \($0["old"] as? String ?? "nil") -> \($0["new"] as? String ?? "nil")"
      }
    }
  }

  @Test func aDiffOfSomeEntitiesReadsOnlyTheirChunksAndGivesWhatTheWholeDiffGives() throws {
    let whole = try Self.document(try BuiltTool.run(["diff", before, after, "--json"]))
    let changes = whole["changes"] as? [[String: Any]] ?? []
    for entity in ["Book", "Page", "Tag", "Writer"] {
      let part = try BuiltTool.run(["diff", before, after, "--entity", entity, "--json"])
      #expect(part.status == 0 || part.status == 1, "\(entity): \(part.stderr)")
      let document = try Self.document(part)
      let counted = Set(
        ((document["summary"] as? [String: Any])?["entities"] as? [String: Any])?.keys.map { $0 }
          ?? [])
      let expected = changes.filter { counted.contains($0["entity"] as? String ?? "") }
      #expect(
        Self.changeLines(document) == Self.changeLines(["changes": expected]), "\(entity)")
      #expect(
        Self.propertyLines(document["changes"] as? [[String: Any]] ?? [])
          == Self.propertyLines(expected), "\(entity)")
    }
  }

  @Test func aChangedObjectShowsEachChangedPropertysOldAndNewValue() throws {
    let result = try BuiltTool.run(["diff", before, after, "--entity", "Book"])
    #expect(result.status == 1, "\(result.stderr)")
    let title = try sqlRows(
      store,
      "SELECT Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book') FROM ZBOOK WHERE Z_PK = 11"
    )
    let entity = title == ["1"] ? "Book" : "GraphicNovel"
    #expect(result.stdout.contains("M \(entity) p11\n    title: \""), "\(result.stdout)")
    #expect(result.stdout.contains("-> \"It's changed\"\n"), "\(result.stdout)")
    // The tag link removed from book 1 is a change of its tags.
    #expect(result.stdout.contains("    tags: Tag/p"), "\(result.stdout)")
    #expect(result.stdout.contains(" -> nil\n"), "\(result.stdout)")
    #expect(result.stdout.contains("title=\"A new book\""), "\(result.stdout)")
  }

  @Test func equalSidesExitZeroAndQuietPrintsNothing() throws {
    let same = try BuiltTool.run(["diff", after, store])
    #expect(same.status == 0, "\(same.stdout)\(same.stderr)")
    #expect(same.stdout.contains("Book: equal ("))
    let quiet = try BuiltTool.run(["diff", before, after, "-q"])
    #expect(quiet.status == 1)
    #expect(quiet.stdout.isEmpty)
  }

  @Test func whereComparesOnlyTheObjectsThePredicateMatchesOnEachSide() throws {
    let result = try BuiltTool.run([
      "diff", before, after, "--entity", "Book", "--where", "title CONTAINS[c] 'CHANGED'", "--json",
    ])
    #expect(result.status == 1, "\(result.stderr)")
    let document = try Self.document(result)
    // Only the new titles match, so on the old side nothing does: two objects inserted.
    let lines = Self.changeLines(document).map { $0.split(separator: " ")[0] }
    #expect(lines.count == 2 && lines.allSatisfy { $0 == "inserted" }, "\(lines)")
  }

  @Test func aKeyAttributeMatchesObjectsWhosePrimaryKeysDiffer() throws {
    // The same book under another primary key, its pages and tags following it.
    let moved = workspace.path("moved.sqlite").path
    _ = try restored(after, "moved.sqlite")
    try sqlScript(
      moved,
      """
      UPDATE ZBOOK SET Z_PK = 5000 WHERE Z_PK = 5;
      UPDATE ZPAGE SET ZBOOK = 5000 WHERE ZBOOK = 5;
      UPDATE Z_1TAGS SET Z_1BOOKS = 5000 WHERE Z_1BOOKS = 5;
      UPDATE Z_PRIMARYKEY SET Z_MAX = 5000 WHERE Z_NAME = 'Book';
      """)
    let byKey = try BuiltTool.run(["diff", after, moved])
    #expect(byKey.status == 1)
    #expect(byKey.stdout.contains(" p5  "), "\(byKey.stdout)")
    let byUUID = try BuiltTool.run([
      "diff", after, moved, "--key", "Book.uniqueID", "--key", "Page.number",
    ])
    // Pages are matched by number here only to show key ordering with duplicates: their
    // references to the moved book name it by its UUID, so nothing about it differs. The book
    // inserted without a UUID matches nothing: it is deleted on one side, inserted on the
    // other. Its title, a key attribute, comes before the other values.
    #expect(byUUID.status == 1, "\(byUUID.stderr)")
    let author = try sqlRows(store, "SELECT ZAUTHOR FROM ZBOOK WHERE Z_PK = 1")[0]
    let lines = byUUID.stdout.split(separator: "\n").filter {
      $0.hasPrefix("+") || $0.hasPrefix("-") || $0.hasPrefix("M")
    }
    #expect(
      lines == [
        "- Book uniqueID=NULL  title=\"A new book\", author=Author/p\(author)",
        "+ Book uniqueID=NULL  title=\"A new book\", author=Author/p\(author)",
      ], "\(byUUID.stdout)")
  }

  @Test func sidesWithDifferentModelsAreComparedAfterMigratingTheOlder() throws {
    let archives = SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Archives")
    let old = archives.appendingPathComponent("Library-1.gvault").path
    let new = archives.appendingPathComponent("Library-2.gvault").path
    let result = try BuiltTool.run(["diff", old, new, "--json"])
    #expect(result.status == 0 || result.status == 1, "\(result.stderr)")
    let summary = try Self.document(result)["summary"] as? [String: Any]
    #expect(summary?["migrated"] as? String == "Library → Library 2")
    // The other way round there is no path: 78, naming each side's model for what it is.
    let reversed = try BuiltTool.run(["diff", new, old])
    #expect(reversed.status == 78)
    #expect(
      reversed.stderr.contains(
        "the model of Library-2.gvault cannot be migrated into the model of Library-1.gvault"),
      "\(reversed.stderr)")
    #expect(reversed.stderr.contains("Library 2 → Library: Book.edition"), "\(reversed.stderr)")
  }

  static let libraryModel = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Library.xcdatamodeld"
  ).path

  /// An older archive is restored straight into the newer archive's model in one pass; the
  /// store it holds, migrated through the road a store takes, must compare the same.
  @Test func anOlderArchiveMigratedInOnePassComparesAsTheStoreItHolds() throws {
    let archives = SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Archives")
    let old = archives.appendingPathComponent("Library-1.gvault").path
    let new = archives.appendingPathComponent("Library-2.gvault").path
    let oldStore = workspace.path("library-1.sqlite").path
    #expect(try BuiltTool.run(["restore", old, "--to", oldStore, "-q"]).status == 0)
    var documents: [NSDictionary] = []
    for source in [old, oldStore] {
      for extra in [[], ["--entity", "Book"]] {
        documents.append(try sidesUnnamed(source, new, extra, names: ["old"]))
      }
    }
    #expect(
      (documents.first?["summary"] as? [String: Any])?["migrated"] as? String
        == "Library → Library 2")
    #expect(documents[0] == documents[2], "the whole diff")
    #expect(documents[1] == documents[3], "the diff of books")
  }

  /// Against a newer store, an older archive is restored straight into the store's model (the
  /// store opened first); the store the archive holds, migrated as a store is, must compare
  /// the same, and so must the newer archive the store was restored from.
  @Test func anOlderArchiveAgainstANewerStoreComparesAsTheStoreItHolds() throws {
    let archives = SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Archives")
    let old = archives.appendingPathComponent("Library-1.gvault").path
    let newArchive = archives.appendingPathComponent("Library-2.gvault").path
    let oldStore = workspace.path("library-1.sqlite").path
    let newStore = workspace.path("library-2.sqlite").path
    #expect(try BuiltTool.run(["restore", old, "--to", oldStore, "-q"]).status == 0)
    #expect(try BuiltTool.run(["restore", newArchive, "--to", newStore, "-q"]).status == 0)
    // On standard input, the archive's model is known only as the restore reads it.
    let piped = Array(try Data(contentsOf: URL(fileURLWithPath: old)))
    for extra in [[], ["--entity", "Book"]] {
      var documents: [NSDictionary] = []
      for (source, new) in [
        (old, newStore), (oldStore, newStore), (old, newArchive), ("-", newStore),
      ] {
        documents.append(
          try sidesUnnamed(
            source, new, extra, names: ["old", "new"], input: source == "-" ? piped : []))
      }
      #expect(
        (documents.first?["summary"] as? [String: Any])?["migrated"] as? String
          == "Library → Library 2", "\(extra)")
      #expect(documents[0] == documents[1], "against the store read as a store: \(extra)")
      #expect(documents[0] == documents[2], "against the newer archive: \(extra)")
      #expect(documents[0] == documents[3], "from standard input: \(extra)")
    }
    // Without a model for the store, nothing of the archive is read: 78, naming the store.
    let unknown = try BuiltTool.run(["diff", old, newStore])
    #expect(unknown.status == 78, "\(unknown.stderr)")
  }

  @Test func mistakesHaveTheirDocumentedStatuses() throws {
    let cases: [([String], Int32, String)] = [
      (["diff", before, after, "--entity", "Nope"], 64, "no such entity"),
      (["diff", before, after, "--where", "title == 'x'"], 64, "exactly one --entity"),
      (["diff", before, after, "--entity", "Book", "--where", "nope == 1"], 64, "nope"),
      (["diff", before, after, "--key", "Book.nope"], 64, "no stored attribute nope"),
      (["diff", before, after, "--key", "Book"], 64, "ENTITY.ATTRIBUTE"),
      (["diff", "-", "-"], 64, "only one side"),
      (["diff", before, workspace.path("missing.gvault").path], 66, "missing.gvault"),
    ]
    for (arguments, status, message) in cases {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == status, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
  }

  @Test func twoSampleStoresAreMatchedByTheirUniqueIDsAndTheSummarySaysSo() throws {
    // A second sample store holds the same books under another store UUID.
    let other = workspace.path("Other.sqlite").path
    #expect(try BuiltTool.run(["sample", other, "--objects", "600", "-q"]).status == 0)
    let book =
      "(SELECT min(Z_PK) FROM ZBOOK WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'))"
    try sqlScript(
      other, "UPDATE ZBOOK SET ZTITLE = 'Other', Z_OPT = Z_OPT + 1 WHERE Z_PK = \(book)")
    let uniqueID = try sqlRows(other, "SELECT hex(ZUNIQUEID) FROM ZBOOK WHERE Z_PK = \(book)")[0]
    let fresh = workspace.path("Fresh.sqlite").path
    #expect(try BuiltTool.run(["sample", fresh, "--objects", "600", "-q"]).status == 0)
    let diff = try BuiltTool.run(["diff", fresh, other])
    #expect(diff.status == 1, "\(diff.stderr)")
    // The changed book is named by its UUID in its usual form, and the summary says why.
    let dashed = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { range in
      String(Array(uniqueID)[range])
    }.joined(separator: "-")
    #expect(diff.stdout.contains("M Book uniqueID=\(dashed)\n"), "\(diff.stdout)")
    #expect(
      diff.stdout.contains(
        "(Book matched by its uniqueness constraint (uniqueID), as the sides are different stores;"),
      "\(diff.stdout)")
  }

  @Test func valuesAreWholeInAPipeCutOnATerminalAndKeyAttributesComeFirst() throws {
    let long = String(repeating: "a title that goes on ", count: 8) + "and ends here"
    try sqlScript(
      store,
      """
      DELETE FROM Z_1TAGS WHERE Z_1BOOKS = 5; DELETE FROM ZPAGE WHERE ZBOOK = 5;
      UPDATE ZBOOK SET ZTITLE = '\(long)' WHERE Z_PK = 5;
      """)
    let archive = workspace.path("long.gvault").path
    #expect(try BuiltTool.run(["backup", store, "--output", archive, "-q"]).status == 0)
    try sqlScript(store, "DELETE FROM ZBOOK WHERE Z_PK = 5")

    // Into a pipe: every value whole, the uniqueness constraint's attribute, then the title,
    // first on a deleted object's line.
    let piped = try BuiltTool.run(["diff", archive, store, "--entity", "Book"])
    #expect(piped.status == 1, "\(piped.stderr)")
    let deleted = try #require(
      piped.stdout.split(separator: "\n").first { $0.hasPrefix("- Book p5") })
    #expect(deleted.hasPrefix("- Book p5  uniqueID="), "\(deleted)")
    #expect(deleted.contains(", title=\"\(long)\", author="), "\(deleted)")
    #expect(!deleted.contains("…"))

    // --show: the properties named, in that order, and no others.
    let shown = try BuiltTool.run([
      "diff", archive, store, "--entity", "Book", "--show", "title,edition",
    ])
    let line = try #require(shown.stdout.split(separator: "\n").first { $0.hasPrefix("- Book p5") })
    let values = try #require(line.components(separatedBy: "  ").last)
    #expect(values.hasPrefix("title=\"\(long)\", edition="), "\(line)")
    #expect(values.components(separatedBy: ", ").count == 2, "\(line)")
    #expect(!line.contains("uniqueID"))

    // On a terminal, long values and lines are cut, unless --full.
    guard Subprocess.isInstalled("script") else { return }
    for (extra, cut) in [([String](), true), (["--full"], false)] {
      let command =
        "stty cols 200 rows 24; exec '\(BuiltTool.path)' "
        + (["diff", archive, store, "--entity", "Book"] + extra).map { "'\($0)'" }.joined(
          separator: " ")
      let screen = try Subprocess.run("script", ["-qfec", command, "/dev/null"]).stdout
      #expect(screen.contains(long) != cut, "\(extra): \(screen)")
      #expect(screen.contains("…") == cut, "\(extra)")
    }
  }

  @Test func aBookRecreatedWithANewTitleIsPointedAtAsALikelyRename() throws {
    let newPK = try recreateBook(in: store, 4, changes: "ZTITLE = 'Renamed'")
    let diff = try BuiltTool.run(["diff", after, store, "--entity", "Book"])
    #expect(diff.status == 1, "\(diff.stderr)")
    #expect(diff.stdout.contains("likely renamed"), "\(diff.stdout)")
    let pair = try #require(
      diff.stdout.split(separator: "\n").first { $0.hasPrefix("  Book p4 -> ") })
    #expect(pair.hasPrefix("  Book p4 -> p\(newPK)  ("), "\(pair)")
    // The deletion and the insertion are still reported as such: nothing was decided.
    #expect(diff.stdout.contains("- Book p4  "))
    #expect(diff.stdout.contains("+ Book p\(newPK)  "))
  }
}
