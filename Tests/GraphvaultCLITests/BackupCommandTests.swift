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

  @Test func formatVersionOneWritesAnArchiveThatEveryCommandReads() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("sample.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "600", "-q"]).status == 0)
    for format in ["1", "2"] {
      let archive = directory.path("format\(format).gvault").path
      let made = try BuiltTool.run([
        "backup", store, "--output", archive, "--format-version", format, "-q",
      ])
      #expect(made.status == 0, "\(made.stderr)")
      let listed = try BuiltTool.run(["list", archive])
      #expect(listed.stdout.contains("  format \(format)\n"), "\(listed.stdout)")
      #expect(try BuiltTool.run(["verify", archive, "-q"]).status == 0)
      let restored = directory.path("restored\(format).sqlite").path
      let restore = try BuiltTool.run(["restore", archive, "--to", restored, "-q"])
      #expect(restore.status == 0, "\(restore.stderr)")
      if Subprocess.isInstalled("bsdtar") && Subprocess.isInstalled("python3") {
        // Format 1: an array of records; format 2: one dictionary of columns.
        let script = """
          import plistlib, subprocess, sys
          chunk = subprocess.run(['bsdtar', '-xOf', sys.argv[1], 'objects/Book/000001.plist'],
                                 check=True, capture_output=True).stdout
          top = plistlib.loads(chunk)
          print('records' if isinstance(top, list) else 'columns' if 'columns' in top else '?')
          """
        let shape = try Subprocess.python(script, [archive])
        #expect(shape.stdout == (format == "1" ? "records\n" : "columns\n"), "\(shape.stderr)")
      }
    }
    let exports = try ["1", "2"].map {
      try BuiltTool.run(["export", directory.path("format\($0).gvault").path]).stdout
    }
    #expect(exports[0] == exports[1] && exports[0].contains("\"class\": \"Book\""))
  }

  @Test func anUnknownFormatVersionIsAUsageError() throws {
    let directory = try TemporaryDirectory()
    let store = try sampleStore(in: directory)
    let result = try BuiltTool.run([
      "backup", store, "--model", Self.sampleModel, "--output", directory.path("x.gvault").path,
      "--format-version", "6",
    ])
    #expect(result.status == 64)
    #expect(result.stderr.contains("--format-version 6"))
    #expect(result.stderr.contains("it writes 1, 2, 3, 4 and 5"))
    #expect(!FileManager.default.fileExists(atPath: directory.path("x.gvault").path))
  }
}
