import ObjectModel
import ObjectStore

/// Creating and describing stores, for the command line.
public enum StoreService {
  /// Describes a store or model file (`graphvault model`).
  public static func describe(path: String) throws(VaultError) -> ModelReport {
    try vault { try ModelReport(path: path) }
  }

  /// Creates an empty store in Core Data's layout from the model at `modelPath`
  /// (`graphvault create`).
  /// - Parameters:
  ///   - versionName: the model version; the set's current version when nil.
  ///   - force: replace an existing store.
  ///   - persistentHistory: add Core Data's persistent-history tables.
  /// - Returns: the model version used.
  @discardableResult
  public static func create(
    at path: String, modelPath: String, versionName: String?, force: Bool,
    persistentHistory: Bool = false
  ) throws(VaultError) -> String {
    try vault {
      if StoreDestination.sameFile(modelPath, path) {
        throw VaultError(
          .usage, "the store to create is the model's own store: --force would replace it (\(path))"
        )
      }
      let model = try ModelSource.model(at: modelPath, versionName: versionName)
      var options = StoreCreator.Options()
      options.overwrite = force
      options.persistentHistory = persistentHistory
      try StoreCreator.create(at: path, model: model, options: options)
      return model.versionName ?? model.name
    }
  }
}
