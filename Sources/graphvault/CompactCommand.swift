import ArchiveFormat
import ArgumentParser
import GraphVault

/// `graphvault compact ARCHIVE`: a full archive of the point an archive holds.
struct CompactCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "compact",
    abstract:
      "Write a full archive of the point an incremental archive holds, from its chain, without the store; print its path.",
    discussion:
      "The chain is read and checked as restore reads it, restored into a private store, and that store backed up with the archive's creation time and source, so the new archive stands for the same point and starts a chain of its own. The chain is not changed: once the full archive is there, prune may let its archives go."
  )

  @Argument(help: "The archive (an incremental one is read with its chain).")
  var archive: String

  @Option(
    help:
      "The archive file, or a folder or s3://BUCKET/PREFIX/ for <store>-<UTC time>.gvault (default: the current folder)."
  )
  var output: String?

  @Option(help: "zstd, xz, gzip or none.")
  var compression: Compression = .zstd

  @OptionGroup var reading: ReadingOptions
  @OptionGroup var options: GlobalOptions

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      var settings = CompactService.Options()
      settings.output = try output.map(Location.given)
      settings.compression = compression
      settings.password = reading.password.source
      settings.allowUnencrypted = reading.allowUnencrypted
      let result = try StatusLine(command: "compact", options: options).showing { meter in
        settings.meter = meter
        return try CompactService.compact(archive: Location.given(archive), options: settings)
      }
      try Output.archive(result, path: result.archive, output: output, options: options)
    }
  }
}
