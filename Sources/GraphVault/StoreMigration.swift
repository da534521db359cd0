import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore

/// A store's objects migrated into another model in a private store, as a migrating restore
/// migrates an archive's: for commands that compare or combine two stores whose models differ
/// (`diff`, `merge`).
enum StoreMigration {
  /// The name of the migrated store in the scratch folder.
  static let storeName = "migrated.sqlite"

  /// Migrates `store` (whose model is `model`, called `sourceName` in messages: "the model of
  /// old.gvault") into `target` at `scratch/migrated.sqlite`, along `modelPath`'s versions
  /// when given and `model` is one of them, else by one hop inferred from `model` straight to
  /// `target` (lightweight). Returns `from → to`.
  ///
  /// One road, no copy between: the store's objects, read in one transaction on a second
  /// thread (``ObjectStore/StoreSource``), go through the migration stage into the new store,
  /// as an archive's go in a migrating restore; nothing is encoded or decoded.
  /// - Throws: ``VaultError`` 78 when there is no path from one model to the other.
  static func migrate(
    _ store: CoreDataStore, model: ObjectModel, named sourceName: String,
    into target: ObjectModel, at scratch: ScratchFolder, modelPath: String?
  ) throws(VaultError) -> String {
    try vault {
      let restore = try options(named: sourceName, into: target, modelPath: modelPath)
      let result = try RestoreService.restore(
        objects: try StoreSource(store: store, model: model),
        to: scratch.path(storeName, standingFor: "the copy migrated from \(sourceName)"),
        options: restore)
      return describe(result)
    }
  }

  /// What a restore migrating into `target` is given, the source called `sourceName` in its
  /// messages: `modelPath`'s versions when given (and `target` one of them), else `target`
  /// alone, reached by one hop inferred from the source's model (lightweight).
  static func options(named sourceName: String, into target: ObjectModel, modelPath: String?)
    throws -> RestoreOptions
  {
    var restore = RestoreOptions()
    restore.sourceName = sourceName
    if let modelPath {
      let set = try ModelSource.versions(at: modelPath)
      restore.versionSet = set
      restore.modelVersion = target.versionName.flatMap {
        set.version(named: $0) != nil ? $0 : nil
      }
    } else {
      let name = target.versionName ?? target.name
      restore.versionSet = ModelVersionSet(
        name: target.name, versions: [target.withVersionName(name)], currentVersionName: name)
    }
    return restore
  }

  /// `from → to` of a migrating restore's result, or "none needed".
  static func describe(_ result: RestoreResult) -> String {
    guard let migration = result.migration else { return "none needed" }
    return "\(migration.from) → \(migration.to)"
  }

  /// What messages call `model`, the model of `path` (a store or an archive the user named),
  /// on its way to `target`: its version name when it has one of its own that the target's is
  /// not, else "the model of old.gvault".
  static func modelName(_ model: ObjectModel, of path: Location, migratingTo target: ObjectModel)
    -> String
  {
    if let name = model.versionName, name != target.versionName ?? target.name {
      return name
    }
    return modelName(of: path)
  }

  /// What messages call the model of `path` (a store or an archive the user named).
  static func modelName(of path: Location) -> String {
    if path.isStandardStream { return "the model of standard input" }
    return "the model of \(URL(fileURLWithPath: path.description).lastPathComponent)"
  }
}
