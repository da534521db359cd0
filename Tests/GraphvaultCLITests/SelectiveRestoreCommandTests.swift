import Foundation
import TestSupport
import Testing

/// `graphvault restore --entity --where --include`: just the objects chosen, with their
/// closure, checked with SQL against the store the archive was made from.
@Suite(
  "graphvault restore --entity (selective)",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct SelectiveRestoreCommandTests {
  let workspace: TemporaryDirectory
  let store: String
  let archive: String

  init() throws {
    workspace = try TemporaryDirectory()
    store = workspace.path("Library.sqlite").path
    archive = workspace.path("Library.gvault").path
    let made = try BuiltTool.run(["sample", store, "--objects", "600", "-q"])
    #expect(made.status == 0, "\(made.stderr)")
    let backup = try BuiltTool.run(["backup", store, "--output", archive, "-q"])
    #expect(backup.status == 0, "\(backup.stderr)")
  }

  @Test func onlyTheChosenObjectsTheirAuthorsAndIncludedPagesAreRestored() throws {
    let target = workspace.path("Chosen.sqlite").path
    let result = try BuiltTool.run([
      "restore", archive, "--to", target, "--entity", "Book", "--where",
      "title CONTAINS 'orbit' AND sales > 100000", "--include", "pages", "--json",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let chosen = try sqlRows(
      store,
      "SELECT Z_PK FROM ZBOOK WHERE instr(ZTITLE, 'orbit') > 0 AND ZSALES > 100000 ORDER BY Z_PK")
    #expect(!chosen.isEmpty)
    #expect(try sqlRows(target, "SELECT Z_PK FROM ZBOOK ORDER BY Z_PK") == chosen)
    let list = chosen.joined(separator: ",")
    #expect(
      try sqlRows(target, "SELECT Z_PK, ZTEXT FROM ZPAGE ORDER BY Z_PK")
        == sqlRows(store, "SELECT Z_PK, ZTEXT FROM ZPAGE WHERE ZBOOK IN (\(list)) ORDER BY Z_PK"))
    #expect(
      try sqlRows(target, "SELECT Z_PK FROM ZWRITER ORDER BY Z_PK")
        == sqlRows(
          store, "SELECT DISTINCT ZAUTHOR FROM ZBOOK WHERE Z_PK IN (\(list)) ORDER BY ZAUTHOR"))
    #expect(try sqlRows(target, "PRAGMA integrity_check") == ["ok"])
    #expect(
      try sqlRows(
        target, "SELECT count(*) FROM ZBOOK WHERE ZAUTHOR NOT IN (SELECT Z_PK FROM ZWRITER)")
        == ["0"])
    let json = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
    #expect(json?["selected"] as? Int == chosen.count)
    // The restored store is an ordinary store: it backs up and verifies.
    let again = try BuiltTool.run([
      "backup", target, "--output", workspace.path("again.gvault").path, "-q",
    ])
    #expect(again.status == 0, "\(again.stderr)")
  }

  @Test func aSelectionReadFromPartOfTheArchiveRestoresWhatOneReadFromAllOfItDoes() throws {
    // The framed archive is read in part; a gzip archive of the same store only whole.
    let whole = workspace.path("Whole.gvault").path
    let backup = try BuiltTool.run([
      "backup", store, "--output", whole, "--compression", "gzip", "-q",
    ])
    #expect(backup.status == 0, "\(backup.stderr)")
    for (number, selection) in [
      ["--entity", "Book", "--where", "title CONTAINS 'orbit'", "--include", "pages"],
      ["--entity", "Page", "--where", "number == 2"],
      ["--entity", "Author", "--include", "books.tags"],
    ].enumerated() {
      var restored: [String] = []
      for (name, source) in [("part", archive), ("whole", whole)] {
        let target = workspace.path("\(name)-\(number).sqlite").path
        let result = try BuiltTool.run(["restore", source, "--to", target] + selection + ["-q"])
        #expect(result.status == 0, "\(selection): \(result.stderr)")
        restored.append(target)
      }
      // Schema, bookkeeping and rows, table by table.
      let schema = "SELECT type, name, sql FROM sqlite_master ORDER BY name"
      #expect(try sqlRows(restored[0], schema) == sqlRows(restored[1], schema), "\(selection)")
      let tables = try sqlRows(
        restored[0], "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      #expect(tables.contains("ZBOOK") && tables.contains("Z_METADATA"))
      for table in tables {
        let rows = "SELECT * FROM \(table)"
        #expect(
          try sqlRows(restored[0], rows).sorted() == sqlRows(restored[1], rows).sorted(),
          "\(selection): \(table)")
      }
    }
  }

  @Test func aDryRunCountsTheSelectionAndWritesNothing() throws {
    let target = workspace.path("Dry.sqlite").path
    let result = try BuiltTool.run([
      "restore", archive, "--to", target, "--entity", "Book", "--where", "rating > 4", "--dry-run",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let count = try sqlRows(store, "SELECT count(*) FROM ZBOOK WHERE ZRATING > 4")[0]
    #expect(result.stdout.contains("selection: \(count) objects chosen"), "\(result.stdout)")
    #expect(!FileManager.default.fileExists(atPath: target))
  }

  @Test func aSelectionMigratesWhenAModelIsGiven() throws {
    let fixtures = SharedFixtures.packageRoot.appendingPathComponent("Fixtures")
    let target = workspace.path("Migrated.sqlite").path
    let result = try BuiltTool.run([
      "restore", fixtures.appendingPathComponent("Archives/Library-1.gvault").path, "--to", target,
      "--model", fixtures.appendingPathComponent("Library.xcdatamodeld").path, "--entity", "Author",
      "--json",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let json = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
    #expect(json?["modelVersion"] as? String == "Library 3")
    #expect((json?["objects"] as? [String: Int])?["Author"] == json?["selected"] as? Int)
  }

  @Test func selectionMistakesAreUsageErrorsAndWriteNothing() throws {
    let target = workspace.path("Bad.sqlite").path
    for (arguments, message) in [
      (["--entity", "Nope"], "no entity Nope"),
      (["--entity", "Book", "--where", "nope == 1"], "nope"),
      (["--entity", "Book", "--include", "nope"], "nope"),
      (["--where", "title == 'x'"], "need --entity"),
    ] {
      let result = try BuiltTool.run(["restore", archive, "--to", target] + arguments)
      #expect(result.status == 64, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
      #expect(!FileManager.default.fileExists(atPath: target))
    }
  }
}
