import ArchiveStorage
import ArgumentParser
import GraphVault

/// `graphvault prune DIR --keep-…`: removes the archives a retention policy does not keep.
struct PruneCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "prune",
    abstract:
      "Remove the archives of a folder that no --keep-* policy keeps (restic's forget rules).",
    discussion: """
      Archives are grouped by the store they were made from (recorded in each archive) and each \
      group is pruned on its own, by the creation times the archives record (never file times). \
      Walking a group newest first, --keep-last N keeps the newest N; --keep-hourly/daily/weekly/\
      monthly/yearly N keep the newest archive of each of the N most recent hours, days, ISO \
      weeks, months or years (UTC) that have one; --keep-within 1y5m7d2h keeps every archive \
      made within that span before the newest. An archive any policy keeps stays; when a period \
      policy finds fewer periods than N, the oldest archive stays too. Each archive's header and \
      index are read and checked first (a plain zstd archive's by ranged reads, as restic's forget \
      reads only what it decides from; others, and every archive with --read-data, whole, every \
      member checked against the index): incomplete or damaged ones are listed, kept, and never \
      counted. Check the archives' data with verify DIR --read-data-subset. With a password, only the archives it opens are counted and removed: plain ones \
      (unless --allow-unencrypted) and ones encrypted with another password are listed, kept, \
      and never counted; a password that opens none of them is refused (77). Hidden temporary files that killed runs left (and no living run holds) are \
      removed. A prune waits for no backup into the folder unless --wait: it is refused (75) \
      while one runs.
      """
  )

  @Argument(help: "A folder of archives, or s3://BUCKET/PREFIX/.")
  var folder: String

  @Option(
    name: .customLong("keep-last"), parsing: .unconditional, help: "Keep the newest N archives.")
  var keepLast: Int?
  @Option(
    name: .customLong("keep-hourly"), parsing: .unconditional,
    help: "Keep the newest archive of each of N hours.")
  var keepHourly: Int?
  @Option(
    name: .customLong("keep-daily"), parsing: .unconditional,
    help: "Keep the newest archive of each of N days.")
  var keepDaily: Int?
  @Option(
    name: .customLong("keep-weekly"), parsing: .unconditional,
    help: "Keep the newest archive of each of N weeks.")
  var keepWeekly: Int?
  @Option(
    name: .customLong("keep-monthly"), parsing: .unconditional,
    help: "Keep the newest archive of each of N months.")
  var keepMonthly: Int?
  @Option(
    name: .customLong("keep-yearly"), parsing: .unconditional,
    help: "Keep the newest archive of each of N years.")
  var keepYearly: Int?
  @Option(
    name: .customLong("keep-within"),
    help: ArgumentHelp(
      "Keep every archive made within this span before the newest (1y5m7d2h: years, months, days, hours).",
      valueName: "span"))
  var keepWithin: String?

  @Flag(name: .customLong("dry-run"), help: "Say what would be removed; remove nothing.")
  var dryRun = false

  @Flag(
    name: .customLong("read-data"),
    help:
      "Read every archive whole and check every member against its index before deciding (plain zstd archives are otherwise decided from their header and index)."
  )
  var readData = false

  @OptionGroup var reading: ReadingOptions
  @OptionGroup var lock: LockOptions
  @OptionGroup var options: GlobalOptions

  /// The policy the options describe.
  var policy: RetentionPolicy {
    var policy = RetentionPolicy()
    policy.last = keepLast ?? 0
    let periods: [(RetentionPolicy.Period, Int?)] = [
      (.hourly, keepHourly), (.daily, keepDaily), (.weekly, keepWeekly),
      (.monthly, keepMonthly), (.yearly, keepYearly),
    ]
    for case (let period, let count?) in periods { policy.periods[period] = count }
    policy.within = keepWithin.flatMap(RetentionPolicy.Span.init)
    return policy
  }

  func validate() throws {
    let counts: [(String, Int?)] = [
      ("--keep-last", keepLast), ("--keep-hourly", keepHourly), ("--keep-daily", keepDaily),
      ("--keep-weekly", keepWeekly), ("--keep-monthly", keepMonthly),
      ("--keep-yearly", keepYearly),
    ]
    for case (let name, let count?) in counts where count < 0 {
      throw ValidationError("\(name) \(count): a count must be 0 or more")
    }
    if let keepWithin, RetentionPolicy.Span(keepWithin) == nil {
      throw ValidationError(
        "--keep-within \(keepWithin) is not a span such as 1y5m7d2h (years, months, days, hours, in that order)"
      )
    }
    if policy.isEmpty {
      throw ValidationError(
        "give at least one --keep-* option with a count above 0: an empty policy would remove every archive"
      )
    }
  }

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      var settings = PruneService.Options()
      settings.policy = policy
      settings.dryRun = dryRun
      settings.readData = readData
      settings.password = reading.password.source
      settings.allowUnencrypted = reading.allowUnencrypted
      settings.wait = lock.wait
      let report = try StatusLine(command: "prune", options: options).showing { meter in
        settings.meter = meter
        return try PruneService.prune(folder: Location.given(folder), options: settings)
      }
      if options.json {
        try Output.json(report)
      } else if !options.quiet {
        print(Self.text(report), terminator: "")
      }
    }
  }

  /// The report as lines: per group, each archive kept (and why) or removed; then what is
  /// unusable, then leftovers.
  static func text(_ report: PruneReport) -> String {
    let verb = report.dryRun ? "would remove" : "remove"
    var lines: [String] = []
    if report.dryRun { lines.append("dry run: nothing was removed") }
    for group in report.groups {
      lines.append(
        "archives of \(group.source): keep \(group.keep.count), \(verb) \(group.remove.count)")
      let width = verb.count
      func label(_ word: String) -> String {
        word + String(repeating: " ", count: max(0, width - word.count))
      }
      for kept in group.keep {
        lines.append(
          "  \(label("keep"))  \(kept.created)  \(kept.archive)  (\(kept.reasons.joined(separator: ", ")))"
        )
      }
      for removed in group.remove {
        lines.append("  \(verb)  \(removed.created)  \(removed.archive)")
      }
    }
    for unusable in report.unusable {
      lines.append("unusable (kept, not counted): \(unusable.archive): \(unusable.problem)")
    }
    for archive in report.notOpened {
      lines.append(
        "not opened by the password (kept, not counted): \(archive.archive): \(archive.reason)")
    }
    for leftover in report.leftovers {
      lines.append("left by a killed run, \(verb): \(leftover.name) (\(leftover.bytes) bytes)")
    }
    // Sources and names come from the archives: shown escaped, never as terminal codes.
    return lines.map(TerminalText.escaped).joined(separator: "\n") + "\n"
  }
}
