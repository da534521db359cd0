import Foundation
import ObjectModel
import ObjectStore

extension MigrateService {
  /// Opens a context on the store at `storePath` with `model`, as Core Data's persistent
  /// container opens a store: when the store's entity version hashes are the model's (or,
  /// for a store without hashes, its schema is the one `model` gives), at once; otherwise,
  /// when `migrating` (Core Data's automatic lightweight migration), after migrating the
  /// store in place (``migrate(store:options:)``) from its own model (the version of
  /// `versions` it is at, else its `Z_MODELCACHE`) straight to `model`.
  /// - Throws: ``VaultError``: 78 naming the entities whose hashes differ (added, removed,
  ///   changed) when the store's model is not `model` and `migrating` is false, or when its
  ///   own model cannot be found or migrated into `model`; what opening the context throws.
  public static func openContext(
    storePath: String, model: ObjectModel, migrating: Bool = false,
    versions: ModelVersionSet? = nil, transformers: ValueTransformerRegistry = .standard,
    wait: Double? = nil
  ) throws(VaultError) -> ObjectContext {
    try vault {
      guard FileManager.default.fileExists(atPath: storePath) else {
        throw VaultError(.inputMissing, "no store at \(storePath)")
      }
      let opened = try CoreDataStore(path: storePath)
      let stored = opened.versionHashes
      let wanted = model.versionHashes
      let fits =
        stored.isEmpty
        ? (try? VersionDetector.detect(
          store: opened,
          in: ModelVersionSet(
            name: model.name, versions: [model],
            currentVersionName: model.versionName ?? model.name))) != nil
        : stored == wanted
      if !fits {
        let differences =
          stored.isEmpty
          ? "its schema is not the one the context's model gives"
          : describe(stored: stored, wanted: wanted)
        guard migrating else {
          throw VaultError(
            .modelUnavailable,
            "the store's model is not the context's (\(differences)): open it with migrating: true to migrate it in place (\(storePath))"
          )
        }
        // The version whose schema is the store's (its hashes are not the context's), else
        // what the store keeps.
        let detected = versions.flatMap { try? VersionDetector.detect(store: opened, in: $0) }
        guard var source = try detected ?? ModelResolver.known(of: opened) else {
          throw VaultError(
            .modelUnavailable,
            "the store's own model is not known (no Z_MODELCACHE, and no version of the versions given matches it): pass its versions (\(storePath))"
          )
        }
        var (from, to) = (source.versionName ?? "store", model.versionName ?? "model")
        if from == to { (from, to) = ("\(from) (store)", "\(to) (context)") }
        source = source.withVersionName(from)
        var options = Options(modelPath: "")
        options.versionSet = ModelVersionSet(
          name: model.name, versions: [source, model.withVersionName(to)],
          currentVersionName: to)
        options.wait = wait
        _ = try migrate(store: storePath, options: options)
      }
      return try ObjectContext(storePath: storePath, model: model, transformers: transformers)
    }
  }

  /// `Book changed, Shelf removed, Tag added`: the entities whose hashes differ.
  private static func describe(stored: [String: [UInt8]], wanted: [String: [UInt8]]) -> String {
    var parts: [String] = []
    for name in Set(stored.keys).union(wanted.keys).sorted() {
      switch (stored[name], wanted[name]) {
      case (nil, _?): parts.append("\(name) added")
      case (_?, nil): parts.append("\(name) removed")
      case (let a?, let b?) where a != b: parts.append("\(name) changed")
      default: continue
      }
    }
    return parts.joined(separator: ", ")
  }
}
