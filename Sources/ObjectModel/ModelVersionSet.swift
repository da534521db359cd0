import Foundation
import PropertyList

/// Every version of a model: an `.xcdatamodeld` folder (Xcode's source) or a `.momd` folder
/// (compiled, with Apple's entity version hashes in `VersionInfo.plist`).
///
/// A model set declares no order of its versions, and its current version need not be its
/// newest (a project may keep an old version current while it tests migrations). graphvault's
/// **migration order** is:
/// 1. by version identifier (`userDefinedModelVersionIdentifier`), when every version has one
///    that is a number and no two are equal: `1` < `2` < `10`;
/// 2. otherwise by the natural order of the version names: `Model` < `Model 2` < `Model 10`,
///    `SampleModel3` < `SampleModel3_v2` (digit runs compare as numbers, a prefix first).
///
/// A mapping file may give an explicit order instead.
public struct ModelVersionSet: Sendable {
  /// The set's name (the folder's name without extension).
  public let name: String
  /// The versions, in migration order.
  public let versions: [ObjectModel]
  /// The current version's name (`.xccurrentversion` or `VersionInfo.plist`).
  public let currentVersionName: String

  /// The current version.
  public var current: ObjectModel {
    versions.first { $0.versionName == currentVersionName } ?? versions[versions.count - 1]
  }

  /// The version named `name`.
  public func version(named name: String) -> ObjectModel? {
    versions.first { $0.versionName == name }
  }

  /// Creates a set from versions (sorted into migration order).
  public init(name: String, versions: [ObjectModel], currentVersionName: String) {
    self.name = name
    self.currentVersionName = currentVersionName
    let numbers = versions.map {
      $0.versionIdentifiers.count == 1 ? Double($0.versionIdentifiers[0]) : nil
    }
    if numbers.allSatisfy({ $0 != nil }) && Set(numbers).count == numbers.count {
      self.versions = zip(versions, numbers).sorted { $0.1! < $1.1! }.map(\.0)
    } else {
      self.versions = versions.sorted {
        NaturalOrder.less($0.versionName ?? $0.name, $1.versionName ?? $1.name)
      }
    }
  }

  /// Loads an `.xcdatamodeld` or `.momd` folder.
  /// - Throws: ``ModelError`` naming the file that is missing or unreadable.
  public static func load(path: String) throws(ModelError) -> ModelVersionSet {
    let url = URL(fileURLWithPath: path)
    let name = url.deletingPathExtension().lastPathComponent
    switch url.pathExtension {
    case "xcdatamodeld": return try loadSource(url, name: name)
    case "momd": return try loadCompiled(url, name: name)
    default:
      throw ModelError(.unreadable, "not an .xcdatamodeld or .momd folder", path: path)
    }
  }

  private static func contents(of url: URL) throws(ModelError) -> [String] {
    do {
      return try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    } catch {
      throw ModelError(.missing, "cannot list the model folder", path: url.path, underlying: error)
    }
  }

  private static func plist(_ url: URL) throws(ModelError) -> PropertyListValue {
    do {
      return try PropertyListValue(propertyList: [UInt8](Data(contentsOf: url)))
    } catch {
      throw ModelError(
        .unreadable, "cannot read the property list", path: url.path, underlying: error)
    }
  }

  private static func loadSource(_ url: URL, name: String) throws(ModelError) -> ModelVersionSet {
    let folders = try contents(of: url).filter { $0.hasSuffix(".xcdatamodel") }
    guard !folders.isEmpty else {
      throw ModelError(.missing, "the folder holds no .xcdatamodel version", path: url.path)
    }
    var versions: [ObjectModel] = []
    for folder in folders {
      versions.append(
        try XcodeModelLoader.load(path: url.appendingPathComponent(folder).path, name: name))
    }
    var current = versions.count == 1 ? versions[0].versionName ?? name : ""
    let marker = url.appendingPathComponent(".xccurrentversion")
    if FileManager.default.fileExists(atPath: marker.path) {
      guard let file = try plist(marker)["_XCCurrentVersionName"]?.stringValue else {
        throw ModelError(.unreadable, "no _XCCurrentVersionName", path: marker.path)
      }
      current = String(file.dropLast(file.hasSuffix(".xcdatamodel") ? 12 : 0))
    }
    guard versions.contains(where: { $0.versionName == current }) else {
      throw ModelError(
        .unreadable, "the current version \(current) is not among the versions", path: url.path)
    }
    return ModelVersionSet(name: name, versions: versions, currentVersionName: current)
  }

  private static func loadCompiled(_ url: URL, name: String) throws(ModelError) -> ModelVersionSet {
    let infoURL = url.appendingPathComponent("VersionInfo.plist")
    let info = try plist(infoURL)
    guard let hashes = info["NSManagedObjectModel_VersionHashes"]?.dictionaryValue,
      let current = info["NSManagedObjectModel_CurrentVersionName"]?.stringValue
    else {
      throw ModelError(
        .unreadable, "VersionInfo.plist lacks the version hashes or current version",
        path: infoURL.path)
    }
    var versions: [ObjectModel] = []
    for (version, entityHashes) in hashes {
      let momURL = url.appendingPathComponent("\(version).mom")
      var model = try CompiledModelLoader.load(path: momURL.path, name: name, versionName: version)
      var known: [String: [UInt8]] = [:]
      for (entity, hash) in entityHashes.dictionaryValue ?? [:] { known[entity] = hash.dataValue }
      model = model.withVersionHashes(known)
      versions.append(model)
    }
    return ModelVersionSet(name: name, versions: versions, currentVersionName: current)
  }
}

/// Natural ordering of version names: digit runs compare as numbers, and a name that is a
/// prefix of another comes first.
enum NaturalOrder {
  static func less(_ a: String, _ b: String) -> Bool {
    let left = chunks(a)
    let right = chunks(b)
    for (x, y) in zip(left, right) where x != y {
      if let m = Int(x), let n = Int(y) { return m < n }
      return x < y
    }
    return left.count < right.count
  }

  private static func chunks(_ text: String) -> [String] {
    var result: [String] = []
    var current = ""
    var digits = false
    for character in text {
      let isDigit = character.isASCII && character.isNumber
      if !current.isEmpty && isDigit != digits {
        result.append(current)
        current = ""
      }
      digits = isDigit
      current.append(character)
    }
    if !current.isEmpty { result.append(current) }
    return result
  }
}

extension ObjectModel {
  /// The same model with Apple's entity version hashes attached (by entity name).
  public func withVersionHashes(_ hashes: [String: [UInt8]]) -> ObjectModel {
    .unchecked(
      name: name, versionName: versionName, versionIdentifiers: versionIdentifiers,
      entities: entities.map { entity in
        var entity = entity
        if let hash = hashes[entity.name] { entity.versionHash = hash }
        return entity
      })
  }

  /// The same model under another version name.
  public func withVersionName(_ versionName: String) -> ObjectModel {
    .unchecked(
      name: name, versionName: versionName, versionIdentifiers: versionIdentifiers,
      entities: entities)
  }
}
