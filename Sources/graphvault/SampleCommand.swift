import ArgumentParser
import Foundation
import GraphVault

extension SampleWorkload: ExpressibleByArgument {}

/// `graphvault sample STORE`: a store of the sample model filled with generated objects.
struct SampleCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "sample",
    abstract:
      "Create a store of the sample Library model filled with generated objects (for trying graphvault out, and load tests).",
    discussion:
      "The same seed gives the same store. The library workload's model is Fixtures/Library.xcdatamodeld, built in code; the text workload is text and numbers as most apps hold (authors, tags, books with summaries), the relationships workload has more links than objects (people, teams, ordered posts). Every store carries its model in Z_MODELCACHE, so backup needs no --model."
  )

  @Argument(help: "The store to create.")
  var store: String

  @Option(help: "About how many objects to generate.")
  var objects = 1_000

  @Option(help: "The random seed.")
  var seed: UInt64 = 1

  @Flag(help: "Replace an existing store.")
  var force = false

  @Option(help: "library (default), text or relationships.")
  var workload: SampleWorkload = .library

  @OptionGroup var options: GlobalOptions

  func validate() throws {
    guard objects > 0 else { throw ValidationError("--objects must be positive") }
  }

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      if workload == .library {
        try SampleLibrary.generate(at: store, objects: objects, seed: seed, overwrite: force)
      } else {
        if force, FileManager.default.fileExists(atPath: store) {
          try FileManager.default.removeItem(atPath: store)
        }
        try workload.generate(at: store, objects: objects, seed: seed)
      }
      if options.json {
        try Output.json(["store": store, "objects": String(objects)])
      } else if !options.quiet {
        print(store)
      }
    }
  }
}
