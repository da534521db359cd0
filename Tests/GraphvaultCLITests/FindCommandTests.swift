import Foundation
import TestSupport
import Testing

/// `graphvault find` over five nightly backups of a sample store, between which a book is
/// retitled and then deleted: which archives still hold it, and its history, checked against
/// what was done; and how little of each archive it reads.
@Suite(
  "graphvault find", .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct FindCommandTests {
  let workspace: TemporaryDirectory
  let store: String
  let folder: String
  let title: String

  static let days = ["2026-11-19", "2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23"]

  init() throws {
    workspace = try TemporaryDirectory()
    store = workspace.path("Library.sqlite").path
    folder = workspace.path("nightly").path + "/"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    let made = try BuiltTool.run(["sample", store, "--objects", "1500", "-q"])
    #expect(made.status == 0, "\(made.stderr)")
    title = try sqlRows(store, "SELECT ZTITLE FROM ZBOOK WHERE Z_PK = 2")[0]
    for (night, day) in Self.days.enumerated() {
      let backup = try BuiltTool.run([
        "backup", store, "--output", folder, "--time", "\(day)T03:00:00Z", "-q",
      ])
      #expect(backup.status == 0, "\(backup.stderr)")
      // After the second night the book is retitled; after the third, deleted.
      if night == 1 {
        try sqlScript(
          store, "UPDATE ZBOOK SET ZTITLE = 'Renamed', Z_OPT = Z_OPT + 1 WHERE Z_PK = 2")
      } else if night == 2 {
        try sqlScript(
          store,
          "DELETE FROM Z_1TAGS WHERE Z_1BOOKS = 2; DELETE FROM ZPAGE WHERE ZBOOK = 2; DELETE FROM ZBOOK WHERE Z_PK = 2"
        )
      }
    }
  }

  static func document(_ result: ProcessResult) throws -> [String: Any] {
    try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
  }

  /// Per archive (newest first), the primary keys found.
  static func found(_ document: [String: Any]) -> [[Int]] {
    (document["archives"] as? [[String: Any]] ?? []).map { archive in
      (archive["objects"] as? [[String: Any]] ?? []).compactMap { $0["primaryKey"] as? Int }
    }
  }

  @Test func theDeletedBookIsInTheArchivesMadeBeforeItWasDeletedOnly() throws {
    let prefix = String(title.prefix(while: { $0 != ":" })) + ":"
    let result = try BuiltTool.run([
      "find", folder, "--entity", "Book", "--where",
      "title BEGINSWITH '\(prefix)' OR title == 'Renamed'", "--json",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let document = try Self.document(result)
    // Newest first: deleted after the third night, so only the three oldest hold it.
    #expect(Self.found(document) == [[], [], [2], [2], [2]])
    let archives = document["archives"] as? [[String: Any]] ?? []
    #expect(
      archives.map { $0["created"] as? String } == Self.days.reversed().map { "\($0)T03:00:00Z" })
  }

  @Test func historyTellsWhenTheObjectAppearedChangedAndWasGone() throws {
    let result = try BuiltTool.run(["find", folder, "--entity", "Book", "--history", "p2"])
    #expect(result.status == 0, "\(result.stderr)")
    let events = result.stdout.split(separator: "\n").filter { !$0.hasPrefix(" ") }.map {
      $0.split(separator: " ", omittingEmptySubsequences: true)[1]
    }
    #expect(events == ["appeared", "unchanged", "changed", "gone", "gone"], "\(result.stdout)")
    #expect(result.stdout.contains("    title: \"\(title)\" -> \"Renamed\"\n"), "\(result.stdout)")
    // Deleted for good: no other book is like it.
    #expect(!result.stdout.contains("most like it"), "\(result.stdout)")
  }

  @Test func historyPointsAtTheObjectMostLikeOneThatIsGoneWithoutDecidingForTheUser() throws {
    let later = workspace.path("later").path + "/"
    try FileManager.default.createDirectory(atPath: later, withIntermediateDirectories: false)
    let name = "Library-20261124T030000.000Z.gvault"
    #expect(try BuiltTool.run(["backup", store, "--output", later + name, "-q"]).status == 0)
    // The app re-creates book 3 under a new key, retitled, its tags and pages moved with it.
    // Book 3 may be a Book or a GraphicNovel.
    let entity = try sqlRows(
      store,
      "SELECT Z_NAME FROM Z_PRIMARYKEY WHERE Z_ENT = (SELECT Z_ENT FROM ZBOOK WHERE Z_PK = 3)")[0]
    let newPK = try recreateBook(in: store, 3, changes: "ZTITLE = 'Re-created'")
    let newer = "Library-20261125T030000.000Z.gvault"
    #expect(try BuiltTool.run(["backup", store, "--output", later + newer, "-q"]).status == 0)

    let result = try BuiltTool.run(["find", later, "--entity", "Book", "--history", "p3"])
    #expect(result.status == 0, "\(result.stderr)")
    let gone = try #require(
      result.stdout.split(separator: "\n").first { $0.contains("  gone  ") }, "\(result.stdout)")
    #expect(gone.contains(newer))
    #expect(gone.contains("(most like it there, not decided: \(entity) p\(newPK), "), "\(gone)")
    let json = try Self.document(
      BuiltTool.run(["find", later, "--entity", "Book", "--history", "p3", "--json"]))
    let archives = json["archives"] as? [[String: Any]] ?? []
    let successor = archives.first?["likelySuccessor"] as? [String: Any]
    #expect((successor?["object"] as? [String: Any])?["primaryKey"] as? Int == newPK)
    let (equal, compared) = (successor?["equal"] as? Int, successor?["compared"] as? Int)
    #expect(equal != nil && equal == compared.map { $0 - 1 }, "\(String(describing: successor))")
  }

  @Test func aSmallEntityIsFoundReadingAFractionOfTheArchives() throws {
    let result = try BuiltTool.run(["find", folder, "--entity", "Tag", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let document = try Self.document(result)
    let read = try #require(document["bytesRead"] as? Int)
    let total = try #require(document["bytes"] as? Int)
    // Of each 260 KB archive: its trailer, its index and the members a restore begins with
    // (about 13 KB together), and the tags' chunk.
    #expect(read > 0 && read * 15 < total, "read \(read) of \(total)")
    let tags = try sqlRows(store, "SELECT count(*) FROM ZTAG")[0]
    #expect(Self.found(document).allSatisfy { String($0.count) == tags })
  }

  @Test func aSearchOfBooksByTitleReadsTheirCoversOnlyInTheChunksHoldingAMatch() throws {
    func search(_ arguments: [String]) throws -> (read: Int, found: [[Int]]) {
      let result = try BuiltTool.run(["find", folder, "--entity", "Book"] + arguments + ["--json"])
      // 1 when nothing is found, as grep.
      #expect(result.status == 0 || result.status == 1, "\(result.stderr)")
      let document = try Self.document(result)
      return (document["bytesRead"] as? Int ?? 0, Self.found(document))
    }
    let every = try search([])
    let none = try search(["--where", "title == 'No such title'"])
    let prefix = String(title.prefix(while: { $0 != ":" })) + ":"
    let one = try search(["--where", "title BEGINSWITH '\(prefix)'"])
    // The covers, a frame of their own in each chunk of books, are most of its bytes: a
    // search that matches nothing reads the titles, not them.
    #expect(none.found.allSatisfy { $0.isEmpty })
    #expect(none.read * 2 < every.read, "\(none.read) against \(every.read)")
    // Retitled after the second night, deleted after the third (newest first).
    #expect(one.found == [[], [], [], [2], [2]])
    #expect(one.read > none.read && one.read <= every.read)
    // What is shown of the book found is what reading the whole archive shows.
    let gzip = workspace.path("gzip-one").path + "/"
    try FileManager.default.createDirectory(atPath: gzip, withIntermediateDirectories: false)
    let archive = try #require(
      try FileManager.default.contentsOfDirectory(atPath: folder).sorted().first)
    let copy = try BuiltTool.run([
      "restore", folder + archive, "--to", workspace.path("oldest.sqlite").path, "-q",
    ])
    #expect(copy.status == 0, "\(copy.stderr)")
    #expect(
      try BuiltTool.run([
        "backup", workspace.path("oldest.sqlite").path, "--output", gzip + "Library.gvault",
        "--compression", "gzip", "-q",
      ]).status == 0)
    func shown(_ location: String) throws -> [String: Any]? {
      let result = try BuiltTool.run([
        "find", location, "--entity", "Book", "--where", "title BEGINSWITH '\(prefix)'", "--json",
      ])
      let archives = try Self.document(result)["archives"] as? [[String: Any]]
      return (archives?.first?["objects"] as? [[String: Any]])?.first
    }
    let framed = try #require(try shown(folder + archive))
    let whole = try #require(try shown(gzip + "Library.gvault"))
    #expect(NSDictionary(dictionary: framed).isEqual(to: whole))
  }

  @Test func anArchiveThatIsNotFramedIsReadWhole() throws {
    let gzip = workspace.path("gzip").path + "/"
    try FileManager.default.createDirectory(atPath: gzip, withIntermediateDirectories: false)
    let backup = try BuiltTool.run([
      "backup", store, "--output", gzip, "--compression", "gzip", "-q",
    ])
    #expect(backup.status == 0, "\(backup.stderr)")
    let result = try BuiltTool.run(["find", gzip, "--entity", "Tag", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let document = try Self.document(result)
    #expect(document["bytesRead"] as? Int == document["bytes"] as? Int)
    #expect(Self.found(document).first?.isEmpty == false)
  }

  @Test func aDamagedFrameIsReportedAndTheOtherArchivesStillSearched() throws {
    let archives = try FileManager.default.contentsOfDirectory(atPath: folder)
      .filter { $0.hasSuffix(".gvault") }.sorted()
    let damaged = folder + archives[0]
    // The index says where each member's frame is: damage the first Tag chunk's.
    try damageMember(startingWith: "objects/Tag/", inArchive: damaged)
    let result = try BuiltTool.run(["find", folder, "--entity", "Tag", "--json"])
    #expect(result.status == 65, "\(result.stderr)")
    let document = try Self.document(result)
    let errors = (document["archives"] as? [[String: Any]] ?? []).map { $0["error"] as? String }
    #expect(errors.filter { $0 != nil }.count == 1, "\(errors)")
    #expect(Self.found(document).filter { !$0.isEmpty }.count == 4)
  }

  @Test func mistakesHaveTheirDocumentedStatuses() throws {
    let cases: [([String], Int32, String)] = [
      (["find", folder, "--entity", "Book", "--where", "author.alias == 'x'"], 64, "key paths"),
      (["find", folder, "--entity", "Nope"], 64, "no such entity"),
      (["find", folder, "--entity", "Book", "--history", "twelve"], 64, "--history twelve"),
      (["find", workspace.path("none").path, "--entity", "Book"], 66, "none"),
      (["find", folder, "--entity", "Book", "--where", "title == 'no such title'"], 1, "read "),
    ]
    for (arguments, status, message) in cases {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == status, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
  }
}
