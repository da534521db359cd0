import Foundation
import TestSupport
import Testing

@Suite("Encrypted archives")
struct EncryptionCommandTests {
  /// Some text values of the sample store, as they are stored.
  static func someStrings(of store: String) throws -> [String] {
    let result = try Subprocess.python(
      """
      import sqlite3, sys
      db = sqlite3.connect(sys.argv[1])
      names = [r[0] for r in db.execute("SELECT ZALIAS FROM ZWRITER WHERE length(ZALIAS) > 6 LIMIT 3")]
      titles = [r[0] for r in db.execute("SELECT ZTITLE FROM ZBOOK WHERE length(ZTITLE) > 8 LIMIT 3")]
      print("\\n".join(names + titles))
      """, [store])
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
  }

  /// Each member of a tar archive that Python's tarfile reads (encrypted archives are not
  /// compressed as a stream): name and bytes.
  static func members(of archive: String) throws -> [String: [UInt8]] {
    let result = try Subprocess.python(
      """
      import tarfile, sys, json, base64
      with tarfile.open(sys.argv[1]) as tar:
          print(json.dumps({m.name: base64.b64encode(tar.extractfile(m).read()).decode() for m in tar}))
      """, [archive])
    #expect(result.status == 0, "\(result.stderr)")
    let object =
      try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: String]
    return (object ?? [:]).mapValues { [UInt8](Data(base64Encoded: $0) ?? Data()) }
  }

  /// Rewrites a tar archive's members with `change` (Python's tarfile, member order kept).
  static func rewrite(_ archive: String, to output: String, _ change: String) throws {
    let result = try Subprocess.python(
      """
      import tarfile, sys, io
      with tarfile.open(sys.argv[1]) as tar:
          members = [(m, tar.extractfile(m).read()) for m in tar]
      \(change)
      with tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as out:
          for m, data in members:
              m.size = len(data)
              out.addfile(m, io.BytesIO(data))
      """, [archive, output])
    #expect(result.status == 0, "\(result.stderr)")
  }

  @Test func anEncryptedArchiveRestoresEqualWithThePasswordFromAnyOfItsSources() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore()
    let password = try workspace.passwordFile("correct horse battery staple")
    let archive = try workspace.backup(store, ["--password-file", password])
    let restored = workspace.path("FromFile.sqlite")
    let fromFile = try BuiltTool.run(
      ["restore", archive, "--to", restored, "--password-file", password])
    #expect(fromFile.status == 0, "\(fromFile.stderr)")
    #expect(try storeRows(restored) == storeRows(store))
    if SharedFixtures.isAvailable {
      let diff = try SharedFixtures.storediff([store, restored])
      #expect(diff.status == 0, "\(diff.stdout)")
    }
    let fromVariable = try BuiltTool.run(
      ["restore", archive, "--to", workspace.path("FromVariable.sqlite")],
      environment: ["GRAPHVAULT_PASSWORD_FILE": password])
    #expect(fromVariable.status == 0, "\(fromVariable.stderr)")
    let fromCommand = try BuiltTool.run(
      ["verify", archive], environment: ["GRAPHVAULT_PASSWORD_COMMAND": "cat '\(password)'"])
    #expect(fromCommand.status == 0, "\(fromCommand.stderr)")
    let list = try BuiltTool.run(["list", archive, "--json", "--password-file", password])
    #expect(list.stdout.contains("\"encrypted\" : true"))
    #expect(!list.stdout.contains("correct horse"))
  }

  @Test func aMissingOrWrongPasswordIsStatus77SayingWhich() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore()
    let archive = try workspace.backup(store, ["--password-file", workspace.passwordFile("right")])
    let wrong = try workspace.passwordFile("wrong", name: "wrong")
    for command in [
      ["verify", archive], ["list", archive],
      ["restore", archive, "--to", workspace.path("R.sqlite")],
    ] {
      let missing = try BuiltTool.run(command)
      #expect(missing.status == 77, "\(command)")
      #expect(missing.stderr.contains("the archive is encrypted: give its password"))
      #expect(missing.stderr.contains(archive))
      let refused = try BuiltTool.run(command + ["--password-file", wrong])
      #expect(refused.status == 77, "\(command)")
      #expect(refused.stderr.contains("wrong password"))
      #expect(!refused.stderr.contains("wrong\n") && !refused.stderr.contains("right"))
    }
    #expect(!FileManager.default.fileExists(atPath: workspace.path("R.sqlite")))
  }

  @Test func badPasswordSourcesAreStatus77WithAClearMessage() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.emptyStore("Library.sqlite")
    let unreadable = try BuiltTool.run(
      workspace.backupArguments(store, ["--password-file", workspace.path("no-such-file")]))
    #expect(unreadable.status == 77)
    #expect(unreadable.stderr.contains("cannot read the password file"))
    let failing = try BuiltTool.run(
      workspace.backupArguments(store),
      environment: ["GRAPHVAULT_PASSWORD_COMMAND": "echo hunter2-secret >&2; exit 3"])
    #expect(failing.status == 77)
    #expect(failing.stderr.contains("GRAPHVAULT_PASSWORD_COMMAND failed (exit status 3)"))
    let empty = try BuiltTool.run(
      workspace.backupArguments(store, ["--password-file", workspace.passwordFile("")]))
    #expect(empty.status == 77)
    #expect(empty.stderr.contains("the password is empty"))
    #expect(try workspace.archives().isEmpty)
  }

  @Test func noRecordStringCanBeReadInAnyMemberOfAnEncryptedArchive() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore()
    let strings = try Self.someStrings(of: store)
    #expect(strings.count >= 4)
    // The control: the strings are in an unencrypted, uncompressed archive's members.
    let plain = try workspace.backup(store, ["--compression", "none"])
    let plainBytes = try Self.members(of: plain).values.flatMap { $0 }
    for string in strings { #expect(plainBytes.contains(Array(string.utf8)), "\(string)") }

    let archive = try workspace.backup(
      store, ["--compression", "none", "--password-file", workspace.passwordFile("secret")])
    let members = try Self.members(of: archive)
    #expect(members.keys.contains("objects/Book/000001.plist"))
    #expect(members.keys.contains("index.plist"))
    for (name, bytes) in members {
      // Only the clear header is a property list; every other member is ciphertext.
      let telltales = name == "graphvault.plist" ? [] : ["bplist00"]
      for string in strings + telltales + ["Library", "ZBOOK", "ZWRITER", "CREATE TABLE"] {
        #expect(!bytes.contains(Array(string.utf8)), "\(name) shows \(string)")
      }
    }
    let header = try #require(members["graphvault.plist"])
    let plist = try PropertyListSerialization.propertyList(from: Data(header), format: nil)
    let keys = ((plist as? [String: Any]) ?? [:]).keys.sorted()
    #expect(keys == ["compression", "encryption", "format", "header"])
  }

  @Test(arguments: [
    (
      "a changed byte",
      "members[5] = (members[5][0], members[5][1][:40] + bytes([members[5][1][40] ^ 1]) + members[5][1][41:])"
    ),
    ("two members swapped", "members[5], members[6] = members[6], members[5]"),
    ("a member dropped", "del members[5]"),
    ("a member renamed", "members[5][0].name = 'objects/Book/000009.plist'"),
    ("a member from another archive", "members[5] = (members[5][0], other[5][1])"),
    ("the index replaced by another archive's", "members[-1] = (members[-1][0], other[-1][1])"),
  ])
  func anyChangeToAnEncryptedArchiveIsCaught(change: String, python: String) throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore()
    let password = try workspace.passwordFile("secret")
    let archive = try workspace.backup(store, ["--password-file", password])
    let other = try workspace.backup(store, ["--password-file", password])
    let tampered = workspace.path("tampered.gvault")
    try Self.rewrite(
      archive, to: tampered,
      """
      with tarfile.open("\(other)") as o:
          other = [(m, o.extractfile(m).read()) for m in o]
      \(python)
      """)
    let verify = try BuiltTool.run(["verify", tampered, "--password-file", password])
    #expect(verify.status == 65, "\(change): \(verify.stderr)")
    #expect(verify.stderr.contains("authentication failed") || verify.stderr.contains("index"))
    let restored = workspace.path("R.sqlite")
    let restore = try BuiltTool.run([
      "restore", tampered, "--to", restored, "--password-file", password,
    ])
    #expect(restore.status == 65, "\(change): \(restore.stderr)")
    #expect(!FileManager.default.fileExists(atPath: restored))
  }

  @Test func everyFrozenArchiveStillRestoresAndVerifies() throws {
    let folder = SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Archives").path
    let workspace = try CronWorkspace()
    let archives = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
      $0.hasSuffix(".gvault")
    }
    #expect(!archives.isEmpty)
    for name in archives {
      let path = folder + "/" + name
      let verify = try BuiltTool.run(["verify", path])
      #expect(verify.status == 0, "\(name): \(verify.stderr)")
      let restore = try BuiltTool.run(["restore", path, "--to", workspace.path(name + ".sqlite")])
      #expect(restore.status == 0, "\(name): \(restore.stderr)")
    }
  }
}
