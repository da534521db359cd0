import ArgumentParser
import Foundation
import GraphVault

/// `graphvault model STORE|MODEL`: entities, attributes, relationships, versions and hashes.
struct ModelCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "model",
    abstract: "Show a model's entities, attributes, relationships, versions and hashes.",
    discussion:
      "PATH is a store (its metadata and Z_MODELCACHE), an .xcdatamodeld or .momd folder (every version), an .xcdatamodel folder or a .mom file."
  )

  @Argument(help: "A store, or a model (.xcdatamodeld, .xcdatamodel, .momd, .mom).")
  var path: String

  @OptionGroup var options: GlobalOptions

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      let report = try StoreService.describe(path: path)
      if options.json {
        try Output.json(report)
      } else if !options.quiet {
        print(report.text)
      }
    }
  }
}
