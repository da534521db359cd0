import ArchiveFormat
import ArgumentParser
import GraphVault

extension Compression: ExpressibleByArgument {}

/// `graphvault backup STORE`: the store's object graph into a compressed archive.
struct BackupCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "backup",
    abstract: "Back up a store into a compressed, verifiable archive; print the archive's path.",
    discussion:
      "Without --model, the model is read from the store's Z_MODELCACHE. The store is never changed; the archive appears under its final name only when complete."
  )

  @Argument(help: "The store (a Core Data SQLite file; its -wal is read too).")
  var store: String

  @Option(
    help: "The model, for stores without Z_MODELCACHE: .xcdatamodeld, .momd, .xcdatamodel or .mom.")
  var model: String?

  @Option(
    help:
      "The archive file, or a folder for <store>-<UTC time>.gvault (default: the current folder).")
  var output: String?

  @Option(help: "zstd, xz, gzip or none.")
  var compression: Compression = .zstd

  @OptionGroup var options: GlobalOptions

  func run() throws {
    try Failure.exitOnError {
      var settings = BackupService.Options()
      settings.modelPath = model
      settings.output = output
      settings.compression = compression
      settings.progress = Progress.reporter(quiet: options.quiet || options.json)
      let result = try BackupService.backup(storePath: store, options: settings)
      if options.json {
        try Output.json(result)
      } else if !options.quiet {
        print(result.archive)
      }
    }
  }
}
