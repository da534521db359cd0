import Foundation
import ObjectModel
import ObjectStore

/// `graphvault merge SOURCE --into STORE`: objects of an archive or another store brought
/// back into an existing store, without losing what the store holds.
///
/// The objects are chosen as `fixture` and a selective restore choose them (the selection,
/// its to-one closure, the `--include` paths). Each is then looked for in the store: by its
/// entity's key attribute when one is given (`--key`), else by primary key (which Core Data
/// never hands out twice in a store, so backups of the same store agree on it), but from
/// another store (another `Z_UUID`: one an app regenerated, numbering its objects anew) by
/// the entity's uniqueness constraint when it names one attribute (``ConstraintKeys``). An object
/// found with the same attribute values is **present** and left alone; one found with other
/// values is a **conflict**, kept as the store has it (`skip`), given the source's values
/// (`replace`), or refused with nothing written (`fail`); any other is **inserted**, under
/// its own primary key when the store has not used it, else under a new one.
///
/// Relationships follow: an inserted object's to-one relationships point at the objects its
/// source pointed at, as merged or as found in the store; its to-many relationships take the
/// members found (in their order when ordered), a member already in the store joining it
/// only when that member's side is empty (its owner was deleted), so that nothing written
/// since is undone. The object context writes it all in one transaction: `Z_OPT` of every
/// touched row bumped, join rows and order keys written, `Z_PRIMARYKEY` advanced, the store's
/// own triggers keeping derived attributes. When the models differ, the source is migrated
/// into the store's model first.
public enum MergeService {
  /// What to do with an object the store holds with other values.
  public enum ConflictPolicy: String, Codable, Sendable, CaseIterable {
    /// Keep the store's object as it is (and point relationships at it).
    case skip
    /// Give the store's object the source's attribute values and to-one relationships.
    case replace
    /// Write nothing, naming the objects.
    case fail
  }

  /// What to merge, and how.
  public struct Options: Sendable {
    /// The objects to bring back, by the fixture cutter's rules.
    public var selection: FixtureCutter.Selection
    /// Key attributes objects are matched by, as `ENTITY.ATTRIBUTE`.
    public var keys: [String] = []
    /// What happens to objects the store holds with other values.
    public var onConflict: ConflictPolicy = .skip
    /// Work out and report the merge, and write nothing.
    public var dryRun = false
    /// The model, for stores without `Z_MODELCACHE`; its versions are the migration path
    /// when the source's model differs from the store's.
    public var modelPath: String?
    /// The password of an encrypted source archive.
    public var password: PasswordSource?
    /// Read a source archive that is not encrypted although a password was given.
    public var allowUnencrypted = false
    /// How long to wait for the store's lock, in seconds (an app writing to it).
    public var wait: Double?
    /// Where the run reports how far it has got.
    public var meter: ProgressMeter?

    /// Options merging `selection`.
    public init(selection: FixtureCutter.Selection) {
      self.selection = selection
    }
  }

  /// The author a merge's transaction has in the store's persistent history.
  public static let historyAuthor = "graphvault"

  /// How long a merge waits for the store's lock by default, in seconds.
  public static let defaultWait = 5.0

  /// Merges the objects `options` selects from `source` into the store at `storePath`.
  /// - Throws: ``VaultError``: 64 for a bad selection or key, 66 for a missing source or
  ///   store, 65 for a damaged archive, 73 for conflicts with `fail`, 75 when the store stays
  ///   locked, 78 when the source's model cannot be migrated into the store's.
  public static func merge(source sourcePath: Location, into storePath: String, options: Options)
    throws(VaultError) -> MergeResult
  {
    try vault {
      guard FileManager.default.fileExists(atPath: storePath) else {
        throw VaultError(.inputMissing, "no store at \(storePath)")
      }
      if let file = sourcePath.readFile, StoreDestination.sameFile(file, storePath) {
        throw VaultError(.usage, "the source and the store are the same file (\(storePath))")
      }
      // Everything that can be wrong with the command is found before the source is read: the
      // store's model, the selection and the keys are checked against it (the source is read in
      // the store's model, migrated when it differs).
      let target = try CoreDataStore(path: storePath)
      let model = try ModelResolver.model(of: target, modelPath: options.modelPath)
      let keys = try DiffService.keyAttributes(options.keys, model: model)
      try FixtureService.check(options.selection, model: model)
      // A framed archive at the store's model version is read in part: what the selection
      // reaches (``SelectionArchive``); an archive of another version is restored straight
      // into the store's model, in one pass; any other source is read whole.
      options.meter?.startPhase("reading the archive")
      let migrating = {
        try SourceStore(
          migrating: sourcePath, into: model, modelPath: options.modelPath,
          password: options.password, allowingUnencrypted: options.allowUnencrypted,
          name: { StoreMigration.modelName($0, of: sourcePath, migratingTo: model) },
          meter: options.meter)
      }
      let source =
        try SourceStore(
          partOf: sourcePath, password: options.password,
          allowingUnencrypted: options.allowUnencrypted, selection: options.selection,
          accept: { $0.isSameVersion(as: model) },
          insertable: { uuid in
            let matching = ConstraintKeys(
              model: model, given: keys, differentStores: uuid != target.uuid)
            return try MergePlan.insertable(model: model, keys: matching.keys, store: target)
          })
        ?? migrating()
        ?? SourceStore(
          sourcePath, password: options.password, allowingUnencrypted: options.allowUnencrypted,
          meter: options.meter)
      defer { withExtendedLifetime(source) {} }
      options.meter?.startPhase("selecting")
      var sourceStore = try CoreDataStore(path: source.path)
      let differentStores = sourceStore.uuid != target.uuid
      let sourceModel = try source.model(of: sourceStore, modelPath: options.modelPath)
      var migrated = source.migration
      let scratch = try ScratchFolder()
      defer { withExtendedLifetime(scratch) {} }
      if !sourceModel.isSameVersion(as: model) {
        options.meter?.startPhase("migrating \(sourcePath)")
        migrated = try StoreMigration.migrate(
          sourceStore, model: sourceModel,
          named: StoreMigration.modelName(sourceModel, of: sourcePath, migratingTo: model),
          into: model, at: scratch, modelPath: options.modelPath)
        sourceStore = try CoreDataStore(path: scratch.path(StoreMigration.storeName))
      }
      let matching = ConstraintKeys(
        model: model, given: keys, differentStores: differentStores)
      let cutter = try FixtureCutter(store: sourceStore, model: model)
      let subset = try FixtureService.select(options.selection, with: cutter, in: sourceStore)
      var transformers = ValueTransformerRegistry.standard
      transformers.refusesUnknownNames = false
      let from = try ObjectContext(
        storePath: sourceStore.path, model: model, transformers: transformers, readOnly: true)
      let into = try ObjectContext(
        storePath: storePath, model: model, transformers: transformers,
        readOnly: options.dryRun)
      into.setBusyTimeout(seconds: options.wait ?? defaultWait)
      into.transactionAuthor = historyAuthor
      // The store's write-ahead log stays as its app left it, whatever happens here.
      into.leaveWriteAheadLogOnClose()
      options.meter?.startPhase("merging")
      var merge = MergePlan(model: model, keys: matching.keys, from: from, into: into)
      let roots = try sourceStore.layout(for: model).tables.reduce(into: [String: String]()) {
        $0[$1.name] = $1.rootEntity
      }
      // Both stores are read each in one transaction: one snapshot each, and no lock taken
      // and given back for every object looked up.
      try from.reading {
        try into.reading {
          try merge.match(subset: subset, roots: roots)
          if options.onConflict == .fail && !merge.conflicts.isEmpty {
            throw VaultError(
              .destinationExists,
              "\(merge.conflicts.count) objects are in \(storePath) with other values (\(merge.conflicts.prefix(5).joined(separator: "; "))\(merge.conflicts.count > 5 ? "; …" : "")); nothing was merged: --on-conflict skip keeps them, replace gives them the source's values"
            )
          }
          try merge.apply(replacing: options.onConflict == .replace)
        }
      }
      // A dry run checks what the save would: it never promises what the merge refuses.
      if options.dryRun { try into.validateChanges() } else { try into.save() }
      var result = MergeResult(
        store: storePath, source: sourcePath.description, selected: subset.selected.count,
        entities: merge.counts, conflicts: merge.conflicts, migrated: migrated,
        notes: matching.notes, dryRun: options.dryRun)
      result.objects = merge.fates
      return result
    }
  }
}
