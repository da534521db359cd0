import ArchiveFormat
import ArgumentParser
import Foundation
import GraphVault

extension Compression: ExpressibleByArgument {}

/// `graphvault backup STORE`: the store's object graph into a compressed archive.
struct BackupCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "backup",
    abstract: "Back up a store into a compressed, verifiable archive; print the archive's path.",
    discussion:
      "Without --model, the model is read from the store's Z_MODELCACHE. The store is never changed; the archive (mode 0600) appears under its final name only when complete, and names never collide. With a password (--password-file, GRAPHVAULT_PASSWORD_FILE or GRAPHVAULT_PASSWORD_COMMAND) the archive is encrypted; a folder or s3:// prefix keeps one password per store (see --new-password). With --output -, the archive goes to standard output and the summary (--json) to standard error."
  )

  @Argument(help: "The store (a Core Data SQLite file; its -wal is read too).")
  var store: String

  @Option(
    help: "The model, for stores without Z_MODELCACHE: .xcdatamodeld, .momd, .xcdatamodel or .mom.")
  var model: String?

  @Option(
    help:
      "The archive file, a folder or s3://BUCKET/PREFIX/ for <store>-<UTC time>.gvault (default: the current folder), or - for standard output."
  )
  var output: String?

  @Option(help: "zstd, xz, gzip or none.")
  var compression: Compression = .zstd

  @Option(
    help: ArgumentHelp(
      "Record this time (ISO 8601, such as 2026-01-31T03:00:00Z) as the archive's creation time, as restic's backup --time.",
      valueName: "time"))
  var time: String?

  @Option(
    help: ArgumentHelp(
      "The archive format: 5 (the default: the change ledger incremental backups build on, text of few distinct words as numbered words, a full archive's sketches after its objects), or 4, 3, 2 or 1 for an older reader (4: sketches first, the store read twice; 3: text as it is; 2: no change ledger; 1: for graphvault 0.1).",
      valueName: "version"))
  var formatVersion: Int64 = ArchiveLayout.formatVersion

  @Flag(
    help:
      "Back up into a folder or prefix whose newest archive of this store is under another password (or none): the change is meant. Without it such a backup is refused (77)."
  )
  var newPassword = false

  @Flag(
    help:
      "Write only what changed since the newest complete archive of this store (by its UUID) in the destination folder or s3:// prefix; a full archive when there is none (the summary says why). Restoring it reads its chain of parents, which must stay beside it."
  )
  var incremental = false

  @Option(
    help: ArgumentHelp(
      "The parent of an incremental archive, in the destination folder (implies --incremental).",
      valueName: "archive"))
  var parent: String?

  @Option(
    help: ArgumentHelp(
      "With --incremental, start a new chain with a full archive once a chain holds N archives (the full one included).",
      valueName: "N"))
  var fullEvery: Int?

  @Option(
    help: ArgumentHelp(
      "Keep running (a systemd service): back up now, then at the end of every SECONDS in which the store changed, incrementally; stop on SIGTERM or SIGINT once the backup under way is written.",
      valueName: "seconds"))
  var watch: Double?

  @OptionGroup var password: PasswordOptions
  @OptionGroup var lock: LockOptions
  @OptionGroup var options: GlobalOptions

  func validate() throws {
    guard ArchiveLayout.formatVersions.contains(formatVersion) else {
      throw ValidationError(
        "--format-version \(formatVersion): \(ArchiveLayout.unsupportedFormat(formatVersion, verb: "writes"))"
      )
    }
    if let fullEvery, fullEvery < 1 {
      throw ValidationError("--full-every \(fullEvery): a chain holds at least 1 archive")
    }
    if fullEvery != nil && !incremental && parent == nil {
      throw ValidationError("--full-every applies to --incremental backups")
    }
    if let watch {
      guard watch > 0, watch.isFinite else {
        throw ValidationError("--watch \(watch): the interval is a positive number of seconds")
      }
      if time != nil {
        throw ValidationError("--watch takes each archive's time as it is written, not --time")
      }
      if output == "-" {
        throw ValidationError(
          "--watch writes into a folder or s3:// prefix, not to standard output")
      }
    }
    if let time, TimeOption.parse(time) == nil {
      throw ValidationError(
        "--time \(time) is not an ISO 8601 time (such as 2026-01-31T03:00:00Z or 2026-01-31T04:00:00+01:00)"
      )
    }
  }

  func run() throws {
    try Failure.exitOnError(json: options.json, dataOnStandardOutput: output == "-") {
      var settings = BackupService.Options()
      settings.modelPath = model
      settings.output = try output.map(Location.given)
      settings.compression = compression
      settings.formatVersion = formatVersion
      settings.now = time.flatMap(TimeOption.parse)
      settings.password = password.source
      settings.newPassword = newPassword
      settings.wait = lock.wait
      settings.incremental = incremental || parent != nil
      settings.parent = parent
      settings.fullEvery = fullEvery
      if let watch {
        try watching(every: watch, settings)
        return
      }
      let result = try StatusLine(command: "backup", options: options).showing { meter in
        settings.meter = meter
        return try BackupService.backup(storePath: store, options: settings)
      }
      sayWhyFull(result)
      try Output.archive(result, path: result.archive, output: output, options: options)
    }
  }

  /// Runs ``BackupService/watch(storePath:every:options:until:report:)`` until SIGTERM or
  /// SIGINT, printing each archive as it is written.
  private func watching(every interval: Double, _ settings: BackupService.Options) throws {
    let stop = WatchStop()
    // Handled, not fatal: the backup under way is finished first.
    StopSignals.handOver([SIGTERM, SIGINT]) { stop.stop() }
    try BackupService.watch(storePath: store, every: interval, options: settings, until: stop) {
      result in
      sayWhyFull(result)
      // Straight to the file, each line as it comes (print's buffer would hold them back).
      if options.json {
        try? Output.json(result)
      } else if !options.quiet {
        FileHandle.standardOutput.write(Data("\(result.archive)\n".utf8))
      }
    }
  }

  /// Says on standard error why a backup asked to be incremental wrote a full archive (the
  /// JSON document says it as `fullBecause`).
  private func sayWhyFull(_ result: BackupResult) {
    guard let reason = result.fullBecause, !options.quiet, !options.json else { return }
    FileHandle.standardError.write(
      Data("graphvault: a full archive, not incremental: \(reason)\n".utf8))
  }
}
