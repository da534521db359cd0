import Foundation
import TestSupport
import Testing

@Suite("graphvault verify and list")
struct VerifyAndListCommandTests {
  static let sampleModel = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Library.xcdatamodeld"
  ).path

  func archive(in directory: TemporaryDirectory, name: String = "a.gvault") throws -> String {
    let store = directory.path("Library-\(UUID().uuidString).sqlite").path
    #expect(try BuiltTool.run(["create", store, "--model", Self.sampleModel]).status == 0)
    let path = directory.path(name).path
    let result = try BuiltTool.run(["backup", store, "--model", Self.sampleModel, "--output", path])
    #expect(result.status == 0, "\(result.stderr)")
    return path
  }

  @Test func verifyPassesAGoodArchiveAndFailsACutOneWithStatus65() throws {
    let directory = try TemporaryDirectory()
    let good = try archive(in: directory)
    let ok = try BuiltTool.run(["verify", good])
    #expect(ok.status == 0, "\(ok.stderr)")
    #expect(ok.stdout.contains("OK"))
    let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
    let cut = directory.path("cut.gvault")
    try bytes.prefix(bytes.count - 200).write(to: cut)
    let failed = try BuiltTool.run(["verify", cut.path])
    #expect(failed.status == 65)
    #expect(failed.stderr.contains("FAILED"))
    #expect(failed.stderr.contains("restore refuses this archive"))
    #expect(try BuiltTool.run(["verify", directory.path("none.gvault").path]).status == 66)
  }

  @Test func listShowsOneArchiveInDetailAndAFolderLineByLine() throws {
    let directory = try TemporaryDirectory()
    let folder = directory.path("backups")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    _ = try archive(in: directory, name: "backups/first.gvault")
    _ = try archive(in: directory, name: "backups/second.gvault")
    let one = try BuiltTool.run(["list", folder.appendingPathComponent("first.gvault").path])
    #expect(one.status == 0, "\(one.stderr)")
    #expect(one.stdout.contains("model Library version Library"))
    let many = try BuiltTool.run(["list", folder.path])
    #expect(many.status == 0)
    let lines = many.stdout.split(separator: "\n")
    #expect(lines.count == 2)
    #expect(lines.allSatisfy { $0.contains("complete") })
    #expect(try BuiltTool.run(["list", directory.path("nothing").path]).status == 66)
  }
}
