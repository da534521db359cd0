import ArgumentParser
import Foundation
import GraphVault

/// `graphvault verify ARCHIVE`: checks an archive without restoring it.
struct VerifyCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "verify",
    abstract: "Check an archive: complete, every checksum, every record, every reference.",
    discussion:
      "Exits 0 when the archive passed every check and 65 when it did not, naming the first problems and the entities that are still intact."
  )

  @Argument(help: "The archive (.gvault), or - for standard input.")
  var archive: String

  @OptionGroup var reading: ReadingOptions
  @OptionGroup var options: GlobalOptions

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      let report = try StatusLine(command: "verify", options: options).showing { meter in
        try VerifyService.verify(
          archivePath: archive, password: reading.password.source,
          allowingUnencrypted: reading.allowUnencrypted, meter: meter)
      }
      if options.json {
        try Output.json(report)
      } else if !options.quiet || !report.ok {
        let total = report.objects.values.reduce(0, +)
        if report.ok {
          print("\(archive): OK, \(total) objects in \(report.members) members")
        } else {
          var lines = [
            "\(archive): FAILED (\(report.problems.count)\(report.problems.count == VerifyService.problemLimit ? "+" : "") problems)"
          ]
          lines += report.problems.map { "  " + $0 }
          lines.append(
            "  intact entities: \(report.intactEntities.isEmpty ? "none" : report.intactEntities.joined(separator: ", "))"
          )
          lines.append("  restore refuses this archive")
          FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
        }
      }
      // The report said what failed: exit without a second message or document.
      if !report.ok { throw ExitCode(ExitStatus.dataError.rawValue) }
    }
  }
}
