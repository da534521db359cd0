import ArgumentParser
import Foundation
import GraphVault

/// `graphvault migrate STORE --model M`: a store migrated in place to a version of its model.
struct MigrateCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "migrate",
    abstract: "Migrate a store in place to a version of its model, as Core Data does at launch.",
    discussion: """
      The store's version is found in --model's versions (by its entity version hashes, else \
      its schema) and its objects migrated hop by hop to --model-version (default: the current \
      version), as a migrating restore migrates an archive's; --mapping (a JSON mapping file or \
      the app's .xcmappingmodel or .cdm) and --mappings DIR give what cannot be inferred. The \
      new store is built beside the old one and renamed over it: a run killed at any moment \
      leaves the old store or the new one, whole. Other processes' transactions are \
      waited for up to --wait seconds (default 5), then 75; from then on nothing can be \
      committed to the store until it is replaced. Run it with the app stopped, as Core Data \
      migrates at launch. --keep-original keeps the old store as STORE.orig; --dry-run prints \
      the plan and writes nothing. A store already at the target version is left as it is.
      """
  )

  @Argument(help: "The store to migrate.")
  var store: String

  @Option(help: "The model set with the store's version: .xcdatamodeld or .momd.")
  var model: String

  @Option(name: .customLong("model-version"), help: "The target version (default: current).")
  var modelVersion: String?

  @OptionGroup var mapping: MappingOptions

  @Flag(name: .customLong("dry-run"), help: "Print the plan and counts; write nothing.")
  var dryRun = false

  @Flag(
    name: .customLong("keep-original"),
    help: "Keep the unmigrated store as STORE.orig (refused if that exists).")
  var keepOriginal = false

  @Option(
    help: ArgumentHelp(
      "Wait up to this many seconds for other processes' transactions (default: 5).",
      valueName: "seconds"))
  var wait: Double?

  @OptionGroup var options: GlobalOptions

  func validate() throws { try LockOptions.check(wait: wait) }

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      var settings = MigrateService.Options(modelPath: model)
      settings.modelVersion = modelVersion
      settings.mappingPaths = mapping.mapping
      settings.mappingDirectory = mapping.mappings
      settings.dryRun = dryRun
      settings.keepOriginal = keepOriginal
      settings.wait = wait
      let result = try StatusLine(command: "migrate", options: options).showing { meter in
        settings.meter = meter
        return try MigrateService.migrate(store: store, options: settings)
      }
      if options.json {
        try Output.json(result)
      } else if !options.quiet {
        print(Self.summary(result), terminator: "")
      }
    }
  }

  static func summary(_ result: MigrateResult) -> String {
    let total = result.objects.values.reduce(0, +)
    guard let migration = result.migration else {
      return "\(result.store) is at \(result.to) already: nothing to do (\(total) objects)\n"
    }
    var lines = [
      result.dryRun
        ? "dry run: nothing was written (\(result.store))"
        : "migrated \(result.store): \(migration.from) → \(migration.to), \(migration.hops.count) hop(s), \(total) objects"
    ]
    for hop in migration.hops {
      lines.append("hop \(hop.from) → \(hop.to)")
      for change in hop.changes { lines.append("  \(change)") }
    }
    for note in migration.notes { lines.append("note: \(note)") }
    if let original = result.original { lines.append("the original store is kept as \(original)") }
    return lines.joined(separator: "\n") + "\n"
  }
}
