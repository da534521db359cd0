import ArgumentParser
import Foundation
import GraphVault

extension MergeService.ConflictPolicy: ExpressibleByArgument {}

/// `graphvault merge SOURCE --into STORE --entity NAME …`: objects of an archive or another
/// store brought back into an existing store.
struct MergeCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "merge",
    abstract: "Bring objects of an archive or another store back into an existing store.",
    discussion: """
      The objects of --entity that --where matches, everything they reach through to-one \
      relationships and the --include key paths (fixture's rules) are looked for in STORE: by \
      --key ENTITY.ATTRIBUTE when given, else by primary key (which a store never hands out \
      twice, so backups of the same store agree on it); from another store (another store \
      UUID, as when an app rebuilt its store) by the entity's uniqueness constraint when it \
      names one attribute, and the report says so. An object found with the same values \
      is left alone; one found with other values is a conflict: kept as the store has it \
      (--on-conflict skip, the default), given the source's values (replace), or refused with \
      nothing written (fail, status 73). Every other object is inserted, under its own primary \
      key when the store has not used it, else under a new one. Relationships are rebuilt \
      between the merged objects and reconnected to objects the store still holds (an object \
      already in the store joins an inserted one only when its side of the relationship is \
      empty). Everything is written in one transaction, waiting for an app's lock up to --wait \
      seconds (default 5, then status 75); when the store keeps persistent history (as \
      SwiftData stores do), the transaction is recorded in it by author graphvault, so apps \
      that read history see the objects brought back. The store is validated as Core Data \
      validates a save, except that an object brought back as the source held it (a required \
      to-many saved empty) is no new violation; --dry-run runs the same checks, prints what \
      would be inserted, linked, kept or replaced, counted and object by object, and writes \
      nothing. A failed merge leaves \
      the store's files, its -wal and -shm included, as they were.
      """
  )

  @Argument(help: "The archive (a file, - or s3://BUCKET/KEY) or store the objects come from.")
  var source: String

  @Option(help: "The existing store to merge into.")
  var into: String

  @Option(
    help: ArgumentHelp(
      "The entity whose objects are brought back (sub-entities included).", valueName: "name"))
  var entity: String

  @Option(
    name: .customLong("where"),
    help: ArgumentHelp(
      "Only the objects matching this Core Data predicate (in the source).",
      valueName: "predicate"))
  var predicate: String?

  @Option(
    help: ArgumentHelp(
      "A to-many key path to bring along (repeatable), as fixture's --include.",
      valueName: "keypath"))
  var include: [String] = []

  @Option(
    help: ArgumentHelp(
      "Find ENTITY's objects in the store by ATTRIBUTE rather than primary key (repeatable).",
      valueName: "ENTITY.ATTRIBUTE"))
  var key: [String] = []

  @Option(
    name: .customLong("on-conflict"),
    help: "skip (keep the store's object), replace (give it the source's values) or fail.")
  var onConflict: MergeService.ConflictPolicy = .skip

  @Flag(name: .customLong("dry-run"), help: "Print what would be merged; write nothing.")
  var dryRun = false

  @Option(
    help:
      "The model, for stores without Z_MODELCACHE; its versions are the migration path when the source's model differs."
  )
  var model: String?

  @OptionGroup var reading: ReadingOptions
  @OptionGroup var lock: LockOptions
  @OptionGroup var options: GlobalOptions

  func run() throws {
    try Failure.exitOnError(json: options.json) {
      var settings = MergeService.Options(
        selection: .init(entity: entity, predicate: predicate, includes: include))
      settings.keys = key
      settings.onConflict = onConflict
      settings.dryRun = dryRun
      settings.modelPath = model
      settings.password = reading.password.source
      settings.allowUnencrypted = reading.allowUnencrypted
      settings.wait = lock.wait
      let result = try StatusLine(command: "merge", options: options).showing { meter in
        settings.meter = meter
        return try MergeService.merge(source: Location.given(source), into: into, options: settings)
      }
      if options.json {
        try Output.json(result)
      } else if !options.quiet {
        print(Self.report(result), terminator: "")
      }
    }
  }

  static func report(_ result: MergeResult) -> String {
    var lines = [
      result.dryRun
        ? "dry run: nothing was written (\(result.store))"
        : "merged into \(result.store) (\(result.selected) objects chosen in \(result.source))"
    ]
    if let migrated = result.migrated { lines.append("source migrated: \(migrated)") }
    lines += result.notes
    for (entity, counts) in result.entities.sorted(by: { $0.key < $1.key }) {
      var parts: [String] = []
      if counts.inserted > 0 {
        parts.append(
          "\(counts.inserted) \(result.dryRun ? "to insert" : "inserted")"
            + (counts.renumbered > 0 ? " (\(counts.renumbered) under a new primary key)" : ""))
      }
      if counts.present > 0 { parts.append("\(counts.present) present") }
      if counts.kept > 0 { parts.append("\(counts.kept) kept as the store has them") }
      if counts.replaced > 0 {
        parts.append("\(counts.replaced) \(result.dryRun ? "to replace" : "replaced")")
      }
      if counts.linked > 0 {
        parts.append(
          "\(counts.linked) \(result.dryRun ? "links to make" : "links made") from objects already in the store"
        )
      }
      lines.append("  \(entity): \(parts.joined(separator: ", "))")
    }
    if !result.conflicts.isEmpty {
      lines.append("differing in the store: " + result.conflicts.prefix(10).joined(separator: "; "))
    }
    if result.dryRun && !result.objects.isEmpty {
      // Which objects, one line each: what a person checks before running it for real.
      lines.append("objects:")
      for fate in result.objects {
        let verb = fate.action.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
        let key = (fate.source ?? fate.store).map { " p\($0)" } ?? ""
        let store =
          fate.source != nil && fate.store != nil && fate.store != fate.source
          ? " (the store's p\(fate.store!))" : ""
        lines.append(
          "  \(verb)  \(fate.entity)\(key)\(store)\(fate.detail.map { "  \($0)" } ?? "")")
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
