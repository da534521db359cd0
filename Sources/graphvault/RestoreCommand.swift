import ArgumentParser
import Foundation
import GraphVault

/// `graphvault restore ARCHIVE --to STORE`: an archive into a fresh store, migrated into a
/// newer model version when one is given.
struct RestoreCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "restore",
    abstract:
      "Restore an archive into a fresh store, at its own model version or migrated to another.",
    discussion:
      "The store is built beside the destination and renamed into place only when every member's checksum matched the index and the migration succeeded; an existing store is refused unless --force. With --entity (and --where, --include), only the objects chosen are restored, with the objects they reach through to-one relationships and the --include key paths, by fixture's rules: a framed archive (the default zstd, on a disk or in a bucket) restored at its own version is read in part, what the selection reaches, each member read checked against the index; any other is verified and restored to a private temporary store first; the selection is then cut. With --model (a model set, a model file, or a store, whose Z_MODELCACHE is its model), the archive's version is found in the model set by its entity version hashes, as Core Data finds a store's model whatever the files and versions are called, and its objects are migrated hop by hop, in the set's order, to --model-version (default: the current version); an archive whose model is no version of the set (a SwiftData app's older model, kept only in its stores) is migrated by one hop inferred from its own model, as Core Data's lightweight migration infers one, and what cannot be inferred is refused naming the entity or attribute; --mapping gives what cannot be inferred: a JSON mapping file, or the app's own mapping models (.xcmappingmodel, .cdm; --mappings DIR for a folder of them), whose custom policy classes are refused by name (see graphvault(1), MAPPING FILES). --dry-run prints the plan and the objects affected, and writes nothing."
  )

  @Argument(
    help:
      "The archive (.gvault), - for standard input, or with --at a folder or s3://BUCKET/PREFIX/ of archives."
  )
  var archive: String

  @Option(
    help: ArgumentHelp(
      "Restore the store as it was at this time (ISO 8601): the newest archive at or before it in the folder or prefix ARCHIVE, full or incremental.",
      valueName: "time"))
  var at: String?

  @Option(
    name: .customLong("store"),
    help: ArgumentHelp(
      "With --at: the store whose archives to choose from, by name (needed when the folder holds several).",
      valueName: "name"))
  var storeName: String?

  @Option(help: "The store to create.")
  var to: String

  @Option(
    help:
      "The target model: .xcdatamodeld, .momd, .xcdatamodel, .mom, or a store (its Z_MODELCACHE).")
  var model: String?

  @Option(name: .customLong("model-version"), help: "The target version (default: current).")
  var modelVersion: String?

  @OptionGroup var mapping: MappingOptions

  @Flag(help: "Replace an existing store.")
  var force = false

  @Flag(name: .customLong("dry-run"), help: "Print the plan and counts; write nothing.")
  var dryRun = false

  @Flag(
    name: .customLong("drop-unsafe-schema"),
    help:
      "Leave out the entries of the archived schema that are refused (triggers the model does not make, views, text outside Core Data's layout), and the rows of a table left out, with a warning listing them; without it such an archive is refused (65)."
  )
  var dropUnsafeSchema = false

  @Option(
    help: ArgumentHelp(
      "Restore only objects of this entity (sub-entities included), with their closure.",
      valueName: "name"))
  var entity: String?

  @Option(
    name: .customLong("where"),
    help: ArgumentHelp(
      "With --entity: only the objects matching this Core Data predicate.",
      valueName: "predicate"))
  var predicate: String?

  @Option(
    help: ArgumentHelp(
      "With --entity: a to-many key path to bring along (repeatable), as fixture's --include.",
      valueName: "keypath"))
  var include: [String] = []

  @OptionGroup var reading: ReadingOptions
  @OptionGroup var lock: LockOptions
  @OptionGroup var options: GlobalOptions

  func validate() throws {
    if model == nil && (!mapping.isEmpty || modelVersion != nil) {
      throw ValidationError(
        "--mapping, --mappings and --model-version need --model (the target model)")
    }
    if let at, TimeOption.parse(at) == nil {
      throw ValidationError(
        "--at \(at) is not an ISO 8601 time (such as 2026-01-31T03:00:00Z or 2026-01-31T04:00:00+01:00)"
      )
    }
    if storeName != nil && at == nil {
      throw ValidationError("--store chooses among the archives of a folder: it needs --at")
    }
    if entity == nil && (predicate != nil || !include.isEmpty) {
      throw ValidationError("--where and --include need --entity (the objects to restore)")
    }
  }

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      var settings = RestoreOptions()
      settings.force = force
      settings.modelPath = model
      settings.modelVersion = modelVersion
      settings.mappingPaths = mapping.mapping
      settings.mappingDirectory = mapping.mappings
      settings.dryRun = dryRun
      settings.password = reading.password.source
      settings.allowUnencrypted = reading.allowUnencrypted
      settings.leaveOutUnsafeSchema = dropUnsafeSchema
      settings.wait = lock.wait
      settings.selection = entity.map {
        .init(entity: $0, predicate: predicate, includes: include)
      }
      var archive = try Location.given(self.archive)
      if let at = at.flatMap(TimeOption.parse) {
        archive = try RestoreService.archive(
          in: archive, at: at, store: storeName, password: reading.password.source)
        if !options.quiet && !options.json {
          FileHandle.standardError.write(Data("graphvault: restoring \(archive)\n".utf8))
        }
      }
      let result = try StatusLine(command: "restore", options: options).showing { meter in
        settings.meter = meter
        return try RestoreService.restore(archive: archive, to: to, options: settings)
      }
      for entry in result.leftOut {
        FileHandle.standardError.write(
          Data("graphvault: warning: left out of the archived schema: \(entry)\n".utf8))
      }
      if options.json {
        var result = result
        result.archive = archive.description
        try Output.json(result)
      } else if dryRun && !options.quiet {
        print(Self.plan(result), terminator: "")
      } else if !options.quiet {
        print(result.store)
      }
    }
  }

  /// The dry run's plan: hops, changes, objects affected, notes.
  static func plan(_ result: RestoreResult) -> String {
    var lines = ["dry run: nothing was written (\(result.store))"]
    if let migration = result.migration {
      lines.append("migrate \(migration.from) → \(migration.to), \(migration.hops.count) hop(s)")
      for hop in migration.hops {
        lines.append("hop \(hop.from) → \(hop.to)")
        for change in hop.changes { lines.append("  \(change)") }
        for (entity, counts) in hop.objects.sorted(by: { $0.key < $1.key }) {
          var parts: [String] = []
          if counts.migrated > 0 { parts.append("\(counts.migrated) migrated") }
          if counts.created > 0 { parts.append("\(counts.created) created") }
          if counts.dropped > 0 { parts.append("\(counts.dropped) dropped") }
          for (attribute, count) in counts.filled.sorted(by: { $0.key < $1.key }) {
            parts.append("\(attribute) filled in \(count)")
          }
          for (attribute, count) in counts.converted.sorted(by: { $0.key < $1.key }) {
            parts.append("\(attribute) converted in \(count)")
          }
          for (relationship, count) in counts.droppedLinks.sorted(by: { $0.key < $1.key }) {
            parts.append("\(count) links of \(relationship) dropped")
          }
          lines.append("  \(entity): \(parts.joined(separator: ", "))")
        }
      }
      for note in migration.notes { lines.append("note: \(note)") }
    } else {
      lines.append(
        result.modelVersion.map { "restore at the archive's version \($0) (no migration)" }
          ?? "restore at the archive's own model, which names no version (no migration)")
    }
    let total = result.objects.values.reduce(0, +)
    if let selected = result.selected {
      lines.append(
        "selection: \(selected) objects chosen, \(total) with their closure (\(result.objects.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))"
      )
      return lines.joined(separator: "\n") + "\n"
    }
    lines.append(
      "archive: \(total) objects, \(result.tables.values.reduce(0, +)) other rows; checksums match the index"
    )
    return lines.joined(separator: "\n") + "\n"
  }
}
