import ObjectModel
import ObjectStore

/// Which model describes a store: the one rule every command follows, in one place (backup,
/// merge, diff, fixture and `restore --entity` on what they read, find, migrate, a context
/// opened to migrate its store).
///
/// 1. With a model set (`--model`, or versions built in code): the version that is the
///    store's, found as Core Data finds it (``locate(_:in:cacheName:)``: by the store's entity
///    version hashes, else by its schema), else the model the store keeps in `Z_MODELCACHE`.
/// 2. Without one: the model the store keeps in `Z_MODELCACHE`.
/// 3. Without that: the model the archive the store was restored from carried, when it was.
///
/// An archive's own model is the descriptor it carries (``ArchivePeek``); an export file's,
/// the model it carries (`import`).
enum ModelResolver {
  /// The model of `store` by the rule: the version of `modelPath`'s set that is the store's,
  /// else its `Z_MODELCACHE` (named `cacheName`; default: the store's file name), else
  /// `carried`.
  /// - Throws: ``VaultError`` 78 when none is known; a model loader's error, or
  ///   ``StoreError`` (``StoreError/Kind/modelMismatch``) when no version of the set is the
  ///   store's and it keeps no model.
  static func model(
    of store: CoreDataStore, modelPath: String?, carried: ObjectModel? = nil,
    cacheName: String? = nil
  ) throws -> ObjectModel {
    if let modelPath {
      return try version(
        of: store, in: ModelSource.versions(at: modelPath), cacheName: cacheName)
    }
    guard let model = try known(of: store, carried: carried, cacheName: cacheName) else {
      throw VaultError(
        .modelUnavailable,
        "the store keeps no model (no Z_MODELCACHE): pass --model with its .xcdatamodeld, .momd or .mom (\(store.path))"
      )
    }
    return model
  }

  /// The model of `store` by the rule, for callers that say themselves what is missing: the
  /// version of `versions` that is the store's, else its `Z_MODELCACHE`, else `carried`; nil
  /// when none is known.
  /// - Throws: when the store's model cache cannot be read.
  static func known(
    of store: CoreDataStore, versions: ModelVersionSet? = nil, carried: ObjectModel? = nil,
    cacheName: String? = nil
  ) throws -> ObjectModel? {
    if let versions, let found = try? locate(store, in: versions, cacheName: cacheName) {
      return found.model
    }
    return try store.cachedModel(name: cacheName) ?? carried
  }

  /// The model `store` is at: the version of `set` with the store's entity version hashes, as
  /// Core Data finds a store's model (an entity whose hash graphvault cannot reproduce, see
  /// ``ObjectModel/unreproducedVersionHashes``, is taken by the store's word), else the one
  /// whose schema is the store's; the only version when the store has no hashes to tell by;
  /// else, when no version is the store's, the model the store keeps in `Z_MODELCACHE` (what
  /// Core Data migrates from when the app's model has no version of the store's). The version
  /// found carries the store's hashes when it carries none of its own.
  /// - Throws: ``StoreError`` (``StoreError/Kind/modelMismatch``) when no version of `set` is
  ///   the store's and it keeps no model of its own.
  static func version(of store: CoreDataStore, in set: ModelVersionSet, cacheName: String? = nil)
    throws -> ObjectModel
  {
    try locate(store, in: set, cacheName: cacheName).model
  }

  /// The model `store` is at (see ``version(of:in:cacheName:)``), with the name of its version
  /// in `set`, nil when it is the store's cached model.
  static func locate(_ store: CoreDataStore, in set: ModelVersionSet, cacheName: String? = nil)
    throws -> (model: ObjectModel, version: String?)
  {
    let stored = store.versionHashes
    let found: ObjectModel?
    if stored.isEmpty && set.versions.count == 1 {
      found = set.versions[0]
    } else if let same = set.versions.first(where: { hashes(of: $0, fit: stored) }) {
      found = same
    } else {
      found = try? VersionDetector.detect(store: store, in: set)
    }
    guard let found else {
      if let cached = try store.cachedModel(name: cacheName) { return (cached, nil) }
      // What the detector says: which versions it tried.
      return (try VersionDetector.detect(store: store, in: set), nil)
    }
    return (
      found.entityVersionHashes.isEmpty ? found.withVersionHashes(stored) : found,
      found.versionName ?? found.name
    )
  }

  /// Whether `model` has the entity version hashes `stored`: the same entities, each with the
  /// same hash, or with one graphvault cannot reproduce.
  private static func hashes(of model: ObjectModel, fit stored: [String: [UInt8]]) -> Bool {
    let hashes = model.versionHashes
    guard !stored.isEmpty, Set(hashes.keys) == Set(stored.keys) else { return false }
    let unreproduced = model.unreproducedVersionHashes
    return hashes.allSatisfy { name, hash in
      stored[name] == hash || unreproduced[name] != nil
    }
  }
}
