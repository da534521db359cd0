import Foundation
import TestSupport
import Testing

@Suite("Pipes, --json and --quiet")
struct StreamAndOutputCommandTests {
  static func shell(_ script: String) throws -> ProcessResult {
    try Subprocess.run("sh", ["-c", script])
  }

  static func quoted(_ text: String) -> String { "'" + text + "'" }

  @Test func aBackupPipedIntoARestoreGivesTheSourceBack() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 2_000)
    let tool = Self.quoted(BuiltTool.path)
    let model = Self.quoted(CronWorkspace.sampleModel)
    let restored = workspace.path("Piped.sqlite")
    let result = try Self.shell(
      "\(tool) backup \(Self.quoted(store)) --model \(model) --output - | \(tool) restore - --to \(Self.quoted(restored))"
    )
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == restored + "\n")
    #expect(try storeRows(restored) == storeRows(store))
    if SharedFixtures.isAvailable {
      let diff = try SharedFixtures.storediff([store, restored])
      #expect(diff.status == 0, "\(diff.stdout)")
    }
    // Encrypted, and read by verify and list from a pipe.
    let password = Self.quoted(try workspace.passwordFile("secret"))
    let backup =
      "\(tool) backup \(Self.quoted(store)) --model \(model) --output - --password-file \(password)"
    let verify = try Self.shell("\(backup) | \(tool) verify - --password-file \(password)")
    #expect(verify.status == 0, "\(verify.stderr)")
    #expect(verify.stdout.hasPrefix("-: OK"))
    let list = try Self.shell("\(backup) | \(tool) list - --json --password-file \(password)")
    #expect(list.status == 0, "\(list.stderr)")
    #expect(list.stdout.contains("\"encrypted\" : true"))
    // Nothing but the archive reaches standard output; the summary goes to standard error.
    let summary = try Self.shell("\(backup) --json 2>&1 >/dev/null")
    #expect(summary.stdout.contains("\"archive\" : \"-\""))
    let clean = try Self.shell(
      "\(backup) --json 2>/dev/null | \(tool) verify - -q --password-file \(password)")
    #expect(clean.status == 0, "\(clean.stderr)")
  }

  @Test func aBrokenPipeIntoARestoreLeavesNoStore() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 2_000)
    let tool = Self.quoted(BuiltTool.path)
    let restored = workspace.path("Cut.sqlite")
    let result = try Self.shell(
      "\(tool) backup \(Self.quoted(store)) --model \(Self.quoted(CronWorkspace.sampleModel)) --output - | head -c 20000 | \(tool) restore - --to \(Self.quoted(restored))"
    )
    #expect(result.status == 65, "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: restored))
    #expect(CronWorkspace.temporaries(in: workspace.directory.url.path).isEmpty)
  }

  @Test func everyCommandPrintsOneJSONDocumentWithJSONAndNothingWithQuiet() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore()
    let archive = try workspace.backup(store)
    let commands: [[String]] = [
      ["sample", workspace.path("S.sqlite"), "--objects", "50"],
      ["create", workspace.path("C.sqlite"), "--model", CronWorkspace.sampleModel],
      workspace.backupArguments(store),
      ["restore", archive, "--to", workspace.path("R.sqlite")],
      ["verify", archive],
      ["list", workspace.backups],
      ["prune", workspace.backups, "--keep-last", "10"],
      ["model", store],
    ]
    for command in commands {
      let json = try BuiltTool.run(command + ["--json"])
      #expect(json.status == 0, "\(command): \(json.stderr)")
      #expect(
        (try? JSONSerialization.jsonObject(with: Data(json.stdoutBytes))) != nil,
        "\(command): \(json.stdout)")
      for path in ["S.sqlite", "C.sqlite", "R.sqlite"] {
        try? FileManager.default.removeItem(atPath: workspace.path(path))
      }
      let quiet = try BuiltTool.run(command + ["--quiet"])
      #expect(quiet.status == 0, "\(command): \(quiet.stderr)")
      #expect(quiet.stdout.isEmpty, "\(command): \(quiet.stdout)")
      for path in ["S.sqlite", "C.sqlite", "R.sqlite"] {
        try? FileManager.default.removeItem(atPath: workspace.path(path))
      }
    }
  }
}
