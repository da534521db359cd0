import Foundation
import TestSupport
import Testing

/// A search by attribute (`find`, `merge --where`) passes over the chunks whose values' bounds
/// in the index (`values`, FORMAT.md section 3) rule its predicate out. Shown with a damaged
/// chunk: a search that its bounds rule out never reads it and succeeds; one they cannot rule
/// out reads it and is refused (65), as it would be without bounds.
@Suite(
  "Chunks passed over by the bounds of their values",
  .enabled(
    if: Subprocess.isInstalled("python3") && Subprocess.isInstalled("zstd"),
    "needs python3 and zstd"))
struct ValueBoundsCommandTests {
  let workspace: TemporaryDirectory
  let store: String
  let archive: String

  /// A store of two chunks of books, the second's first frame damaged in the archive.
  init() throws {
    workspace = try TemporaryDirectory()
    store = workspace.path("Library.sqlite").path
    archive = workspace.path("nightly.gvault").path
    let made = try BuiltTool.run(["sample", store, "--objects", "40000", "-q"])
    #expect(made.status == 0, "\(made.stderr)")
    let backup = try BuiltTool.run(["backup", store, "--output", archive, "-q"])
    #expect(backup.status == 0, "\(backup.stderr)")
    let chunks = try members(of: archive).filter { $0.path.hasPrefix("objects/Book/") }
    #expect(chunks.count >= 2, "\(chunks.map(\.path))")
    try damageMember(startingWith: "objects/Book/000002", inArchive: archive, atStart: true)
  }

  @Test func aFindWhoseTitleTheBoundsRuleOutNeverReadsTheChunk() throws {
    // "Book 1:" lies below every title of the second chunk (Book 12xxx: ... and up).
    let found = try BuiltTool.run([
      "find", archive, "--entity", "Book", "--where", "title BEGINSWITH 'Book 1:'",
    ])
    #expect(found.status == 0, "\(found.stderr)")
    #expect(found.stdout.contains("title=\"Book 1: "), "\(found.stdout)")
    // ENDSWITH has no bounds to go by: every chunk is read, the damaged one too.
    let every = try BuiltTool.run([
      "find", archive, "--entity", "Book", "--where", "title ENDSWITH 'nowhere'",
    ])
    #expect(every.status == 65, "\(every.stderr)")
    #expect(every.stderr.contains("objects/Book/000002"), "\(every.stderr)")
  }

  @Test func aMergeByTitleOrNumberReadsOnlyTheChunksItsBoundsAllow() throws {
    let target = workspace.path("target.sqlite").path
    try FileManager.default.copyItem(atPath: store, toPath: target)
    try sqlScript(
      target,
      """
      DELETE FROM Z_1TAGS WHERE Z_1BOOKS IN (SELECT Z_PK FROM ZBOOK WHERE Z_PK <= 3);
      DELETE FROM ZPAGE WHERE ZBOOK IN (SELECT Z_PK FROM ZBOOK WHERE Z_PK <= 3);
      DELETE FROM ZBOOK WHERE Z_PK <= 3;
      """)
    for predicate in ["title MATCHES 'Book [1-3]:.*'", "sales < 0 OR title IN {'Book 2: x'}"] {
      let merged = try BuiltTool.run([
        "merge", archive, "--into", target, "--entity", "Book", "--where", predicate,
        "--include", "pages", "--dry-run",
      ])
      #expect(merged.status == 0, "\(predicate): \(merged.stderr)")
    }
    let merged = try BuiltTool.run([
      "merge", archive, "--into", target, "--entity", "Book", "--where",
      "title MATCHES 'Book [1-3]:.*'", "--include", "pages",
    ])
    #expect(merged.status == 0, "\(merged.stderr)")
    #expect(try sqlRows(target, "SELECT count(*) FROM ZBOOK WHERE Z_PK <= 3") == ["3"])
    let reaching = try BuiltTool.run([
      "merge", archive, "--into", target, "--entity", "Book", "--where", "sales >= 0",
      "--dry-run",
    ])
    #expect(reaching.status == 65, "\(reaching.stderr)")
  }
}
