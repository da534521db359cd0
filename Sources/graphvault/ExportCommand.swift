import ArgumentParser
import GraphVault

extension ExportFormat: ExpressibleByArgument {}

/// `graphvault export STORE|ARCHIVE [--format json|jsonl] [--entity NAME]…`: the objects as
/// class-tagged dictionaries in JSON.
struct ExportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "export",
    abstract: "Write the objects of a store or an archive as JSON, with their model.",
    discussion:
      "Each object is a class-tagged dictionary: \"class\" (its entity), \"pk\" (its primary key), its attributes and its relationships as references ({\"class\": \"Author\", \"pk\": 3}). Every type is kept exactly: dates as ISO 8601 with all the fraction they hold, decimals as strings, data as {\"base64\": …}, transformables as the keyed archive they hold when it decodes. --format json writes {\"model\": …, \"objects\": [ … ]}; jsonl writes the model on the first line, then an object a line. Entities by name, objects by key, keys sorted: the same store gives the same bytes. graphvault import reads both."
  )

  @Argument(help: "The store or archive to export (an archive is restored to a temporary store).")
  var source: String

  @Option(help: "json (default: one document) or jsonl (one object a line).")
  var format: ExportFormat = .json

  @Option(
    help: ArgumentHelp(
      "An entity to export, with its sub-entities (repeatable; default: all).",
      valueName: "name"))
  var entity: [String] = []

  @Option(
    help: "The model, for stores without Z_MODELCACHE: .xcdatamodeld, .momd, .xcdatamodel or .mom.")
  var model: String?

  @Option(
    help: "The file to write (default: - for standard output); an existing one only with --force.")
  var output: String = "-"

  @Flag(help: "Replace the file at --output (never the file being read).")
  var force = false

  @OptionGroup var reading: ReadingOptions

  @OptionGroup var options: GlobalOptions

  func run() throws {
    try Failure.exitOnError(json: options.json, dataOnStandardOutput: output == "-") {
      var settings = ExportService.Options()
      settings.format = format
      settings.entities = entity
      settings.modelPath = model
      settings.output = output
      settings.force = force
      settings.password = reading.password.source
      settings.allowUnencrypted = reading.allowUnencrypted
      let result = try StatusLine(command: "export", options: options).showing { meter in
        settings.meter = meter
        return try ExportService.export(source: Location.given(source), options: settings)
      }
      try Output.archive(result, path: result.output, output: output, options: options)
    }
  }
}
