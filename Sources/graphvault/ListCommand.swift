import ArgumentParser
import Foundation
import GraphVault

/// `graphvault list ARCHIVE|DIR`: what archives hold.
struct ListCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list",
    abstract:
      "Show an archive's model, creation time and object counts; for a folder, one line per archive, newest first."
  )

  @Argument(help: "An archive, a folder of archives, or - for an archive on standard input.")
  var path: String

  @OptionGroup var password: PasswordOptions
  @OptionGroup var options: GlobalOptions

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      let summaries = try ListService.list(path: path, password: password.source)
      if options.json {
        try Output.json(summaries)
        return
      }
      guard !options.quiet else { return }
      var isDirectory: ObjCBool = false
      _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
      if !isDirectory.boolValue, let summary = summaries.first {
        print(
          "archive \(summary.archive)\(summary.complete ? "" : " (INCOMPLETE: no index)")\(summary.encrypted ? " (encrypted)" : "")"
        )
        print("  created \(summary.created ?? "?")")
        print("  source \(summary.source ?? "?")")
        print(
          "  model \(summary.model ?? "?")\(summary.modelVersion.map { " version \($0)" } ?? "")")
        print("  size \(summary.bytes) bytes")
        print("  format \(summary.format.map(String.init) ?? "?")")
        for (entity, count) in summary.objects.sorted(by: { $0.key < $1.key }) {
          print("  \(entity): \(count)")
        }
        for (table, count) in summary.tables.sorted(by: { $0.key < $1.key }) {
          print("  table \(table): \(count) rows")
        }
        return
      }
      for summary in summaries {
        if summary.leftover {
          print("-  LEFTOVER \(summary.bytes) bytes  \(summary.archive)  (\(summary.error ?? ""))")
          continue
        }
        let state =
          summary.error.map { "UNREADABLE: \($0)" }
          ?? (summary.complete ? "complete" : "INCOMPLETE")
          + (summary.encrypted ? ", encrypted" : "")
        print(
          "\(summary.created ?? "-")  \(summary.totalObjects) objects  \(summary.bytes) bytes  \(state)  \(summary.archive)"
        )
      }
    }
  }
}
