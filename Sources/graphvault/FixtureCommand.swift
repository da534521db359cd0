import ArchiveFormat
import ArgumentParser
import Foundation
import GraphVault
import ObjectStore

/// `graphvault fixture STORE|ARCHIVE --entity NAME …`: a small, whole, deterministic archive
/// for test suites.
struct FixtureCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "fixture",
    abstract: "Cut a small, whole, deterministic fixture archive out of a store or an archive.",
    discussion:
      "Selects the objects of --entity (sub-entities included) that --where picks (NSPredicate format), ordered by --sort and cut at --limit; adds every object they reach through to-one relationships, recursively, and the objects along each --include key path (to-many ones only along those); references to objects outside the fixture are emptied, join rows kept where both ends are in it, @count derivations recomputed. The result is an ordinary archive: list, verify, restore and migration work on it. The same input and options give the same bytes (--time sets the recorded creation time; default 2001-01-01T00:00:00Z)."
  )

  @Argument(
    help:
      "The store or archive to cut from (a framed archive is read in part, what the selection reaches; another is restored to a temporary store)."
  )
  var source: String

  @Option(help: "The entity whose objects are selected.")
  var entity: String

  @Option(name: .customLong("where"), help: "A predicate in NSPredicate format.")
  var predicate: String?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "Attributes to order by before --limit, comma-separated; -KEY for descending.",
      valueName: "key,…"))
  var sort: String?

  @Option(help: "The most objects to select.")
  var limit: Int?

  @Option(
    help: ArgumentHelp(
      "A relationship key path to follow from the selected objects (repeatable): pages, author.books.pages.",
      valueName: "keypath"))
  var include: [String] = []

  @Option(
    help: ArgumentHelp(
      "Replace an attribute's values (repeatable): RULE is fake (default), null, hash or value:TEXT.",
      valueName: "entity.attribute[=rule]"))
  var scrub: [String] = []

  @Option(
    name: .customLong("scrub-key-file"),
    help: ArgumentHelp(
      "A file whose bytes key the hash rule (default: a key derived from the store's UUID).",
      valueName: "file"))
  var scrubKeyFile: String?

  @Option(
    help: "The model, for stores without Z_MODELCACHE: .xcdatamodeld, .momd, .xcdatamodel or .mom.")
  var model: String?

  @Option(help: "The archive file to write, or - for standard output.")
  var output: String

  @Option(
    help: ArgumentHelp(
      "The creation time to record (ISO 8601); default 2001-01-01T00:00:00Z.", valueName: "time"))
  var time: String?

  @Option(help: "zstd (default), xz, gzip or none.")
  var compression: Compression = .zstd

  @OptionGroup var reading: ReadingOptions
  @OptionGroup var options: GlobalOptions

  func validate() throws {
    if let time, TimeOption.parse(time) == nil {
      throw ValidationError("--time \(time) is not an ISO 8601 time (such as 2026-01-31T03:00:00Z)")
    }
    if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more") }
    for rule in scrub where ScrubRule(argument: rule) == nil {
      throw ValidationError(
        "--scrub \(rule): expected ENTITY.ATTRIBUTE or ENTITY.ATTRIBUTE=RULE, RULE being fake, null, hash or value:TEXT"
      )
    }
  }

  func run() throws {
    try Failure.exitOnError(json: options.json, dataOnStandardOutput: output == "-") {
      let sorting = (sort ?? "").split(separator: ",").map { key in
        key.hasPrefix("-")
          ? SortDescriptor(String(key.dropFirst()), ascending: false) : SortDescriptor(String(key))
      }
      var settings = FixtureService.Options(
        selection: FixtureCutter.Selection(
          entity: entity, predicate: predicate, sort: sorting, limit: limit, includes: include),
        output: try Location.given(output))
      settings.modelPath = model
      settings.time = time.flatMap(TimeOption.parse)
      settings.compression = compression
      settings.password = reading.password.source
      settings.allowUnencrypted = reading.allowUnencrypted
      settings.scrubs = scrub.compactMap(ScrubRule.init(argument:))
      if let scrubKeyFile {
        guard let key = FileManager.default.contents(atPath: scrubKeyFile), !key.isEmpty else {
          throw VaultError(.inputMissing, "cannot read the scrub key file (\(scrubKeyFile))")
        }
        settings.scrubKey = [UInt8](key)
      }
      let result = try StatusLine(command: "fixture", options: options).showing { meter in
        settings.meter = meter
        return try FixtureService.cut(source: Location.given(source), options: settings)
      }
      try Output.archive(result, path: result.archive, output: output, options: options)
    }
  }
}
