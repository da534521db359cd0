import Foundation
import TestSupport
import Testing

/// A command that writes a file refuses an existing name unless `--force` (73), and never
/// writes over the file it reads, however that file is named: another spelling of its path, a
/// symbolic link to it, or standard input (64). What it reads keeps its bytes.
@Suite("Writing over what is being read")
struct OwnInputCommandTests {
  let workspace: TemporaryDirectory
  let store: String
  let archive: String

  init() throws {
    workspace = try TemporaryDirectory()
    store = workspace.path("Shop.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "150"]).status == 0)
    archive = workspace.path("shop.gvault").path
    #expect(try BuiltTool.run(["backup", store, "--output", archive]).status == 0)
  }

  func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

  /// Other names of `path`: with `./` and `..` in it, and a symbolic link to it.
  func spellings(of path: String) throws -> [String] {
    let url = URL(fileURLWithPath: path)
    let link = workspace.path("link-\(url.lastPathComponent)").path
    try? FileManager.default.removeItem(atPath: link)
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
    let folder = url.deletingLastPathComponent()
    return [
      path, folder.path + "/./" + url.lastPathComponent,
      folder.path + "/../" + folder.lastPathComponent + "/" + url.lastPathComponent, link,
    ]
  }

  @Test func exportRefusesAnExistingFileWithoutForceAndReplacesItWithForce() throws {
    let output = workspace.path("objects.json").path
    try Data("keep me".utf8).write(to: URL(fileURLWithPath: output))
    let refused = try BuiltTool.run(["export", archive, "--output", output])
    #expect(refused.status == 73, "\(refused.stderr)")
    #expect(refused.stderr.contains("--force"))
    #expect(try bytes(output) == Data("keep me".utf8))
    let forced = try BuiltTool.run(["export", archive, "--output", output, "--force", "-q"])
    #expect(forced.status == 0, "\(forced.stderr)")
    #expect(try bytes(output).starts(with: Data("{".utf8)))
  }

  @Test func exportNeverWritesOverItsOwnInputWhateverItsSpelling() throws {
    let before = try bytes(archive)
    let storeBefore = try bytes(store)
    for (input, output) in try spellings(of: archive).map({ (archive, $0) })
      + spellings(of: store).map({ (store, $0) })
    {
      let result = try BuiltTool.run(["export", input, "--output", output, "--force"])
      #expect(result.status == 64, "\(output): \(result.stderr)")
      #expect(result.stderr.contains("the file being read"), "\(result.stderr)")
    }
    #expect(try bytes(archive) == before)
    #expect(try bytes(store) == storeBefore)
  }

  @Test func aCommandReadingAFileOnStandardInputNeverReplacesThatFile() throws {
    let before = try bytes(archive)
    for arguments in [
      ["restore", "-", "--to", archive, "--force"],
      ["export", "-", "--output", archive, "--force"],
    ] {
      // The shell opens the archive as standard input; the tool sees only "-".
      let command = ([BuiltTool.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
      let result = try Subprocess.run("sh", ["-c", "\(command) < '\(archive)'"])
      #expect(result.status == 64, "\(arguments[0]): \(result.stderr)")
      #expect(try bytes(archive) == before, "\(arguments[0])")
    }
  }

  @Test func createNeverReplacesTheStoreItsModelComesFrom() throws {
    let before = try bytes(store)
    for spelling in try spellings(of: store) {
      let result = try BuiltTool.run(["create", spelling, "--model", store, "--force"])
      #expect(result.status == 64, "\(spelling): \(result.stderr)")
    }
    #expect(try bytes(store) == before)
  }
}
