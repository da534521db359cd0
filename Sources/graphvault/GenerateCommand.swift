import ArgumentParser
import Foundation
import GraphVault

/// `graphvault generate MODEL --output DIR`: a Swift class per entity.
struct GenerateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "generate",
    abstract: "Write a Swift class per entity of a model, as Xcode's class generation does.",
    discussion: """
      Each entity gets a subclass of ObjectStore's ManagedObject (following the entity \
      hierarchy) in a file of its own, with a typed property per attribute (optional when the \
      model says so) and relationship (to-one as the destination's class, to-many as a Set, \
      ordered to-many as an array); <Model>EntityClasses.swift registers them all on a \
      context. MODEL is an .xcdatamodeld, .momd, .xcdatamodel, .mom or a store that keeps its \
      model. Files graphvault wrote before are replaced; any other file in the way is refused \
      (73) unless --force. The same model gives the same bytes.
      """)

  @Argument(help: "The model: .xcdatamodeld, .momd, .xcdatamodel, .mom, or a store.")
  var model: String

  @Option(name: .customLong("model-version"), help: "The version (default: current).")
  var modelVersion: String?

  @Option(help: ArgumentHelp("The folder the files go into (made if missing).", valueName: "dir"))
  var output: String

  @Flag(help: "Replace files in the way that graphvault did not write.")
  var force = false

  @OptionGroup var options: GlobalOptions

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      let result = try GenerateService.generate(
        modelPath: model, versionName: modelVersion, output: output, force: force)
      if options.json {
        try Output.json(result)
      } else if !options.quiet {
        print(
          "generated \(result.files.count) files for \(result.modelVersion) in \(result.output)")
        for file in result.files { print("  \(file)") }
      }
    }
  }
}
