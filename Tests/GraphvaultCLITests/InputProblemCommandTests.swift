import Foundation
import TestSupport
import Testing

/// What users give by mistake or what a disk does to them: each gets its documented status
/// and a sentence naming the path and the cause.
@Suite("Folders, permissions and damaged stores")
struct InputProblemCommandTests {
  let directory: TemporaryDirectory
  let store: String
  let archive: String

  init() throws {
    directory = try TemporaryDirectory()
    store = directory.path("Library.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "400"]).status == 0)
    archive = directory.path("good.gvault").path
    #expect(try BuiltTool.run(["backup", store, "--output", archive]).status == 0)
  }

  static let asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups"]
  static let canDropRoot = getuid() == 0 && Subprocess.isInstalled("setpriv")

  @Test("a folder given as an archive or as a store is missing input (66), said so")
  func aFolderIsNoArchiveAndNoStore() throws {
    let folder = directory.path("folder").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    // verify checks the archives of a folder: this one has none.
    let verify = try BuiltTool.run(["verify", folder])
    #expect(verify.status == 66)
    #expect(verify.stderr.contains("no archive in \(folder)"))
    for arguments in [
      ["restore", folder, "--to", directory.path("r.sqlite").path],
      ["export", folder, "--output", directory.path("e.json").path],
    ] {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == 66, "\(arguments[0]): \(result.stderr)")
      #expect(result.stderr.contains("this is a folder, not an archive (\(folder))"))
    }
    let backup = try BuiltTool.run(["backup", folder])
    #expect(backup.status == 66)
    #expect(backup.stderr.contains("this is a folder, not a store"))
  }

  @Test(
    "an archive this user may not read is 66 in verify, list and restore alike, naming owner and mode",
    .enabled(if: canDropRoot, "needs root and setpriv to run as another user"))
  func anUnreadableArchiveIsSixtySix() throws {
    chmod(archive, 0o000)
    defer { chmod(archive, 0o600) }
    let output = directory.path("out").path
    try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
    chmod(output, 0o777)
    for arguments in [
      ["verify", archive], ["list", archive], ["restore", archive, "--to", output + "/r.sqlite"],
    ] {
      let result = try Subprocess.run(
        "setpriv", Self.asNobody + [BuiltTool.path] + arguments)
      #expect(result.status == 66, "\(arguments[0]): \(result.stderr)")
      #expect(result.stderr.contains("cannot be read: permission denied"), "\(result.stderr)")
      #expect(result.stderr.contains("owned by root, mode 0"))
    }
  }

  @Test(
    "a folder this user may not write in is refused with 77, naming the folder",
    .enabled(if: canDropRoot, "needs root and setpriv to run as another user"))
  func anUnwritableFolderIsSeventySeven() throws {
    chmod(directory.url.path, 0o755)
    chmod(store, 0o644)
    let result = try Subprocess.run(
      "setpriv",
      Self.asNobody + [BuiltTool.path, "backup", store, "--output", directory.url.path + "/"])
    #expect(result.status == 77, "\(result.stderr)")
    #expect(result.stderr.contains("may not write in the folder"))
    // A folder anyone may write in, as /tmp is, inside the test's own.
    let open = directory.path("open").path
    try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false)
    chmod(open, 0o1777)
    let unreadable = try Subprocess.run(
      "setpriv", Self.asNobody + [BuiltTool.path, "backup", store, "--output", open + "/"])
    chmod(store, 0o600)
    let denied = try Subprocess.run(
      "setpriv", Self.asNobody + [BuiltTool.path, "backup", store, "--output", open + "/"])
    #expect(unreadable.status == 0 || unreadable.status == 77, "\(unreadable.stderr)")
    #expect(denied.status == 66, "\(denied.stderr)")
    #expect(denied.stderr.contains("the store cannot be read: permission denied"))
  }

  @Test("a store with a damaged page is bad data (65), and the archive is not written")
  func aDamagedPageIsBadData() throws {
    let damaged = directory.path("Damaged.sqlite").path
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: store)))
    // The schema's page kept, the tables' pages turned to noise.
    for index in (4096 * 2)..<bytes.count { bytes[index] = UInt8(truncatingIfNeeded: index &* 31) }
    try Data(bytes).write(to: URL(fileURLWithPath: damaged))
    let folder = directory.path("backups").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let result = try BuiltTool.run(["backup", damaged, "--output", folder + "/"])
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stderr.contains("Damaged.sqlite"))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder).filter { !$0.hasPrefix(".") }
        == [])
  }
}
