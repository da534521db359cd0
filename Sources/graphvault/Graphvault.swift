import ArgumentParser
import GraphVault

/// The `graphvault` command: backs up, restores and migrates Core Data object graphs.
@main
struct Graphvault: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "graphvault",
    abstract: "Back up, restore and migrate Core Data object graphs (SQLite stores).",
    discussion: """
      graphvault reads Core Data SQLite stores (the files macOS and iOS apps keep), writes their \
      object graphs into compressed, verifiable archives, and restores an archive into a fresh \
      store, migrating data from older model versions on the way in.

      EXIT STATUS
      \(ExitStatus.helpTable)
      """,
    version: ToolInfo.version,
    subcommands: [
      BackupCommand.self, RestoreCommand.self, VerifyCommand.self, ListCommand.self,
      ModelCommand.self,
      CreateCommand.self, SampleCommand.self,
    ]
  )
}

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
  @Flag(help: "Print one JSON document on standard output.")
  var json = false

  @Flag(name: .shortAndLong, help: "Print nothing but errors.")
  var quiet = false
}
