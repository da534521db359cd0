import Foundation
import PropertyList
import SQLite
import TestSupport
import Testing

/// The built binary, as a user runs it in the folder where a forged archive lies beside another
/// database: no command that reads archives runs what an archive carries.
@Suite("Forged archives on the command line")
struct ForgedArchiveCommandTests {
  let directory: TemporaryDirectory
  let archive: String

  init() throws {
    directory = try TemporaryDirectory()
    let store = directory.path("Library.sqlite").path
    let made = try BuiltTool.run(["sample", store, "--objects", "300"])
    #expect(made.status == 0, "\(made.stderr)")
    archive = directory.path("good.gvault").path
    let backup = try BuiltTool.run(["backup", store, "--output", archive])
    #expect(backup.status == 0, "\(backup.stderr)")
    try FileManager.default.removeItem(atPath: store)
  }

  /// A folder holding `precious.db` and `forged.gvault` (the good archive forged by `forge`),
  /// and the commands' working folder.
  func scene(_ forge: (inout ArchiveForger) throws -> Void) throws -> (String, String) {
    let folder = directory.path("scene-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let db = try Database(path: folder + "/precious.db", mode: .readWriteCreate)
    try db.execute("CREATE TABLE precious (value TEXT)")
    var forger = try ArchiveForger(reading: archive)
    try forge(&forger)
    try forger.write(to: folder + "/forged.gvault")
    return (folder, folder + "/forged.gvault")
  }

  func expectUntouched(_ folder: String, _ label: String) throws {
    let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    #expect(files == ["forged.gvault", "precious.db"], "\(label): \(files)")
    let db = try Database(path: folder + "/precious.db", mode: .readOnly)
    #expect(
      try db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'precious'").scalar()
        == .integer(1), "\(label)")
  }

  /// Every command that reads an archive, run on `forged` in `folder`.
  func everyReader(_ forged: String, in folder: String) -> [(String, [String])] {
    [
      ("verify", ["verify", forged]),
      ("restore", ["restore", forged, "--to", folder + "/out.sqlite"]),
      ("restore --dry-run", ["restore", forged, "--to", folder + "/out.sqlite", "--dry-run"]),
      ("export", ["export", forged, "--output", folder + "/out.json"]),
      (
        "fixture",
        ["fixture", forged, "--entity", "Book", "--limit", "1", "--output", folder + "/f.gvault"]
      ),
      (
        "restore --model",
        [
          "restore", forged, "--to", folder + "/out.sqlite", "--model",
          SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Library.xcdatamodeld").path,
        ]
      ),
    ]
  }

  @Test(
    "an archived schema that attaches and drops the database beside it is refused by every command, with 65"
  )
  func theAttachAndDropAttackFails() throws {
    let (folder, forged) = try scene { forger in
      try forger.editSchemaSQL(of: "ZTAG") {
        $0 + "; ATTACH DATABASE 'precious.db' AS v; DROP TABLE v.precious"
      }
    }
    for (label, arguments) in everyReader(forged, in: folder) {
      let result = try BuiltTool.run(arguments, directory: folder)
      #expect(result.status == 65, "\(label): \(result.status) \(result.stderr)")
      #expect(result.stderr.contains("ZTAG"), "\(label): \(result.stderr)")
      try expectUntouched(folder, label)
    }
  }

  @Test(
    "a dangling reference and a damaged model descriptor are bad data (65) for every command, not 78"
  )
  func danglingReferencesAndDamagedDescriptorsAreBadData() throws {
    let forgeries: [(String, (inout ArchiveForger) throws -> Void)] = [
      (
        "dangling",
        { forger in
          try forger.edit("objects/Book/000001.plist") { chunk in
            try ArchiveForger.editIntegers(in: &chunk, key: "author") { $0[0] = 424_242 }
          }
        }
      ),
      ("descriptor", { $0.replace("model/descriptor.plist", with: [0x62, 0x70, 0x6C, 0x00]) }),
    ]
    for (name, forge) in forgeries {
      let (folder, forged) = try scene(forge)
      for (label, arguments) in everyReader(forged, in: folder) {
        let result = try BuiltTool.run(arguments, directory: folder)
        #expect(result.status == 65, "\(name), \(label): \(result.status) \(result.stderr)")
        try expectUntouched(folder, "\(name), \(label)")
      }
    }
  }

  @Test("asked to, restore leaves an unsafe schema entry out and warns, naming it")
  func unsafeEntriesCanBeDroppedWithAWarning() throws {
    let (folder, forged) = try scene { forger in
      try forger.addSchemaEntry(
        type: "trigger", name: "EVIL", table: "ZBOOK",
        sql: "CREATE TRIGGER EVIL AFTER INSERT ON ZBOOK BEGIN DELETE FROM ZTAG; END")
    }
    let result = try BuiltTool.run(
      ["restore", forged, "--to", folder + "/out.sqlite", "--drop-unsafe-schema"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("warning: left out of the archived schema: trigger EVIL"))
    let db = try Database(path: folder + "/out.sqlite", mode: .readOnly)
    #expect(
      try db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'EVIL'").scalar()
        == .integer(0))
    #expect(try db.prepare("SELECT count(*) FROM ZTAG").scalar() != .integer(0))
  }

  @Test("with a password, a plain archive is refused with 77 unless --allow-unencrypted")
  func aPlainArchiveIsNoStandInForAnEncryptedOne() throws {
    let password = directory.path("password").path
    try Data("correct horse\n".utf8).write(to: URL(fileURLWithPath: password))
    for command in [
      ["verify", archive], ["restore", archive, "--to", directory.path("p.sqlite").path],
    ] {
      let refused = try BuiltTool.run(command + ["--password-file", password])
      #expect(refused.status == 77, "\(command[0]): \(refused.stderr)")
      #expect(refused.stderr.contains("not encrypted"))
      let viaEnvironment = try BuiltTool.run(
        command, environment: ["GRAPHVAULT_PASSWORD_FILE": password])
      #expect(viaEnvironment.status == 77, "\(command[0])")
      let allowed = try BuiltTool.run(
        command + ["--password-file", password, "--allow-unencrypted"])
      #expect(allowed.status == 0, "\(command[0]): \(allowed.stderr)")
    }
  }

  @Test("with --json, every command's failure is one JSON document on standard output")
  func failuresAreJSONDocuments() throws {
    let missing = directory.path("missing.gvault").path
    let runs: [[String]] = [
      ["restore", missing, "--to", directory.path("x.sqlite").path, "--json"],
      ["list", missing, "--json"],
      ["export", missing, "--output", directory.path("x.json").path, "--json"],
      ["backup", directory.path("none.sqlite").path, "--json"],
      ["model", directory.path("none.sqlite").path, "--json"],
    ]
    for arguments in runs {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == 66, "\(arguments[0]): \(result.stderr)")
      let document =
        try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
      #expect(document?["ok"] as? Bool == false, "\(arguments[0]): \(result.stdout)")
      #expect(document?["status"] as? Int == 66, "\(arguments[0])")
      #expect((document?["error"] as? String)?.isEmpty == false, "\(arguments[0])")
    }
  }
}
