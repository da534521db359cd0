import Foundation
import Migration
import ObjectModel

/// What a migrating restore is told beyond the models: at most one JSON mapping file, and the
/// app's own mapping models (`.xcmappingmodel`, `.cdm`), named one by one or found in a folder.
struct MappingSources {
  /// The JSON mapping file.
  var file: MappingFile?
  /// The mapping models.
  var models: [MappingModel] = []

  /// Reads `paths` (each a JSON mapping file or a mapping model, told apart by its extension)
  /// and every `.xcmappingmodel` and `.cdm` in `directory`, for a migration within `set`.
  /// - Throws: ``VaultError`` (usage) for two JSON files or a folder that cannot be listed;
  ///   ``MigrationError`` for a file that cannot be read or is malformed, or a mapping model
  ///   named by path that maps no two consecutive versions of `set`.
  static func load(paths: [String], directory: String?, set: ModelVersionSet) throws
    -> MappingSources
  {
    var sources = MappingSources()
    for path in paths {
      if MappingModel.isMappingModel(path) {
        let model = try MappingModel.load(path: path)
        guard consecutivePair(of: set, coveredBy: model) else {
          let between =
            model.sourceVersion.map { "maps \($0) → \(model.destinationVersion ?? "?"), which is" }
            ?? "has entity version hashes that match"
          throw MigrationError(
            .refused,
            "mapping model \(path) \(between) not two consecutive versions of \(set.name) (versions: \(set.versions.map { $0.versionName ?? $0.name }.joined(separator: ", "))); `graphvault model` shows each version's hashes"
          )
        }
        sources.models.append(model)
      } else {
        guard sources.file == nil else {
          throw VaultError(.usage, "--mapping takes one JSON mapping file; \(path) is a second")
        }
        sources.file = try MappingFile.load(path: path)
      }
    }
    if let directory {
      let names: [String]
      do { names = try FileManager.default.contentsOfDirectory(atPath: directory) } catch {
        throw VaultError(.inputMissing, "cannot list the mapping folder (\(directory))")
      }
      for name in names.sorted() where name.hasSuffix(".xcmappingmodel") || name.hasSuffix(".cdm") {
        sources.models.append(
          try MappingModel.load(path: (directory as NSString).appendingPathComponent(name)))
      }
    }
    return sources
  }

  private static func consecutivePair(of set: ModelVersionSet, coveredBy model: MappingModel)
    -> Bool
  {
    zip(set.versions, set.versions.dropFirst()).contains { model.covers(from: $0, to: $1) }
  }
}
