import ArgumentParser
import Foundation
import GraphVault

/// `graphvault verify ARCHIVE|LOCATION`: checks an archive, or every archive of a location,
/// without restoring them.
struct VerifyCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "verify",
    abstract:
      "Check an archive, or every archive of a folder or s3:// prefix: complete, every checksum, every record, every reference.",
    discussion:
      "Exits 0 when every archive passed every check and 65 when one did not, naming the first problems (and, for one archive, the entities that are still intact). Of a location, every archive is checked whatever the others hold, one line each and a summary; with --read-data-subset N/T only the archives of run N of T are read whole (the others' header and index are checked), as restic's check: the runs 1/T to T/T together read every archive. An archive a password does not open makes the status 77 unless another is damaged."
  )

  @Argument(
    help:
      "The archive (.gvault), a folder of archives, s3://BUCKET/PREFIX/, or - for standard input."
  )
  var archive: String

  @Option(
    help: ArgumentHelp(
      "Of a location, read whole only the archives of run N of every T runs (such as 1/7 on Mondays, 2/7 on Tuesdays, …).",
      valueName: "N/T"))
  var readDataSubset: String?

  @OptionGroup var reading: ReadingOptions
  @OptionGroup var options: GlobalOptions

  func validate() throws {
    if let readDataSubset, DataSubset(readDataSubset) == nil {
      throw ValidationError(
        "--read-data-subset \(readDataSubset): give N/T with 1 ≤ N ≤ T, such as 1/7")
    }
    if readDataSubset != nil && !isLocation {
      throw ValidationError("--read-data-subset is for a folder or s3:// prefix of archives")
    }
  }

  func run() throws {
    guard !isLocation else { return try runOnLocation() }
    try Failure.exitOnError(json: options.json) {
      let report = try StatusLine(command: "verify", options: options).showing { meter in
        try VerifyService.verify(
          archive: Location.given(archive), password: reading.password.source,
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

  /// Whether the argument names a folder or `s3://` prefix (a name that cannot be parsed is
  /// left for the run to refuse).
  private var isLocation: Bool {
    (try? Location.given(archive)).map(ListService.isLocation) ?? false
  }

  /// Checks every archive of a location: a line each as it is checked, then a summary.
  private func runOnLocation() throws {
    var status: ExitStatus?
    try Failure.exitOnError(json: options.json) {
      let printsNow = !options.json && !options.quiet
      let report = try StatusLine(command: "verify", options: options, printsAsItGoes: printsNow)
        .showing { meter in
          try VerifyService.verify(
            location: Location.given(archive), password: reading.password.source,
            allowingUnencrypted: reading.allowUnencrypted,
            subset: readDataSubset.flatMap(DataSubset.init), meter: meter
          ) { result in
            if printsNow { FileHandle.standardOutput.write(Data(Self.line(result).utf8)) }
          }
        }
      status = ExitStatus.worst(of: report.failed.map { $0.failure ?? .invalidInput })
      if options.json {
        try Output.json(report)
        return
      }
      let failed = report.failed
      let whole = report.archives.filter(\.dataChecked).count
      let summary =
        "\(archive): \(report.archives.count) archives, \(report.archives.count - failed.count) OK, \(failed.count) FAILED; \(whole) read whole"
        + (report.subset.map { " (subset \($0))" } ?? "")
        + (report.leftovers > 0 ? "; \(report.leftovers) left by runs that did not finish" : "")
      if !options.quiet || !failed.isEmpty {
        var lines = [summary]
        for result in failed {
          lines.append("FAILED \(result.archive)")
          lines += result.problems.map { "  " + $0 }
        }
        FileHandle.standardError.write(
          Data((lines.map(TerminalText.escaped).joined(separator: "\n") + "\n").utf8))
      }
    }
    if let status { throw ExitCode(status.rawValue) }
  }

  /// One archive's line.
  private static func line(_ result: LocationReport.Archive) -> String {
    let how = result.dataChecked ? "read whole" : "header and index"
    let verdict = result.ok ? "OK    " : "FAILED"
    // An archive that could not be opened has no count to show.
    let objects =
      result.failure == nil || result.failure == .invalidInput ? String(result.objects) : "?"
    return TerminalText.escaped("\(verdict)  \(objects) objects  \(how)  \(result.archive)")
      + "\n"
  }
}
