import ArgumentParser
import GraphVault

/// `graphvault create STORE --model PATH`: an empty store in Core Data's layout.
struct CreateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "create",
    abstract: "Create an empty store in Core Data's layout from a model.")

  @Argument(help: "The store to create.")
  var store: String

  @Option(
    help: "The model: an .xcdatamodeld, .xcdatamodel, .momd, .mom, or a store with Z_MODELCACHE.")
  var model: String

  @Option(help: "The model version (default: the current version).")
  var modelVersion: String?

  @Flag(help: "Replace an existing store.")
  var force = false

  @Flag(help: "Add the persistent-history tables (ACHANGE, ATRANSACTION, ATRANSACTIONSTRING).")
  var persistentHistory = false

  @OptionGroup var options: GlobalOptions

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      let version = try StoreService.create(
        at: store, modelPath: model, versionName: modelVersion, force: force,
        persistentHistory: persistentHistory)
      if options.json {
        try Output.json(["store": store, "modelVersion": version])
      } else if !options.quiet {
        print(store)
      }
    }
  }
}
