import ArchiveFormat
import DurableIO
import Foundation
import LibArchive
import Migration
import ObjectModel
import ObjectStore
import PropertyList
import SQLite

/// What a restore wrote (or, in a dry run, would write).
public struct RestoreResult: Codable, Sendable {
  /// The store's path.
  public let store: String
  /// Objects per entity (of the archive, as read).
  public let objects: [String: Int]
  /// Rows per table outside the model.
  public let tables: [String: Int]
  /// The model version restored.
  public let modelVersion: String?
  /// The migration, when the archive's version was not the target's.
  public let migration: MigrationReport?
  /// Whether nothing was written.
  public let dryRun: Bool
  /// Entries of the archived schema left out (``RestoreOptions/leaveOutUnsafeSchema``), each
  /// with the reason; a table's rows went with it.
  public let leftOut: [String]
  /// With a selection (``RestoreOptions/selection``): how many objects it chose, before
  /// their closure (``objects`` counts the closure too).
  public var selected: Int?
  /// The archive restored, when the command chose it (`restore DIR --at TIME`).
  public var archive: String?
}

/// How a restore runs.
public struct RestoreOptions: Sendable {
  /// Replace an existing store.
  public var force = false
  /// The target model: an `.xcdatamodeld`, `.momd`, `.xcdatamodel` or `.mom`. Without it the
  /// store is restored at the archive's own version.
  public var modelPath: String?
  /// The target version in the model set (the current one when nil).
  public var modelVersion: String?
  /// What a migration cannot infer: a JSON mapping file and the app's mapping models
  /// (`.xcmappingmodel` folders, compiled `.cdm` files), told apart by extension.
  public var mappingPaths: [String] = []
  /// A folder whose `.xcmappingmodel`s and `.cdm`s are used for the hops they cover.
  public var mappingDirectory: String?
  /// Custom stages (library use).
  public var stages: [MigrationStage] = []
  /// Read and check the archive and migrate its objects, but write nothing.
  public var dryRun = false
  /// The password of an encrypted archive. When given, an archive that is not encrypted is
  /// refused unless ``allowUnencrypted``.
  public var password: PasswordSource?
  /// Read an unencrypted archive although a password was given.
  public var allowUnencrypted = false
  /// Where the run reports how far it has got (bytes of the archive read, objects restored).
  public var meter: ProgressMeter?
  /// Leave out the entries of the archived schema that are refused (triggers the model does not
  /// make, views, text outside the accepted grammar), with the rows of a table left out, rather
  /// than refusing the archive; ``RestoreResult/leftOut`` lists them.
  public var leaveOutUnsafeSchema = false
  /// How long to wait for another restore to the same destination, in seconds.
  public var wait: Double?
  /// The target model's versions as values, when the caller has them rather than at
  /// ``modelPath`` (a model built in code; diff migrating its older side): the archive is
  /// restored at ``modelVersion`` (default: the set's current version), migrated on the way
  /// in when it was written by another version.
  public var versionSet: ModelVersionSet?
  /// What messages call the archive's model when it is no version of the target's set (a
  /// store being migrated or compared: "the model of App.sqlite").
  var sourceName = "the archive's model"
  /// What messages call the archive's model, given that model, when it can be named only once
  /// the archive is read (its first members could not be read ahead: standard input, an
  /// encrypted archive); it comes before ``sourceName``.
  var sourceNaming: (@Sendable (ObjectModel) -> String)?
  /// Restore only these objects and their closure, by the fixture cutter's rules
  /// (``FixtureCutter``): the selection, each selected object's to-one relationships
  /// followed to the end, and the to-many key paths it includes; references to objects left
  /// out are emptied. Nil restores every object.
  public var selection: FixtureCutter.Selection?

  /// Default options: refuse an existing store, restore at the archive's version.
  public init() {}
}

/// `graphvault restore`: an archive into a fresh store, at the archive's model version or,
/// with a target model, migrated hop by hop into the target version while the objects stream.
public enum RestoreService {
  /// Restores `archive` into a new store at `destination`, at the archive's version.
  public static func restore(archive: Location, to destination: String, force: Bool = false)
    throws(VaultError)
    -> RestoreResult
  {
    var options = RestoreOptions()
    options.force = force
    return try restore(archive: archive, to: destination, options: options)
  }

  /// Restores `archive` into a new store at `destination`.
  ///
  /// The store is built in a temporary file beside the destination and renamed into place
  /// only when every member's checksum and count matched the index (and a migration
  /// succeeded); an existing destination is refused unless `force`. On any failure the
  /// destination is untouched and the temporary file removed. A dry run reads and checks the
  /// whole archive and migrates its objects, and writes nothing.
  ///
  /// Two restores to one destination do not overlap: the second waits up to
  /// ``RestoreOptions/wait`` for the first (a lock file `.NAME.lock` beside the destination,
  /// removed when done), else fails as locked. Holding it, a restore removes what killed
  /// restores to the same destination left (their hidden temporary stores and journals).
  public static func restore(
    archive: Location, to destination: String, options: RestoreOptions
  ) throws(VaultError) -> RestoreResult {
    try restoreReadingModel(archive: archive, to: destination, options: options).result
  }

  /// ``restore(archive:to:options:)``, also giving the model the archive carries (for a
  /// command that goes on to read the restored store, which may keep no model of its own).
  static func restoreReadingModel(
    archive: Location, to destination: String, options: RestoreOptions
  ) throws(VaultError) -> (result: RestoreResult, model: ObjectModel?) {
    try vault {
      try ArchiveAccess.requireInput(archive)
      let target = try RestoreTarget(options: options)
      if let selection = options.selection {
        return try restoreSelection(
          selection, archive: archive, to: destination, options: options, target: target)
      }
      return try restoreWhole(
        archive: archive, to: destination, options: options, target: target)
    }
  }

  /// The whole archive restored to `destination` into `target` (loaded once, by the caller),
  /// or only read with ``RestoreOptions/dryRun``.
  static func restoreWhole(
    archive: Location, to destination: String, options: RestoreOptions, target: RestoreTarget
  ) throws -> (result: RestoreResult, model: ObjectModel?) {
    if options.dryRun {
      return try load(
        archive: archive, into: nil, destination: destination, target: target,
        options: options)
    }
    let claim = try StoreDestination(
      destination, for: "restore", reading: archive.readFile, force: options.force,
      wait: options.wait)
    defer { claim.release() }
    return try StoreFile.build(at: destination, wait: options.wait ?? 0) { temporary in
      try load(
        archive: archive, into: temporary, destination: destination, target: target,
        options: options)
    }
  }

  /// The objects of a store (`source`, read in one transaction) restored to `destination` as a
  /// whole archive is: migrated into the options' model when one is given (a dry run only
  /// migrates), an existing file refused unless ``RestoreOptions/force``. What `migrate` and
  /// a comparison across models make of a store, with no archive between.
  package static func restore(
    objects source: StoreSource, to destination: String, options: RestoreOptions
  ) throws -> RestoreResult {
    let target = try RestoreTarget(options: options)
    let metered = MeteringStage<StoreHead>(options.meter) { $0.expectedObjects }
    func result(_ migration: ObjectMigration?, dryRun: Bool) -> RestoreResult {
      RestoreResult(
        store: destination, objects: source.objectCounts, tables: source.rowCounts,
        modelVersion: migration?.modelVersion ?? source.model.versionName,
        migration: migration?.report, dryRun: dryRun, leftOut: [])
    }
    if options.dryRun {
      return result(try pump(source, through: metered, into: nil, target: target), dryRun: true)
    }
    let claim = try StoreDestination(
      destination, for: "restore", reading: nil, force: options.force, wait: options.wait)
    defer { claim.release() }
    return try StoreFile.build(at: destination, wait: options.wait ?? 0) { temporary in
      result(try pump(source, through: metered, into: temporary, target: target), dryRun: false)
    }
  }

  /// The target model set, version, mapping and stages, loaded before the archive is opened.
  struct RestoreTarget {
    let set: ModelVersionSet?
    let version: String?
    let mapping: MappingFile?
    let models: [MappingModel]
    let stages: [MigrationStage]
    /// What messages call the archive's model, given it.
    let sourceName: @Sendable (ObjectModel) -> String

    init(options: RestoreOptions) throws {
      version = options.modelVersion
      let name = options.sourceName
      sourceName = options.sourceNaming ?? { _ in name }
      stages = options.stages
      let set: ModelVersionSet
      if let given = options.versionSet {
        set = given
      } else if let path = options.modelPath {
        set = try ModelSource.versions(at: path)
        if let name = options.modelVersion, set.version(named: name) == nil {
          throw VaultError(
            .modelUnavailable,
            "\(set.name) has no version \(name) (versions: \(set.versions.compactMap(\.versionName).joined(separator: ", "))) (\(path))"
          )
        }
      } else {
        if !options.mappingPaths.isEmpty || options.mappingDirectory != nil
          || options.modelVersion != nil || !options.stages.isEmpty
        {
          throw VaultError(
            .modelUnavailable,
            "--mapping, --mappings, --model-version and custom stages need --model (the target model)"
          )
        }
        self.set = nil
        mapping = nil
        models = []
        return
      }
      self.set = set
      let sources = try MappingSources.load(
        paths: options.mappingPaths, directory: options.mappingDirectory, set: set)
      mapping = sources.file
      models = sources.models
    }

    /// The migration stage's target, when a model is given.
    var migration: ObjectMigration.Target? {
      self.set.map {
        ObjectMigration.Target(
          set: $0, version: version, mapping: mapping, models: models, stages: stages,
          sourceName: sourceName)
      }
    }

    /// The model the archive is restored into when it is migrated (the version asked for,
    /// else the set's current one); nil when restored at its own version.
    var model: ObjectModel? {
      self.set.map { versions in version.flatMap(versions.version(named:)) ?? versions.current }
    }
  }

  private static func load(
    archive: Location, into temporary: String?, destination: String, target: RestoreTarget,
    options: RestoreOptions
  ) throws -> (result: RestoreResult, model: ObjectModel?) {
    var scan = ArchiveScanner.Options()
    scan.leavingOutUnsafeSchema = options.leaveOutUnsafeSchema
    let chain = try ArchiveChain.open(
      archive, password: options.password, allowingUnencrypted: options.allowUnencrypted,
      meter: options.meter, options: scan)
    let scanner = chain.source
    let result = try ArchiveAccess.reading(archive) {
      try run(
        scanner, into: temporary, destination: destination, target: target, options: options)
    }
    try chain.checkTrailers()
    return (result, scanner.store?.model)
  }

  /// What `scanner` passes, loaded into the store at `temporary` (only read and migrated when
  /// nil: a dry run) at `target`'s version: the restore's result, named by `destination`.
  private static func run(
    _ scanner: any ArchiveEventSource, into temporary: String?, destination: String,
    target: RestoreTarget, options: RestoreOptions
  ) throws -> RestoreResult {
    let metered = MeteringStage<ArchivedStore>(options.meter) {
      $0.header.expectedObjects?.values.reduce(0, +)
    }
    let heads = metered.then(HeadStage { (archived: ArchivedStore) in archived.storeHead })
    let migration = try pump(
      scanner.objectSource, through: heads, into: temporary, target: target)
    return RestoreResult(
      store: destination, objects: scanner.objects, tables: scanner.tables,
      modelVersion: migration?.modelVersion ?? scanner.store?.model.versionName,
      migration: migration?.report, dryRun: temporary == nil,
      leftOut: scanner.store?.schema.dropped ?? [])
  }

  /// The restore's pipeline: `source → heads → migration (when a model is given) → a new
  /// store at temporary (nothing when nil)`, the source read on a second thread; then the
  /// custom stages' `after` on the new store. Returns the migration stage, which says what
  /// it did.
  private static func pump<Head, Heads: ObjectStage>(
    _ source: any ObjectSource<Head>, through heads: Heads, into temporary: String?,
    target: RestoreTarget
  ) throws -> ObjectMigration? where Heads.Input == Head, Heads.Output == StoreHead {
    let migration = target.migration.map(ObjectMigration.init)
    let stage: any ObjectStage<Head, StoreHead> = migration.map { heads.then($0) } ?? heads
    let sink: any ObjectSink<StoreHead> =
      temporary.map { StoreSink(path: $0) } ?? DiscardingSink<StoreHead>()
    try ObjectPipeline(source: source, stage: stage, sink: sink).run()
    if let temporary { try migration?.finishStore(at: temporary) }
    return migration
  }
}
