import Foundation
import Migration
import ObjectModel
import ObjectStore

/// `graphvault migrate STORE --model M`: a store migrated to a version of its model in place,
/// as Core Data migrates a store when an app opens it with a newer model.
///
/// Under the store's write lock (``StoreWriteLock``: other processes' transactions are waited
/// for, then 75; the write-ahead log folded in first), a change Core Data makes in SQL is
/// made in SQL in place (``InPlaceMigration``); any other goes as one object stream, `the
/// store → migration → a new store beside it` (``ObjectStore/StoreSource``, the migration
/// stage, ``ObjectStore/StoreSink``), and the new store is renamed over the old one: the old store, with every committed transaction, stays
/// whole until the rename, so a run killed at any moment leaves the old store or the new one,
/// never a mix, and what a killed run left beside it the next run removes. A WAL store stays
/// WAL; its file's mode and owner are kept.
public enum MigrateService {
  /// How a migration runs.
  public struct Options: Sendable {
    /// The model set with the store's version and the target: `.xcdatamodeld` or `.momd`.
    public var modelPath: String
    /// The target version (the set's current one when nil).
    public var modelVersion: String?
    /// What the migration cannot infer: a JSON mapping file and the app's mapping models
    /// (see ``RestoreOptions/mappingPaths``).
    public var mappingPaths: [String] = []
    /// A folder of mapping models (see ``RestoreOptions/mappingDirectory``).
    public var mappingDirectory: String?
    /// Custom stages (library use).
    public var stages: [MigrationStage] = []
    /// Work out the migration and report it, writing nothing.
    public var dryRun = false
    /// Keep the unmigrated store as `STORE.orig` (a second name of the old file).
    public var keepOriginal = false
    /// How long to wait for other processes' transactions, in seconds.
    public var wait: Double?
    /// Where the run reports how far it has got.
    public var meter: ProgressMeter?
    /// The versions, when given as models rather than by ``modelPath`` (library use).
    var versionSet: ModelVersionSet?

    /// Migration of a store to the current version of the model set at `modelPath`.
    public init(modelPath: String) {
      self.modelPath = modelPath
    }
  }

  /// How long a migration waits for the store's lock by default, in seconds.
  public static let defaultWait = 5.0

  /// The suffix of the name the unmigrated store is kept under.
  public static let originalSuffix = ".orig"

  /// Migrates the store at `storePath` in place.
  /// - Throws: ``VaultError``: 66 for a missing store, 65 for a damaged one, 73 when
  ///   `STORE.orig` exists (with ``Options/keepOriginal``), 75 when the store stays in use, 78
  ///   when its version is not in the set or there is no path to the target.
  public static func migrate(store storePath: String, options: Options) throws(VaultError)
    -> MigrateResult
  {
    try vault {
      guard FileManager.default.fileExists(atPath: storePath) else {
        throw VaultError(.inputMissing, "no store at \(storePath)")
      }
      let set = try options.versionSet ?? ModelSource.versions(at: options.modelPath)
      let target = options.modelVersion ?? set.currentVersionName
      guard set.version(named: target) != nil else {
        throw VaultError(
          .modelUnavailable,
          "\(set.name) has no version \(target) (versions: \(set.versions.compactMap(\.versionName).joined(separator: ", "))) (\(options.modelPath))"
        )
      }
      let original = storePath + originalSuffix
      // A dry run keeps nothing: it writes nothing.
      let keeping = options.keepOriginal && !options.dryRun
      if keeping { try removeLeftOriginal(original, of: storePath) }
      // A dry run writes nothing, and takes no lock: the store is read in one transaction.
      options.meter?.startPhase("locking \(storePath)")
      let lock =
        options.dryRun
        ? nil : try StoreWriteLock(path: storePath, wait: options.wait ?? defaultWait)
      defer { lock?.release() }
      if lock != nil { StoreDestination.removeLeftovers(of: storePath) }
      let store = try CoreDataStore(path: storePath)
      // A version of the set, or (not one) the store's own model from its cache.
      let (current, located) = try ModelResolver.locate(store, in: set)
      let order = set.versions.map { $0.versionName ?? $0.name }
      let from = located ?? StoreMigration.modelName(of: Location(path: storePath))
      if let here = order.firstIndex(of: from), let there = order.firstIndex(of: target),
        here > there
      {
        throw VaultError(
          .modelUnavailable,
          "\(storePath) is at \(from), newer than \(target) in \(set.name)'s order (\(order.joined(separator: ", "))): a store only migrates forward"
        )
      }
      if from == target {
        return MigrateResult(
          store: storePath, from: from, to: target,
          objects: try store.objectCounts(layout: try store.layout(for: current)),
          migration: nil, original: nil, dryRun: options.dryRun)
      }
      // A change Core Data makes in SQL is made in SQL, in place, under the lock.
      if let lock, !keeping, options.mappingPaths.isEmpty, options.mappingDirectory == nil,
        options.stages.isEmpty,
        let plan = try? MigrationPlan.make(
          source: current, sourceName: from, schema: store.schema(), set: set,
          targetVersion: target),
        let inPlace = try InPlaceMigration(plan: plan, store: store, current: current)
      {
        options.meter?.startPhase("migrating \(storePath) in place")
        let (report, objects) = try lock.commit { try inPlace.run(on: $0) }
        let total = objects.values.reduce(0, +)
        options.meter?.setTotal(objects: total)
        options.meter?.set(objectsDone: total)
        return MigrateResult(
          store: storePath, from: from, to: report.to, objects: objects, migration: report,
          original: nil, dryRun: false)
      }
      // The store is replaced by a new file: never under another process's open connection
      // (checked again just before the move).
      if !options.dryRun {
        try StoreUsers.requireNone(of: storePath, before: "replace", wait: options.wait ?? 0)
      }
      var restore = RestoreOptions()
      restore.versionSet = set
      restore.modelVersion = target
      restore.sourceName = from
      restore.mappingPaths = options.mappingPaths
      restore.mappingDirectory = options.mappingDirectory
      restore.stages = options.stages
      restore.dryRun = options.dryRun
      restore.force = true
      restore.meter = options.meter
      restore.wait = options.wait
      options.meter?.startPhase("migrating \(storePath)")
      if keeping {
        guard link(storePath, original) == 0 else {
          throw VaultError(
            .ioFailure,
            "cannot keep the original store as \(original): \(String(cString: strerror(errno)))")
        }
      }
      lock?.beforeReplacing()
      let result: RestoreResult
      do {
        result = try RestoreService.restore(
          objects: try StoreSource(store: store, model: current), to: storePath, options: restore)
      } catch {
        if keeping { unlink(original) }
        throw error
      }
      return MigrateResult(
        store: storePath, from: from, to: result.migration?.to ?? target,
        objects: result.objects, migration: result.migration,
        original: keeping ? original : nil,
        dryRun: options.dryRun)
    }
  }

  /// Removes `original` when it is a killed run's second name of the store itself; refuses
  /// (73) any other file there.
  private static func removeLeftOriginal(_ original: String, of store: String) throws {
    var kept = stat()
    guard lstat(original, &kept) == 0 else { return }
    var current = stat()
    if stat(store, &current) == 0 && kept.st_ino == current.st_ino && kept.st_dev == current.st_dev
    {
      unlink(original)
      return
    }
    throw VaultError(
      .destinationExists,
      "\(original) exists: move it away to keep the original store there again")
  }
}
