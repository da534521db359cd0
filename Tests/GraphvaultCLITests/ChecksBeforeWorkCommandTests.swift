import Foundation
import TestSupport
import Testing

/// Mistakes in a command line are found before the archive is read past its first members: on
/// an archive cut short after them, a command that asks for what the model lacks exits 64 (a
/// usage error), where the same command asking for what the model has reads on and meets the
/// damage (65). Were the check made after the objects, the cut archive would answer 65 to both.
@Suite(
  "checks before work",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct ChecksBeforeWorkCommandTests {
  let workspace: TemporaryDirectory
  let store: String
  /// A backup of `store` without its last half: header, model and model cache are whole.
  let cut: String

  init() throws {
    workspace = try TemporaryDirectory()
    store = workspace.path("Library.sqlite").path
    let archive = workspace.path("whole.gvault").path
    cut = workspace.path("cut.gvault").path
    let made = try BuiltTool.run(["sample", store, "--objects", "4000", "-q"])
    #expect(made.status == 0, "\(made.stderr)")
    let backup = try BuiltTool.run(["backup", store, "--output", archive, "-q"])
    #expect(backup.status == 0, "\(backup.stderr)")
    let bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
    try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
  }

  /// The command with `selection` appended, for each command that takes a selection.
  func commands(_ selection: [String]) -> [[String]] {
    [
      ["merge", cut, "--into", store] + selection,
      ["fixture", cut, "--output", workspace.path("fixture.gvault").path] + selection,
      ["restore", cut, "--to", workspace.path("restored.sqlite").path] + selection,
      ["diff", store, cut] + selection,
    ]
  }

  @Test func aSelectionTheModelLacksIsAUsageErrorBeforeTheArchiveIsRead() throws {
    let mistakes: [([String], String)] = [
      (["--entity", "Bok"], "Bok"),
      (["--entity", "Book", "--where", "title =="], "predicate"),
      (["--entity", "Book", "--where", "nope > 1"], "nope"),
    ]
    for (selection, message) in mistakes {
      for arguments in commands(selection) {
        let result = try BuiltTool.run(arguments + ["-q"])
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
      }
    }
    for arguments in [
      ["merge", cut, "--into", store, "--entity", "Book", "--include", "pagez"],
      ["merge", cut, "--into", store, "--entity", "Book", "--key", "Book.nope"],
      ["fixture", cut, "--output", "-", "--entity", "Book", "--sort", "nope"],
      [
        "restore", cut, "--to", workspace.path("r.sqlite").path, "--entity", "Book", "--include",
        "x",
      ],
      ["diff", store, cut, "--key", "Book.nope"],
    ] {
      let result = try BuiltTool.run(arguments + ["-q"])
      #expect(result.status == 64, "\(arguments): \(result.stderr)")
    }
  }

  @Test func theSameCommandsAskingForWhatTheModelHasMeetTheDamage() throws {
    for arguments in commands(["--entity", "Book", "--where", "title BEGINSWITH 'Book 1'"]) {
      let result = try BuiltTool.run(arguments + ["-q"])
      #expect(result.status == 65, "\(arguments): \(result.stderr)")
    }
  }

  @Test func aMergeIntoAStoreWithoutAModelIsRefusedBeforeTheSourceIsRead() throws {
    try sqlScript(store, "DELETE FROM Z_MODELCACHE;")
    let result = try BuiltTool.run(["merge", cut, "--into", store, "--entity", "Book", "-q"])
    #expect(result.status == 78, "\(result.stderr)")
    #expect(result.stderr.contains("Z_MODELCACHE") || result.stderr.contains("model"))
  }
}
