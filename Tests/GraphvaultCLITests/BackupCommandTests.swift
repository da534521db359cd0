import Foundation
import TestSupport
import Testing

@Suite("graphvault backup")
struct BackupCommandTests {
  static let sampleModel = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Library.xcdatamodeld"
  ).path

  /// A store made with `graphvault create` from the sample model.
  func sampleStore(in directory: TemporaryDirectory) throws -> String {
    let path = directory.path("Library.sqlite").path
    let result = try BuiltTool.run(["create", path, "--model", Self.sampleModel])
    #expect(result.status == 0, "\(result.stderr)")
    return path
  }

  @Test func backupPrintsTheArchivePathAndTheArchiveIsComplete() throws {
    let directory = try TemporaryDirectory()
    let store = try sampleStore(in: directory)
    let output = directory.path("backups")
    try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
    let result = try BuiltTool.run([
      "backup", store, "--model", Self.sampleModel, "--output", output.path,
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.isEmpty, "progress must not reach logs or pipes: \(result.stderr)")
    let path = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(path.hasPrefix(output.path + "/Library-"))
    #expect(path.hasSuffix("Z.gvault"))
    // Beside the archive, only hidden lock files.
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: output.path).filter {
        !$0.hasPrefix(".")
      } == [URL(fileURLWithPath: path).lastPathComponent])
    if Subprocess.isInstalled("bsdtar") {
      let listing = try Subprocess.run("bsdtar", ["-tf", path])
      #expect(listing.stdout.hasPrefix("graphvault.plist\n"))
      #expect(listing.stdout.hasSuffix("index.plist\n"))
    }
  }

  @Test(arguments: ["zstd", "xz", "gzip", "none"])
  func everyCompressionWorks(compression: String) throws {
    let directory = try TemporaryDirectory()
    let store = try sampleStore(in: directory)
    let archive = directory.path("out.gvault").path
    let result = try BuiltTool.run([
      "backup", store, "--model", Self.sampleModel, "--output", archive, "--compression",
      compression,
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(FileManager.default.fileExists(atPath: archive))
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
  func jsonReportsTheArchiveAndCounts() throws {
    let directory = try TemporaryDirectory()
    let store = try sampleStore(in: directory)
    let result = try BuiltTool.run([
      "backup", store, "--model", Self.sampleModel, "--output", directory.path("a.gvault").path,
      "--json",
    ])
    #expect(result.status == 0)
    let check = try Subprocess.python(
      "import json,sys; d=json.load(sys.stdin); print(d['archive'].endswith('a.gvault'), sorted(d['objects']))",
      input: result.stdoutBytes)
    #expect(
      check.stdout.contains("True ['Author', 'Book', 'GraphicNovel', 'Page', 'Tag']"),
      "\(check.stderr)")
  }

  @Test func failuresHaveTheirStatusAndLeaveNoArchive() throws {
    let directory = try TemporaryDirectory()
    let store = try sampleStore(in: directory)
    let existing = directory.path("existing.gvault")
    try Data("keep me".utf8).write(to: existing)
    let notes = directory.path("notes.sqlite")
    try Data(String(repeating: "text\n", count: 300).utf8).write(to: notes)
    var cases: [([String], Int32, String)] = [
      (["backup", directory.path("missing.sqlite").path], 66, "no store"),
      (["backup", notes.path, "--output", directory.url.path], 65, "not an SQLite database"),
      (["backup", store, "--model", Self.sampleModel, "--output", existing.path], 73, "exists"),
      (["backup", store, "--model", Self.sampleModel, "--compression", "lzip"], 64, "lzip"),
    ]
    if Subprocess.isInstalled("python3") {
      // A store without its model cache (as Core Data wrote them before about 2014).
      let bare = directory.path("Bare.sqlite").path
      try FileManager.default.copyItem(atPath: store, toPath: bare)
      let emptied = try Subprocess.python(
        "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('DELETE FROM Z_MODELCACHE'); c.commit()",
        [bare])
      #expect(emptied.status == 0, "\(emptied.stderr)")
      cases.append((["backup", bare, "--output", directory.url.path], 78, "pass --model"))
    }
    for (arguments, status, message) in cases {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == status, "\(arguments): \(result.stderr)")
      #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }
    #expect(try String(contentsOf: existing, encoding: .utf8) == "keep me")
    let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter {
      $0.hasSuffix(".gvault") || $0.contains(".tmp-")
    }
    #expect(left == ["existing.gvault"])
  }
}
