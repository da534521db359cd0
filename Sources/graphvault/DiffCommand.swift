import ArgumentParser
import Foundation
import GraphVault

/// `graphvault diff OLD NEW`: the objects inserted, deleted and changed between two archives
/// or stores.
struct DiffCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "diff",
    abstract: "Show the objects inserted, deleted and changed between two archives or stores.",
    discussion: """
      Each side is an archive (a file, - for standard input, or s3://BUCKET/KEY) or a store. \
      Two archives of one model compared whole by primary key are compared as they stream, \
      neither restored (a damaged one stops the comparison with 65); otherwise archives are \
      verified and restored to private temporary stores first. Objects are matched \
      by primary key, or with --key ENTITY.ATTRIBUTE by an attribute (a natural key or a UUID) \
      when the sides' keys differ (a store rebuilt by an import, objects merged in). Two \
      different stores (other store UUIDs) match an entity with a uniqueness constraint on one \
      attribute (SwiftData's @Attribute(.unique)) by it, and the summary says so. When the \
      two models differ, OLD is migrated into NEW's model first, as restore would.

      Each object that differs is a line: '+' inserted, '-' deleted (with its first values), 'M' \
      changed, followed by each changed property's old and new value (long values cut on a terminal unless --full; key attributes first); \
      relationships name their targets (Author/p3, or Author[name='Le Guin'] when Author has a \
      --key). A summary per entity follows. With --json, one document: {"changes": [...], \
      "summary": {...}}.

      Exits 0 when the sides are equal (within the selection), 1 when they differ, and with the \
      statuses below when something is wrong.
      """
  )

  @Argument(help: "The older archive or store.")
  var old: String

  @Argument(help: "The newer archive or store.")
  var new: String

  @Option(
    help: ArgumentHelp(
      "An entity to compare, with its sub-entities (repeatable; default: all).",
      valueName: "name"))
  var entity: [String] = []

  @Option(
    name: .customLong("where"),
    help: ArgumentHelp(
      "Compare only objects matching this Core Data predicate (with one --entity), on each side.",
      valueName: "predicate"))
  var predicate: String?

  @Option(
    help: ArgumentHelp(
      "Match ENTITY's objects (and name them in relationships) by ATTRIBUTE rather than primary key (repeatable).",
      valueName: "ENTITY.ATTRIBUTE"))
  var key: [String] = []

  @Option(
    help:
      "The model, for stores without Z_MODELCACHE; its versions are the migration path when the sides' models differ."
  )
  var model: String?

  @OptionGroup var display: DisplayOptions
  @OptionGroup var reading: ReadingOptions
  @OptionGroup var options: GlobalOptions

  func run() throws {
    var differ = false
    try Failure.exitOnError(json: options.json) {
      var settings = DiffService.Options()
      settings.entities = entity
      settings.predicate = predicate
      settings.keys = key
      settings.modelPath = model
      settings.password = reading.password.source
      settings.allowUnencrypted = reading.allowUnencrypted
      let printer = ChangePrinter(
        json: options.json, quiet: options.quiet, display: ValueDisplay(display))
      let summary = try StatusLine(command: "diff", options: options, printsAsItGoes: true)
        .showing { meter in
          settings.meter = meter
          return try DiffService.diff(
            old: Location.given(old), new: Location.given(new), options: settings
          ) {
            try printer.print($0)
          }
        }
      try printer.finish(summary)
      differ = !summary.equal
    }
    if differ { throw ExitCode(1) }
  }
}
