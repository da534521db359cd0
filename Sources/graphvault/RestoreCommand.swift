import ArgumentParser
import GraphVault

/// `graphvault restore ARCHIVE --to STORE`: an archive into a fresh store.
struct RestoreCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "restore",
    abstract: "Restore an archive into a fresh store at the archive's model version.",
    discussion:
      "The store is built beside the destination and renamed into place only when every member's checksum matched the index; an existing store is refused unless --force."
  )

  @Argument(help: "The archive (.gvault).")
  var archive: String

  @Option(help: "The store to create.")
  var to: String

  @Flag(help: "Replace an existing store.")
  var force = false

  @OptionGroup var options: GlobalOptions

  func run() throws {
    try Failure.exitOnError {
      let result = try RestoreService.restore(archivePath: archive, to: to, force: force)
      if options.json {
        try Output.json(result)
      } else if !options.quiet {
        print(result.store)
      }
    }
  }
}
