import Foundation
import TestSupport
import Testing

/// Damaged archives made with bsdtar from a good one, run through the built binary.
@Suite(
  "verify and restore on damaged archives",
  .enabled(if: Subprocess.isInstalled("bsdtar"), "needs bsdtar (libarchive-tools)"))
struct DamagedArchiveCommandTests {
  static let sampleModel = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Library.xcdatamodeld"
  ).path

  let directory: TemporaryDirectory
  let members: [String]
  let extracted: URL

  init() throws {
    directory = try TemporaryDirectory()
    let store = directory.path("Library.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "600"]).status == 0)
    let archive = directory.path("good.gvault").path
    #expect(
      try BuiltTool.run(["backup", store, "--model", Self.sampleModel, "--output", archive]).status
        == 0)
    extracted = directory.path("extracted")
    try FileManager.default.createDirectory(at: extracted, withIntermediateDirectories: true)
    #expect(try Subprocess.run("bsdtar", ["-xf", archive, "-C", extracted.path]).status == 0)
    members = try Subprocess.run("bsdtar", ["-tf", archive]).stdout.split(separator: "\n").map(
      String.init)
    #expect(members.first == "graphvault.plist" && members.last == "index.plist")
  }

  /// An archive of the extracted members, in the order given.
  func archive(_ name: String, members: [String]) throws -> String {
    let path = directory.path(name).path
    let result = try Subprocess.run(
      "bsdtar", ["--format", "pax", "--zstd", "-cf", path, "-C", extracted.path] + members)
    #expect(result.status == 0, "\(result.stderr)")
    return path
  }

  /// Runs verify and restore; both must fail with 65, restore leaving no store.
  func expectRefused(_ archive: String, mentioning text: String) throws {
    let verify = try BuiltTool.run(["verify", archive])
    #expect(verify.status == 65, "verify \(archive): \(verify.stderr)")
    #expect(verify.stderr.contains(text), "verify should mention \(text): \(verify.stderr)")
    let target = directory.path("restored-\(UUID().uuidString).sqlite").path
    let restore = try BuiltTool.run(["restore", archive, "--to", target])
    #expect(restore.status == 65, "restore \(archive): \(restore.stderr)")
    #expect(!FileManager.default.fileExists(atPath: target))
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
      $0.contains(".tmp-")
    }
    #expect(leftovers.isEmpty)
  }

  @Test func aFlippedByteInsideAChunkIsNamed() throws {
    let chunk = try #require(members.first { $0.hasPrefix("objects/Page/") })
    let file = extracted.appendingPathComponent(chunk)
    var bytes = [UInt8](try Data(contentsOf: file))
    bytes[bytes.count / 3] ^= 0x04
    try Data(bytes).write(to: file)
    try expectRefused(try archive("flipped.gvault", members: members), mentioning: chunk)
  }

  @Test func aMissingIndexMakesTheArchiveIncomplete() throws {
    try expectRefused(
      try archive("noindex.gvault", members: Array(members.dropLast())), mentioning: "incomplete")
  }

  @Test func membersOutOfOrderAreRefused() throws {
    var reordered = members
    reordered.swapAt(0, 1)
    try expectRefused(
      try archive("reordered.gvault", members: reordered), mentioning: "graphvault.plist")
  }

  @Test func anArchiveCutAtSeveralOffsetsIsRefused() throws {
    let good = try archive("rebuilt.gvault", members: members)
    #expect(try BuiltTool.run(["verify", good]).status == 0)
    let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
    for fraction in [0.1, 0.5, 0.9, 0.99] {
      let cut = directory.path("cut-\(fraction).gvault")
      try bytes.prefix(Int(Double(bytes.count) * fraction)).write(to: cut)
      try expectRefused(cut.path, mentioning: "cut-\(fraction).gvault")
    }
  }
}
