import TestSupport
import Testing

@Suite("The graphvault command line")
struct CommandLineTests {
  @Test func versionPrintsTheVersionAndExitsZero() throws {
    let result = try BuiltTool.run(["--version"])
    #expect(result.status == 0)
    #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0.4.0")
  }

  @Test func helpListsEveryExitStatus() throws {
    let result = try BuiltTool.run(["--help"])
    #expect(result.status == 0)
    for status in ["0", "64", "65", "66", "73", "74", "75", "78"] {
      #expect(
        result.stdout.contains("\n  \(status) "), "exit status \(status) missing from --help")
    }
  }

  @Test func anUnknownOptionIsAUsageErrorOnStandardError() throws {
    let result = try BuiltTool.run(["--no-such-option"])
    #expect(result.status == 64)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("--no-such-option"))
  }

  /// The `  NN  meaning` lines of `--help`'s EXIT STATUS table.
  static func helpExitStatuses() throws -> [String: String] {
    let help = try BuiltTool.run(["--help"]).stdout
    var table: [String: String] = [:]
    for line in help.split(separator: "\n") {
      let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
      if line.hasPrefix("  "), parts.count == 2, let code = Int(parts[0]), code < 256 {
        table[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces)
      }
    }
    return table
  }

  /// The `.It Sy NN` / meaning pairs of the man page's EXIT STATUS section.
  static func manPageExitStatuses() throws -> [String: String] {
    let man = try String(
      contentsOf: SharedFixtures.packageRoot.appendingPathComponent("man/graphvault.1"),
      encoding: .utf8)
    let lines = man.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let start = lines.firstIndex(of: ".Sh EXIT STATUS") else { return [:] }
    var table: [String: String] = [:]
    var i = start + 1
    while i + 1 < lines.count, !lines[i].hasPrefix(".Sh ") {
      if lines[i].hasPrefix(".It Sy ") { table[String(lines[i].dropFirst(7))] = lines[i + 1] }
      i += 1
    }
    return table
  }

  @Test func theManPageDocumentsTheSameExitStatusesAsHelp() throws {
    let help = try Self.helpExitStatuses()
    #expect(help.count == 9)
    #expect(try Self.manPageExitStatuses() == help)
  }
}
