import Foundation
import TestSupport
import Testing

/// An encrypted archive's trailer: after the tar stream's end, where tar readers stop, it places
/// the index's records and gives its position, so that `list` and `prune` read the archive's two
/// ends instead of opening every member.
@Suite("Encrypted archives read from their two ends")
struct SealedTrailerCommandTests {
  /// Checks the trailer against the tar layout as Python's tarfile reads it; prints the
  /// number of members.
  static let checker = """
    import io, struct, sys, tarfile
    data = open(sys.argv[1], 'rb').read()
    tag, version, offset, length, position = struct.unpack('<4sIQQQ', data[-32:])
    assert (tag, version) == (b'GVSX', 1), (tag, version)
    assert data[offset + length:-32] == bytes(1024), 'the end-of-archive blocks are not between'
    with tarfile.open(fileobj=io.BytesIO(data[:-32])) as archive:
        members = archive.getmembers()
    assert members[-1].name == 'index.plist' and members[-1].offset == offset, (members[-1].offset, offset)
    assert position == len(members) - 1, (position, len(members))
    print(len(members))
    """

  /// Rewrites the trailer's `field` (`position` one more, or the index's `offset` one block
  /// earlier with its length one block longer), or strips it (`none`).
  static let damager = """
    import struct, sys
    path, what = sys.argv[1], sys.argv[2]
    data = open(path, 'rb').read()
    tag, version, offset, length, position = struct.unpack('<4sIQQQ', data[-32:])
    if what == 'none':
        data = data[:-32]
    else:
        if what == 'position': position += 1
        if what == 'offset': offset, length = offset - 512, length + 512
        data = data[:-32] + struct.pack('<4sIQQQ', tag, version, offset, length, position)
    open(path, 'wb').write(data)
    """

  struct Listed {
    let state: String
    let bytesRead: Int
    let bytes: Int
    let objects: [String: Int]
  }

  static func list(_ archive: String, _ password: String) throws -> Listed {
    let result = try BuiltTool.run(["list", archive, "--json", "--password-file", password])
    #expect(result.status == 0, "\(result.stderr)")
    let summary =
      (try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [[String: Any]])?.first
    return Listed(
      state: summary?["state"] as? String ?? "", bytesRead: summary?["bytesRead"] as? Int ?? -1,
      bytes: summary?["bytes"] as? Int ?? 0, objects: summary?["objects"] as? [String: Int] ?? [:])
  }

  @Test func anEncryptedArchiveEndsWithATrailerThatPlacesItsIndexAfterWhatTarReads() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 2_000)
    let password = try workspace.passwordFile("secret")
    let archive = workspace.path("Library.gvault")
    let backup = try BuiltTool.run([
      "backup", store, "--model", CronWorkspace.sampleModel, "--output", archive,
      "--password-file", password, "-q",
    ])
    #expect(backup.status == 0, "\(backup.stderr)")
    let checked = try Subprocess.python(Self.checker, [archive])
    #expect(checked.status == 0, "\(checked.stderr)")
    let bsdtar = try Subprocess.run("bsdtar", ["-tf", archive])
    #expect(bsdtar.status == 0 && bsdtar.stdout.hasSuffix("index.plist\n"), "\(bsdtar.stderr)")
    #expect(
      bsdtar.stdout.split(separator: "\n").count
        == Int(checked.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
  }

  @Test func listAndPruneReadTheTwoEndsAndAMisplacingTrailerIsRefusedByVerifyAndRestore() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 3_000)
    let password = try workspace.passwordFile("secret")
    var archives: [String: String] = [:]
    for what in ["good", "position", "offset", "none"] {
      let archive = workspace.backups + "/\(what).gvault"
      let backup = try BuiltTool.run([
        "backup", store, "--model", CronWorkspace.sampleModel, "--output", archive,
        "--password-file", password, "-q",
      ])
      #expect(backup.status == 0, "\(backup.stderr)")
      archives[what] = archive
    }
    let good = try Self.list(try #require(archives["good"]), password)
    #expect(good.state == "complete")
    #expect(good.bytesRead > 0 && good.bytesRead * 5 < good.bytes, "\(good)")
    let prune = try BuiltTool.run([
      "prune", workspace.backups, "--keep-last", "9", "--dry-run", "--json", "--password-file",
      password,
    ])
    #expect(prune.status == 0, "\(prune.stderr)")

    for what in ["position", "offset", "none"] {
      let archive = try #require(archives[what])
      let damaged = try Subprocess.python(Self.damager, [archive, what])
      #expect(damaged.status == 0, "\(damaged.stderr)")
      // Listed all the same, read from its start to its tar end: the same header and index.
      let listed = try Self.list(archive, password)
      #expect(listed.state == "complete", "\(what)")
      #expect(listed.objects == good.objects, "\(what)")
      #expect(listed.bytesRead >= listed.bytes - 32, "\(what): \(listed)")
      let verify = try BuiltTool.run(["verify", archive, "--password-file", password])
      let restored = workspace.path("\(what).sqlite")
      let restore = try BuiltTool.run([
        "restore", archive, "--to", restored, "--password-file", password,
      ])
      if what == "none" {
        // An archive written before trailers: nothing to hold it to.
        #expect(verify.status == 0, "\(verify.stderr)")
        #expect(restore.status == 0, "\(restore.stderr)")
      } else {
        #expect(verify.status == 65, "\(what): \(verify.stdout)\(verify.stderr)")
        #expect(verify.stderr.contains("the trailer does not say"), "\(what): \(verify.stderr)")
        #expect(restore.status == 65, "\(what): \(restore.stderr)")
        #expect(!FileManager.default.fileExists(atPath: restored))
      }
    }
  }

  @Test func withoutThePasswordOrWithAWrongOneTheListingSaysSo() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 500)
    let password = try workspace.passwordFile("secret")
    let wrong = try workspace.passwordFile("other", name: "wrong")
    let archive = workspace.path("Library.gvault")
    let backup = try BuiltTool.run([
      "backup", store, "--model", CronWorkspace.sampleModel, "--output", archive,
      "--password-file", password, "-q",
    ])
    #expect(backup.status == 0, "\(backup.stderr)")
    let bare = try BuiltTool.run(["list", archive])
    #expect(bare.status == 77, "\(bare.stderr)")
    #expect(bare.stderr.contains("encrypted"), "\(bare.stderr)")
    let refused = try BuiltTool.run(["list", archive, "--password-file", wrong])
    #expect(refused.status == 77, "\(refused.stderr)")
    #expect(refused.stderr.contains("wrong password"), "\(refused.stderr)")
  }
}
