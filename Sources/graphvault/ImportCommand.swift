import ArgumentParser
import GraphVault

/// `graphvault import FILE --to STORE [--model PATH] [--force]`: a store built from JSON
/// objects.
struct ImportCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "import",
    abstract:
      "Build a store from JSON objects (what graphvault export writes, or written by hand).",
    discussion:
      "Reads {\"model\": …, \"objects\": [ … ]}, a list of objects, or JSON Lines. The model is the one the file carries, else --model. An object may leave out \"pk\" (a fresh key is given) and may refer to another by the values that pick it out instead of its key: {\"class\": \"Person\", \"firstName\": \"Ann\", \"lastName\": \"Lee\"}. Objects are created, then linked, then validated and saved in one transaction; the store appears under its name only when complete. Bad JSON, an unknown entity or attribute, a value of the wrong type or a reference that does not pick out exactly one object: exit 65, naming the object's position, line and key."
  )

  @Argument(help: "The JSON file (- for standard input).")
  var file: String

  @Option(help: "The store to create.")
  var to: String

  @Option(
    help: "The model, when the file carries none: .xcdatamodeld, .momd, .xcdatamodel or .mom.")
  var model: String?

  @Flag(help: "Replace an existing store.")
  var force = false

  @Option(help: "Wait up to this many seconds for another import or restore to the same store.")
  var wait: Double?

  @OptionGroup var options: GlobalOptions

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      var settings = ImportService.Options()
      settings.modelPath = model
      settings.force = force
      settings.wait = wait
      let result = try StatusLine(command: "import", options: options).showing { meter in
        settings.meter = meter
        return try ImportService.importObjects(from: file, to: to, options: settings)
      }
      if options.json {
        try Output.json(result)
      } else if !options.quiet {
        print(result.store)
      }
    }
  }
}
