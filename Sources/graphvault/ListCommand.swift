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
    var failed: ExitStatus?
    try Failure.exitOnError(json: options.json) {
      let summaries = try ListService.list(Location.given(path), password: password.source)
      // Every archive is listed; one that a password could not open, or that is damaged,
      // still sets the status (an encrypted one listed without a password does not).
      failed = ExitStatus.worst(
        of: summaries.filter { $0.state != .passwordNeeded }.compactMap(\.failure))
      if options.json {
        try Output.json(summaries)
        return
      }
      guard !options.quiet else { return }
      if !ListService.isLocation(try Location.given(path)), let summary = summaries.first {
        say("archive \(summary.archive)  \(summary.stateText)")
        say("  created \(summary.created ?? "?")")
        say("  source \(summary.source ?? "?")")
        say(
          "  model \(summary.model ?? "?")\(summary.modelVersion.map { " version \($0)" } ?? "")")
        say("  size \(summary.bytes) bytes")
        say("  format \(summary.format.map(String.init) ?? "?")")
        if let parent = summary.parent {
          say("  incremental, depth \(summary.depth ?? 0): its parent is \(parent)")
          say("  changed since its parent:")
        }
        for (entity, count) in summary.objects.sorted(by: { $0.key < $1.key }) {
          say("  \(entity): \(count)")
        }
        for (table, count) in summary.tables.sorted(by: { $0.key < $1.key }) {
          say("  table \(table): \(count) rows")
        }
        return
      }
      for summary in summaries {
        if summary.leftover {
          say("-  LEFTOVER \(summary.bytes) bytes  \(summary.archive)  (\(summary.error ?? ""))")
          continue
        }
        // An incremental archive counts what changed; its kind says so, with its depth.
        let kind =
          summary.kind == "incremental" ? "incr+\(summary.depth ?? 0)" : summary.kind ?? "?"
        say(
          "\(summary.created ?? "-")  \(kind)  \([.complete, .incomplete].contains(summary.state) ? String(summary.totalObjects) : "?") objects  \(summary.bytes) bytes  \(summary.stateText)  \(summary.archive)"
        )
      }
    }
    if let failed { throw ExitCode(failed.rawValue) }
  }

  /// Prints a line of the listing, its archive-given text escaped (``TerminalText``).
  private func say(_ line: String) {
    print(TerminalText.escaped(line))
  }
}
