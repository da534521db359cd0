import Foundation
import TestSupport
import Testing

/// `graphvault merge` from a framed archive reads only what its selection reaches
/// (`SelectionArchive`); from standard input it reads the archive whole. The same merge both
/// ways, into two copies of the same store, must write the same rows and report the same
/// counts, whatever the selection: a predicate on the object's own attributes, `--include`
/// paths, an object whose members the store still holds, a key path (read whole either way).
@Suite(
  "graphvault merge from part of an archive",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct MergeFromPartOfAnArchiveCommandTests {
  let workspace: TemporaryDirectory
  let store: String
  let archive: String
  /// The alias of the author deleted after the backup (their books kept, unlinked).
  let deletedAlias: String

  init() throws {
    workspace = try TemporaryDirectory()
    store = workspace.path("Library.sqlite").path
    archive = workspace.path("before.gvault").path
    let made = try BuiltTool.run(["sample", store, "--objects", "1500", "-q"])
    #expect(made.status == 0, "\(made.stderr)")
    let backup = try BuiltTool.run(["backup", store, "--output", archive, "-q"])
    #expect(backup.status == 0, "\(backup.stderr)")
    deletedAlias =
      try sqlRows(
        store,
        "SELECT ZALIAS FROM ZWRITER WHERE Z_PK = (SELECT ZAUTHOR FROM ZBOOK GROUP BY ZAUTHOR ORDER BY count(*) DESC LIMIT 1)"
      ).first ?? ""
    // Books deleted with their pages and tag links; an author deleted whose books stay
    // (unlinked, as Core Data's nullify leaves them); a tag renamed since.
    try sqlScript(
      store,
      """
      DELETE FROM Z_1TAGS WHERE Z_1BOOKS IN (SELECT Z_PK FROM ZBOOK WHERE ZTITLE LIKE 'Book 1%');
      DELETE FROM ZPAGE WHERE ZBOOK IN (SELECT Z_PK FROM ZBOOK WHERE ZTITLE LIKE 'Book 1%');
      DELETE FROM ZBOOK WHERE ZTITLE LIKE 'Book 1%';
      UPDATE ZBOOK SET ZAUTHOR = NULL, Z5_AUTHOR = NULL, Z_OPT = Z_OPT + 1
        WHERE ZAUTHOR = (SELECT Z_PK FROM ZWRITER WHERE ZALIAS = '\(deletedAlias)');
      DELETE FROM ZWRITER WHERE ZALIAS = '\(deletedAlias)';
      UPDATE ZTAG SET ZNAME = 'renamed since', Z_OPT = Z_OPT + 1 WHERE Z_PK = 2;
      """)
  }

  /// Every table's rows, sorted.
  func rows(_ path: String) throws -> [String] {
    var rows: [String] = []
    for table in try sqlRows(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1")
    {
      rows += try sqlRows(path, "SELECT '\(table)', * FROM \(table)").sorted()
    }
    return rows
  }

  /// The `--json` document without the source's name.
  func report(_ result: ProcessResult) throws -> NSDictionary? {
    var object = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
    object?["source"] = nil
    object?["store"] = nil
    return object.map { $0 as NSDictionary }
  }

  /// Merges `selection` from the archive read in part into one copy of the store and read
  /// whole (standard input) into another, and checks both give the same.
  func expectTheSameBothWays(_ selection: [String]) throws -> NSDictionary? {
    let partly = workspace.path("partly-\(UUID().uuidString).sqlite").path
    let whole = workspace.path("whole-\(UUID().uuidString).sqlite").path
    for copy in [partly, whole] { try FileManager.default.copyItem(atPath: store, toPath: copy) }
    let first = try BuiltTool.run(["merge", archive, "--into", partly, "--json"] + selection)
    #expect(first.status == 0, "\(first.stderr)")
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: archive)))
    let second = try BuiltTool.run(
      ["merge", "-", "--into", whole, "--json"] + selection, input: bytes)
    #expect(second.status == 0, "\(second.stderr)")
    let report = try self.report(first)
    #expect(report == (try self.report(second)))
    #expect(try rows(partly) == rows(whole))
    #expect(try sqlRows(partly, "PRAGMA integrity_check") == ["ok"])
    return report
  }

  static func inserted(_ report: NSDictionary?, _ entity: String) -> Int? {
    ((report?["entities"] as? [String: Any])?[entity] as? [String: Any])?["inserted"] as? Int
  }

  @Test func booksChosenByTheirTitleComeBackWithTheirPagesAndTags() throws {
    let report = try expectTheSameBothWays([
      "--entity", "Book", "--where", "title BEGINSWITH 'Book 1'", "--include", "pages",
      "--include", "tags",
    ])
    #expect((Self.inserted(report, "Book") ?? 0) > 0, "\(String(describing: report))")
    #expect((Self.inserted(report, "Page") ?? 0) > 0, "\(String(describing: report))")
  }

  @Test func anAuthorComesBackAndTakesBackTheBooksThatLostThem() throws {
    let report = try expectTheSameBothWays([
      "--entity", "Author", "--where", "alias == '\(deletedAlias)'",
    ])
    #expect(Self.inserted(report, "Author") == 1, "\(String(describing: report))")
    let linked = ((report?["entities"] as? [String: Any])?["Book"] as? [String: Any])?["linked"]
    #expect((linked as? Int ?? 0) > 0, "\(String(describing: report))")
  }

  @Test(arguments: [
    ["--entity", "Tag"],
    ["--entity", "Book", "--where", "author.alias == 'nobody' OR title BEGINSWITH 'Book 1'"],
    ["--entity", "GraphicNovel", "--where", "isBlackAndWhite == YES AND rating > 2.5"],
    ["--entity", "Book", "--where", "title BEGINSWITH[c] 'book 1'", "--include", "author.books"],
  ])
  func everySelectionMergesTheSameFromPartOfTheArchiveAsFromAllOfIt(selection: [String]) throws {
    _ = try expectTheSameBothWays(selection)
  }

  /// A chunk of pages damaged: a merge of an author (whose books the store keeps) never reads
  /// one, so it is done; read whole, the archive is refused (65) before anything is merged.
  @Test func aMergeReadsOnlyTheChunksItsSelectionReaches() throws {
    try damageMember(startingWith: "objects/Page/", inArchive: archive)
    let selection = ["--entity", "Author", "--where", "alias == '\(deletedAlias)'"]
    let merged = try BuiltTool.run(["merge", archive, "--into", store] + selection)
    #expect(merged.status == 0, "\(merged.stderr)")
    #expect(
      try sqlRows(store, "SELECT count(*) FROM ZWRITER WHERE ZALIAS = '\(deletedAlias)'") == ["1"])
    let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: archive)))
    let whole = try BuiltTool.run(
      ["merge", "-", "--into", store, "--dry-run"] + selection, input: bytes)
    #expect(whole.status == 65, "\(whole.stderr)")
    // A selection that reaches pages reads the damaged chunk, and says so.
    let pages = try BuiltTool.run([
      "merge", archive, "--into", store, "--entity", "Book", "--include", "pages", "--dry-run",
    ])
    #expect(pages.status == 65, "\(pages.stderr)")
  }

  /// A chunk of tags damaged: books the store still holds are matched, not inserted, so the
  /// tags they link to are never read and their merge is done; books the store lost come back
  /// with their tags, which reads the damaged chunk (65).
  @Test func theMembersOfObjectsTheStoreHoldsAreNotRead() throws {
    try damageMember(startingWith: "objects/Tag/", inArchive: archive)
    let held = try BuiltTool.run([
      "merge", archive, "--into", store, "--entity", "Book", "--where",
      "title BEGINSWITH 'Book 2'", "--json",
    ])
    #expect(held.status == 0, "\(held.stderr)")
    let report = try self.report(held)
    let books = (report?["entities"] as? [String: Any])?["Book"] as? [String: Any]
    #expect((books?["present"] as? Int ?? 0) > 0, "\(String(describing: report))")
    #expect((Self.inserted(report, "Book") ?? 0) == 0, "\(String(describing: report))")
    let lost = try BuiltTool.run([
      "merge", archive, "--into", store, "--entity", "Book", "--where",
      "title BEGINSWITH 'Book 1'", "--dry-run",
    ])
    #expect(lost.status == 65, "\(lost.stderr)")
  }
}
