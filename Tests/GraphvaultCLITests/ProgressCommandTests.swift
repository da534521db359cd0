import Foundation
import TestSupport
import Testing

/// Progress a person can watch and a monitor can read: a status line on a terminal, JSON status
/// lines with `--json`, and nothing at all in a log or a pipe.
@Suite(
  "Progress",
  .enabled(if: Subprocess.isInstalled("script"), "needs script(1) for a pseudo-terminal"))
struct ProgressCommandTests {
  /// A store of 100,000 objects and its archive, made once for the suite (a run of the debug
  /// build takes long enough for several frames).
  static let source: (store: String, archive: String) = {
    let folder = try! TemporaryDirectory.forTheRun("graphvault-progress").url
    let store = folder.appendingPathComponent("Library.sqlite").path
    let archive = folder.appendingPathComponent("library.gvault").path
    _ = try? BuiltTool.run(["sample", store, "--objects", "100000"])
    _ = try? BuiltTool.run(["backup", store, "--output", archive])
    return (store, archive)
  }()

  let directory: TemporaryDirectory
  let store = Self.source.store
  let archive = Self.source.archive

  init() throws {
    directory = try TemporaryDirectory()
    #expect(FileManager.default.fileExists(atPath: archive))
  }

  /// An archive of 3,000 objects.
  func smallArchive() throws -> String {
    let small = directory.path("Small.sqlite").path
    #expect(try BuiltTool.run(["sample", small, "--objects", "3000"]).status == 0)
    let archive = directory.path("small.gvault").path
    #expect(try BuiltTool.run(["backup", small, "--output", archive]).status == 0)
    return archive
  }

  /// Runs the tool on a pseudo-terminal `columns` wide; returns what the terminal showed.
  func onTerminal(_ arguments: [String], columns: Int = 100) throws -> (Int32, String) {
    let command =
      "stty cols \(columns) rows 24; exec '\(BuiltTool.path)' "
      + arguments.map { "'\($0)'" }.joined(separator: " ")
    let result = try Subprocess.run("script", ["-qfec", command, "/dev/null"])
    return (result.status, result.stdout)
  }

  /// The frames a status line drew: what each carriage return began, erasures left out.
  static func frames(_ screen: String) -> [String] {
    screen.components(separatedBy: "\r").map {
      $0.replacingOccurrences(of: "\u{1B}[K", with: "")
    }.filter { !$0.isEmpty && !$0.hasPrefix("\n") }
  }

  @Test(
    "on a terminal, backup, restore and verify redraw a status line and erase it, leaving their usual output"
  )
  func aStatusLineIsDrawnAndErased() throws {
    let runs: [([String], String)] = [
      (["backup", store, "--output", directory.path("t.gvault").path], "backup"),
      (["restore", archive, "--to", directory.path("t.sqlite").path], "restore"),
      (["verify", archive], "verify"),
    ]
    for (arguments, command) in runs {
      let (status, screen) = try onTerminal(arguments)
      #expect(status == 0, "\(command): \(screen)")
      let drawn = Self.frames(screen).filter { $0.hasPrefix(command) }
      #expect(drawn.count >= 2, "\(command) drew \(drawn.count) frames: \(screen.debugDescription)")
      #expect(drawn.contains { $0.contains(" of 100,000 objects") }, "\(command): \(drawn)")
      // Erased before the usual output, which follows on a clean line.
      let lastErase = try #require(screen.range(of: "\r\u{1B}[K", options: .backwards))
      let after = screen[lastErase.upperBound...].trimmingCharacters(in: .whitespacesAndNewlines)
      let expected = [
        "backup": directory.path("t.gvault").path, "restore": directory.path("t.sqlite").path,
        "verify": "\(archive): OK, 100000 objects in",
      ][command]!
      #expect(after.hasPrefix(expected), "\(command): \(after.debugDescription)")
    }
  }

  @Test("a terminal narrower than the line gets a shorter line, never a wrapped one")
  func aNarrowTerminalGetsAShortLine() throws {
    let (status, screen) = try onTerminal(["verify", archive], columns: 38)
    #expect(status == 0)
    let drawn = Self.frames(screen).filter { $0.hasPrefix("verify") }
    #expect(!drawn.isEmpty)
    for frame in drawn { #expect(frame.count <= 37, "\(frame.debugDescription)") }
  }

  @Test("without a terminal and without --json, standard error stays empty on success")
  func aLogGetsNothing() throws {
    for arguments in [
      ["backup", store, "--output", directory.path("q.gvault").path],
      ["restore", archive, "--to", directory.path("q.sqlite").path], ["verify", archive],
    ] {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == 0)
      #expect(result.stderr.isEmpty, "\(arguments[0]): \(result.stderr)")
    }
  }

  @Test("with --json, status lines parse, their counts only grow, and the last equals the result")
  func jsonStatusLinesGrowToTheResult() throws {
    let runs: [[String]] = [
      ["backup", store, "--output", directory.path("j.gvault").path, "--json"],
      ["restore", archive, "--to", directory.path("j.sqlite").path, "--json"],
      ["verify", archive, "--json"],
      // Export is slow in a debug build: a smaller archive shows the same.
      ["export", try smallArchive(), "--output", directory.path("j.json").path, "--json"],
    ]
    for arguments in runs {
      let result = try BuiltTool.run(arguments)
      #expect(result.status == 0, "\(arguments[0]): \(result.stderr)")
      let document = try #require(
        try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any])
      let lines = try result.stderr.split(separator: "\n").map { line in
        try #require(
          try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
          "not JSON: \(line)")
      }
      #expect(lines.count >= 2, "\(arguments[0])")
      #expect(lines.allSatisfy { $0["type"] as? String == "status" })
      var previous: [String: (Int, Int)] = [:]
      for line in lines {
        let phase = line["phase"] as? String ?? ""
        let counts = (line["objects_done"] as? Int ?? -1, line["bytes_done"] as? Int ?? -1)
        if let before = previous[phase] {
          #expect(counts.0 >= before.0 && counts.1 >= before.1, "\(arguments[0]): \(line)")
        }
        previous[phase] = counts
      }
      let last = try #require(lines.last)
      #expect(last["final"] as? Bool == true)
      let objects = (document["objects"] as? [String: Int])?.values.reduce(0, +)
      #expect(last["objects_done"] as? Int == objects, "\(arguments[0]): \(last)")
      if arguments[0] != "export" {
        #expect(last["objects_total"] as? Int == objects, "\(arguments[0])")
        #expect(last["percent_done"] as? Double == 1)
      }
    }
  }

  @Test("--quiet shows nothing, on a terminal or with --json")
  func quietShowsNothing() throws {
    let (status, screen) = try onTerminal(["verify", archive, "--quiet"])
    #expect(status == 0)
    #expect(screen.isEmpty, "\(screen.debugDescription)")
  }
}
