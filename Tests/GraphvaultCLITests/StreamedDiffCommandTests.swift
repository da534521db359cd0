import Foundation
import TestSupport
import Testing

/// `graphvault diff` of two archives of one model, compared as they stream without restoring
/// either: checked against the diff of the two stores restored from them, which the same
/// command computes with SQL over real stores, in every archive flavour and in the cases where
/// the two archives' entities do not line up.
@Suite(
  "graphvault diff of two archives as they stream",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct StreamedDiffCommandTests {
  let workspace: TemporaryDirectory
  let store: String

  init() throws {
    workspace = try TemporaryDirectory()
    store = workspace.path("Library.sqlite").path
    let made = try BuiltTool.run(["sample", store, "--objects", "600", "-q"])
    #expect(made.status == 0, "\(made.stderr)")
  }

  /// Backs the store up to `name` with `options`.
  func backup(_ name: String, _ options: [String] = []) throws -> String {
    let archive = workspace.path(name).path
    let result = try BuiltTool.run(["backup", store, "--output", archive, "-q"] + options)
    #expect(result.status == 0, "\(result.stderr)")
    return archive
  }

  /// Restores `archive` to a store in the workspace.
  func restored(_ archive: String, _ options: [String] = []) throws -> String {
    let path = workspace.path(URL(fileURLWithPath: archive).lastPathComponent + ".sqlite").path
    let result = try BuiltTool.run(["restore", archive, "--to", path, "-q"] + options)
    #expect(result.status == 0, "\(result.stderr)")
    return path
  }

  /// Expects `diff old new` of the archives to print what `diff` of their restored stores
  /// prints, as text and as JSON (the summary's paths aside).
  func expectSameAsStores(_ old: String, _ new: String, _ options: [String] = []) throws {
    let (oldStore, newStore) = (try restored(old, options), try restored(new, options))
    let streamed = try BuiltTool.run(["diff", old, new] + options)
    let stored = try BuiltTool.run(["diff", oldStore, newStore] + options)
    #expect(streamed.status == 1, "\(streamed.stderr)")
    #expect(streamed.stdout == stored.stdout)
    #expect(streamed.stdout.split(separator: "\n").count > 10, "\(streamed.stdout)")
    func json(_ sides: [String]) throws -> (changes: NSArray, entities: NSDictionary) {
      let result = try BuiltTool.run(["diff"] + sides + ["--json"] + options)
      let document = try #require(
        try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
      let summary = document["summary"] as? [String: Any]
      return (
        document["changes"] as? NSArray ?? [], summary?["entities"] as? NSDictionary ?? [:]
      )
    }
    let (streamedJSON, storedJSON) = (try json([old, new]), try json([oldStore, newStore]))
    #expect(streamedJSON.changes == storedJSON.changes)
    #expect(streamedJSON.entities == storedJSON.entities)
  }

  @Test(arguments: [
    ["--format-version", "2"], ["--format-version", "1"], ["--compression", "gzip"], ["--password"],
  ])
  func twoArchivesComparedAsTheyStreamGiveWhatTheirRestoredStoresGive(flavour: [String]) throws {
    var options: [String] = []
    var backupOptions = flavour
    if flavour == ["--password"] {
      let password = workspace.path("password").path
      try Data("a long passphrase\n".utf8).write(to: URL(fileURLWithPath: password))
      options = ["--password-file", password]
      backupOptions = options
    }
    let old = try backup("old.gvault", backupOptions)
    try sqlScript(store, DiffCommandTests.changes)
    let new = try backup("new.gvault", backupOptions)
    try expectSameAsStores(old, new, options)
  }

  @Test func twoArchivesOfOneModelAreComparedWithoutWritingATemporaryStore() throws {
    let old = try backup("old.gvault")
    try sqlScript(store, DiffCommandTests.changes)
    let new = try backup("new.gvault")
    // No temporary folder at all: a comparison that restored either side could not run.
    let nowhere = ["TMPDIR": workspace.path("no-such-folder").path]
    let streamed = try BuiltTool.run(["diff", old, new], environment: nowhere)
    #expect(streamed.status == 1, "\(streamed.stderr)")
    #expect(streamed.stdout.contains("M Book p11"), "\(streamed.stdout)")
    let restoring = try BuiltTool.run(["diff", old, new, "--entity", "Book"], environment: nowhere)
    #expect(restoring.status != 1, "\(restoring.stdout)")
  }

  @Test func anEntityOneArchiveNoLongerHoldsIsComparedAgainstNothing() throws {
    let old = try backup("old.gvault")
    let pages = try sqlRows(store, "SELECT count(*) FROM ZPAGE")[0]
    try sqlScript(store, "DELETE FROM ZPAGE; UPDATE ZBOOK SET ZTITLE = 'x' WHERE Z_PK = 4;")
    let new = try backup("new.gvault")
    try expectSameAsStores(old, new)
    let result = try BuiltTool.run(["diff", old, new])
    #expect(result.stdout.contains("Page: 0 inserted, \(pages) deleted"), "\(result.stdout)")
    // And the other way round: every page inserted.
    let back = try BuiltTool.run(["diff", new, old])
    #expect(back.stdout.contains("Page: \(pages) inserted, 0 deleted"), "\(back.stdout)")
  }

  @Test func archivesHoldingTheirEntitiesInOtherOrdersGiveWhatTheirStoresGive() throws {
    let old = try backup("old.gvault")
    try sqlScript(store, DiffCommandTests.changes)
    let written = try backup("written.gvault")
    // The same archive with its entities in another order (another tool may write them so):
    // the tags' chunks first.
    var forger = try ArchiveForger(reading: written)
    let tags = forger.members.filter { $0.path.hasPrefix("objects/Tag/") }
    forger.members.removeAll { $0.path.hasPrefix("objects/Tag/") }
    let first = try #require(forger.members.firstIndex { $0.path.hasPrefix("objects/") })
    forger.members.insert(contentsOf: tags, at: first)
    let new = workspace.path("new.gvault").path
    try forger.write(to: new)
    #expect(try BuiltTool.run(["verify", new, "-q"]).status == 0)
    try expectSameAsStores(old, new)
    // Where the orders part, the rest of each archive is restored to a private store.
    let nowhere = ["TMPDIR": workspace.path("no-such-folder").path]
    #expect(try BuiltTool.run(["diff", old, new], environment: nowhere).status >= 64)
  }

  @Test func anArchiveWhoseHeaderMiscountsItsObjectsIsRefusedByVerifyRestoreAndDiff() throws {
    let old = try backup("old.gvault")
    var forger = try ArchiveForger(reading: try backup("written.gvault"))
    try forger.edit("graphvault.plist") { header in
      guard var fields = header.dictionaryValue, var objects = fields["objects"]?.dictionaryValue
      else { return }
      objects["Tag"] = .integer(0)
      fields["objects"] = .dictionary(objects)
      header = .dictionary(fields)
    }
    let new = workspace.path("new.gvault").path
    try forger.write(to: new)
    let restore = workspace.path("restored.sqlite").path
    for arguments in [["verify", new], ["restore", new, "--to", restore], ["diff", old, new]] {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == 65, "\(arguments): \(result.stderr)")
      #expect(
        result.stderr.contains("counts no objects of Tag")
          || result.stderr.contains("the header counts 0 objects of Tag"),
        "\(arguments): \(result.stderr)")
    }
    #expect(!FileManager.default.fileExists(atPath: restore))
  }

  @Test func damageFoundAtTheEndOfAnArchiveFailsTheComparisonWith65NamingIt() throws {
    let old = try backup("old.gvault")
    try sqlScript(store, DiffCommandTests.changes)
    var forger = try ArchiveForger(reading: try backup("written.gvault"))
    forger.remove(ArchiveForger.index)
    let new = workspace.path("new.gvault").path
    try forger.write(to: new, fixingIndex: false)
    let result = try BuiltTool.run(["diff", old, new])
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stderr.contains("incomplete"), "\(result.stderr)")
    #expect(result.stderr.contains("new.gvault"), "\(result.stderr)")
  }
}
