import Foundation
import ObjectModel
import ObjectStore

/// Where a model comes from, named by a path: an `.xcdatamodeld` or `.momd` folder (a version
/// set), an `.xcdatamodel` folder, a compiled `.mom` file, or a store (its `Z_MODELCACHE`).
public enum ModelSource {
  /// The versions a path offers: every version of a set, or the single model of the others.
  /// - Throws: ``ModelError`` or ``StoreError`` naming the path and what is wrong.
  public static func versions(at path: String) throws -> ModelVersionSet {
    let url = URL(fileURLWithPath: path)
    guard FileManager.default.fileExists(atPath: path) else {
      throw ModelError(.missing, "no model at this path", path: path)
    }
    switch url.pathExtension {
    case "xcdatamodeld", "momd":
      return try ModelVersionSet.load(path: path)
    case "xcdatamodel":
      let model = try XcodeModelLoader.load(path: path)
      return ModelVersionSet(
        name: model.name, versions: [model], currentVersionName: model.versionName ?? model.name)
    case "mom":
      let model = try CompiledModelLoader.load(path: path)
      return ModelVersionSet(
        name: model.name, versions: [model], currentVersionName: model.versionName ?? model.name)
    default:
      let store = try CoreDataStore(path: path)
      guard let model = try store.cachedModel() else {
        throw ModelError(
          .noModel,
          "the store keeps no model (no Z_MODELCACHE); pass --model with its .xcdatamodeld or .momd",
          path: path)
      }
      let name = model.name
      return ModelVersionSet(
        name: name, versions: [model.withVersionName(name)],
        currentVersionName: name)
    }
  }

  /// The model at `path`: the version named `versionName`, else the current one.
  public static func model(at path: String, versionName: String? = nil) throws -> ObjectModel {
    let set = try versions(at: path)
    guard let versionName else { return set.current }
    guard let version = set.version(named: versionName) else {
      let names = set.versions.compactMap(\.versionName).joined(separator: ", ")
      throw ModelError(.noModel, "no version \(versionName) (versions: \(names))", path: path)
    }
    return version
  }
}
