import ObjectModel

/// Finds which version of a model set a store, or an archive of one, was written with.
package enum VersionDetector {
  /// The version of `set` that `store` was written with.
  ///
  /// By the entity version hashes, as Core Data finds a store's model, when the store's
  /// metadata has them (each version's hashes carried from a `.momd`, else computed);
  /// otherwise, or when no single version has them, by comparing the store's schema with the
  /// schema each version would get, ties broken by the store's version identifiers.
  /// - Throws: ``StoreError`` (``StoreError/Kind/modelMismatch``) when no version matches or
  ///   several do, listing the candidates.
  package static func detect(store: CoreDataStore, in set: ModelVersionSet) throws(StoreError)
    -> ObjectModel
  {
    try detect(
      hashes: store.versionHashes, schema: try store.schema(),
      identifiers: store.versionIdentifiers, in: set, path: store.path)
  }

  /// The version of `set` whose store has the schema `schema` (a schema kept in an archive,
  /// see ``CheckedSchema``) and the entity version hashes `hashes`; see ``detect(store:in:)``.
  package static func detect(
    hashes storeHashes: [String: [UInt8]], schema: SchemaSnapshot, identifiers: [String],
    in set: ModelVersionSet, path: String
  ) throws(StoreError) -> ObjectModel {
    let names = set.versions.map { $0.versionName ?? $0.name }
    if !storeHashes.isEmpty {
      let matches = set.versions.filter { $0.versionHashes == storeHashes }
      if matches.count == 1 { return matches[0] }
    }
    let actual = schema.filtered(isModelObject)
    var matches: [ObjectModel] = []
    for version in set.versions {
      guard let schema = try? StoreSchema(model: version),
        let expected = try? SchemaSnapshot(of: schema)
      else { continue }
      if expected.filtered(isModelObject) == actual { matches.append(version) }
    }
    if matches.count > 1 {
      let identified = matches.filter { $0.versionIdentifiers == identifiers }
      if identified.count == 1 { return identified[0] }
    }
    switch matches.count {
    case 1: return matches[0]
    case 0:
      throw StoreError(
        .modelMismatch,
        "no version of \(set.name) matches the store (versions: \(names.joined(separator: ", ")))",
        path: path)
    default:
      throw StoreError(
        .modelMismatch,
        "the store matches several versions of \(set.name): \(matches.compactMap(\.versionName).joined(separator: ", "))",
        path: path)
    }
  }

  /// Whether a table, index or trigger comes from the model (not history tracking, not the
  /// bookkeeping tables).
  static func isModelObject(_ name: String) -> Bool {
    !StoreSchema.bookkeepingTables.contains(name) && !name.hasPrefix("A")
      && !name.hasPrefix("Z_TRANSACTION")
  }
}
