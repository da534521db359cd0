import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore

/// What `graphvault model` shows: a model's versions with their entities, attributes,
/// relationships and hashes, and for a store its metadata.
public struct ModelReport: Codable, Sendable {
  /// An attribute.
  public struct Attribute: Codable, Sendable {
    /// Name.
    public let name: String
    /// Type, as Xcode names it.
    public let type: String
    /// Whether it may be nil.
    public let optional: Bool
    /// Whether it is stored (not transient).
    public let stored: Bool
    /// Whether it is derived.
    public let derived: Bool
    /// The renaming identifier, if any.
    public let renamingIdentifier: String?
    /// For a transformable attribute: the value transformer it names (Core Data's default,
    /// `NSKeyedUnarchiveFromData`, when it names none), which a context needs registered to
    /// read or set its value.
    public var valueTransformer: String?
    /// For a transformable attribute: the value class it names, if any.
    public var valueClass: String?
  }

  /// A relationship.
  public struct Relationship: Codable, Sendable {
    /// Name.
    public let name: String
    /// Destination entity.
    public let destination: String
    /// Inverse, if any.
    public let inverse: String?
    /// `to-one`, `to-many` or `to-many (≤ n)`; `ordered` added when ordered.
    public let cardinality: String
    /// Delete rule.
    public let deleteRule: String
    /// Whether it may be empty.
    public let optional: Bool
  }

  /// An entity.
  public struct Entity: Codable, Sendable {
    /// Name.
    public let name: String
    /// Parent entity, if any.
    public let parent: String?
    /// Whether it is abstract.
    public let abstract: Bool
    /// Core Data's entity number (`Z_ENT`).
    public let number: Int
    /// The table holding its rows.
    public let table: String
    /// The entity's version hash, hexadecimal: Apple's when the model carries it (a compiled
    /// model, a store), else computed as Core Data computes it.
    public let versionHash: String?
    /// Why the computed ``versionHash`` is not Core Data's, when it is known not to be.
    public let versionHashProblem: String?
    /// Own attributes, each composite followed by its elements named by key path.
    public let attributes: [Attribute]
    /// Own relationships.
    public let relationships: [Relationship]
    /// Uniqueness constraints (SwiftData's `#Unique`, `@Attribute(.unique)`): each the
    /// properties whose values together pick out one object.
    public let uniquenessConstraints: [[String]]
    /// Fetch indexes (SwiftData's `#Index`): name, then each property with its kind and order
    /// (`name`, `date desc`, `area R-Tree`).
    public let fetchIndexes: [Index]
  }

  /// A fetch index.
  public struct Index: Codable, Sendable {
    /// The index's name in the model.
    public let name: String
    /// Its properties in order, each with ` desc` when descending and its kind when not a
    /// B-tree (`Binary`).
    public let elements: [String]
  }

  /// A model version.
  public struct Version: Codable, Sendable {
    /// The version's name.
    public let name: String
    /// Whether it is the set's current version.
    public let current: Bool
    /// Version identifiers.
    public let identifiers: [String]
    /// graphvault's fingerprint.
    public let fingerprint: String
    /// The entities.
    public let entities: [Entity]
  }

  /// A store's metadata.
  public struct Store: Codable, Sendable {
    /// Path.
    public let path: String
    /// `Z_UUID`.
    public let uuid: String
    /// `NSPersistenceFrameworkVersion`.
    public let frameworkVersion: Int64?
    /// `NSStoreModelVersionIdentifiers`.
    public let versionIdentifiers: [String]
    /// Entities of `Z_PRIMARYKEY` with their number and last primary key.
    public let entities: [String: Int64]
    /// Whether it keeps its model in `Z_MODELCACHE`.
    public let hasModelCache: Bool
  }

  /// The model set's name.
  public let name: String
  /// The versions, in migration order.
  public let versions: [Version]
  /// The store, when the path was a store.
  public let store: Store?

  /// The report for `path` (a model or a store).
  public init(path: String) throws {
    let url = URL(fileURLWithPath: path)
    let isModelFile = ["xcdatamodeld", "momd", "xcdatamodel", "mom"].contains(url.pathExtension)
    var storeInfo: Store?
    var set: ModelVersionSet?
    if !isModelFile {
      let store = try CoreDataStore(path: path)
      storeInfo = Store(
        path: path, uuid: store.uuid,
        frameworkVersion: store.metadata["NSPersistenceFrameworkVersion"]?.integerValue,
        versionIdentifiers: store.versionIdentifiers,
        entities: Dictionary(
          store.entityRows.map { ($0.name, $0.maxPrimaryKey) }, uniquingKeysWith: { a, _ in a }),
        hasModelCache: try store.modelCacheBytes() != nil)
      if try store.modelCacheBytes() != nil { set = try ModelSource.versions(at: path) }
    } else {
      set = try ModelSource.versions(at: path)
    }
    name = set?.name ?? url.deletingPathExtension().lastPathComponent
    store = storeInfo
    versions = (set?.versions ?? []).map { model in
      Version(
        name: model.versionName ?? model.name,
        current: model.versionName == set?.currentVersionName,
        identifiers: model.versionIdentifiers, fingerprint: model.fingerprint,
        entities: ModelReport.entities(of: model))
    }
  }

  static func entities(of model: ObjectModel) -> [Entity] {
    let numbers = model.entityNumbers
    let hashes = model.versionHashes
    let unreproduced = model.unreproducedVersionHashes
    return model.numberedEntities.map { entity in
      Entity(
        name: entity.name, parent: entity.parent, abstract: entity.isAbstract,
        number: numbers[entity.name] ?? 0,
        table: StoreSchema.tableName(model.root(of: entity.name)?.name ?? entity.name),
        versionHash: hashes[entity.name].map { Checksum.hex($0) },
        versionHashProblem: unreproduced[entity.name],
        // A composite, then each of its elements by key path (`author.person`).
        attributes: entity.attributes.flatMap { $0.isComposite ? [$0] + $0.flattened : [$0] }.map {
          var attribute = Attribute(
            name: $0.name, type: $0.type.rawValue, optional: $0.isOptional, stored: $0.isStored,
            derived: $0.isDerived, renamingIdentifier: $0.renamingIdentifier)
          if $0.type == .transformable {
            attribute.valueTransformer = ValueTransformerRegistry.effectiveName(
              $0.valueTransformerName)
            attribute.valueClass = $0.valueClassName.flatMap { $0.isEmpty ? nil : $0 }
          }
          return attribute
        },
        relationships: entity.relationships.map {
          let count =
            $0.maxCount == 1
            ? "to-one" : ($0.maxCount <= 0 ? "to-many" : "to-many (≤ \($0.maxCount))")
          return Relationship(
            name: $0.name, destination: $0.destination, inverse: $0.inverse,
            cardinality: count + ($0.isOrdered ? ", ordered" : ""),
            deleteRule: $0.deleteRule.rawValue,
            optional: $0.isOptional)
        },
        uniquenessConstraints: entity.uniquenessConstraints,
        fetchIndexes: entity.fetchIndexes.map { index in
          Index(
            name: index.name,
            elements: index.elements.map {
              $0.property + ($0.ascending ? "" : " desc")
                + ($0.kind == "Binary" ? "" : " \($0.kind)")
            })
        })
    }
  }

  /// The report as indented text lines.
  public var text: String {
    var lines: [String] = []
    if let store {
      lines.append("store \(store.path)")
      lines.append("  uuid \(store.uuid)")
      if let version = store.frameworkVersion { lines.append("  framework version \(version)") }
      lines.append("  version identifiers [\(store.versionIdentifiers.joined(separator: ", "))]")
      lines.append(
        "  model cache: \(store.hasModelCache ? "yes" : "no (pass --model to back it up)")")
    }
    for version in versions {
      let current = version.current && versions.count > 1 ? " (current)" : ""
      lines.append("model \(name) version \(version.name)\(current)")
      lines.append("  identifiers [\(version.identifiers.joined(separator: ", "))]")
      lines.append("  fingerprint \(version.fingerprint)")
      for entity in version.entities {
        var header = "  entity \(entity.name)"
        if let parent = entity.parent { header += " : \(parent)" }
        if entity.abstract { header += " (abstract)" }
        header += " Z_ENT \(entity.number) in \(entity.table)"
        lines.append(header)
        if let hash = entity.versionHash {
          lines.append(
            "    hash \(hash)\(entity.versionHashProblem.map { " (not Core Data's: \($0))" } ?? "")"
          )
        }
        for attribute in entity.attributes {
          var flags: [String] = []
          if attribute.optional { flags.append("optional") }
          if !attribute.stored { flags.append("transient") }
          if attribute.derived { flags.append("derived") }
          if let id = attribute.renamingIdentifier { flags.append("renamed from \(id)") }
          if let transformer = attribute.valueTransformer {
            flags.append("transformer \(transformer)")
          }
          lines.append(
            "    \(attribute.name): \(attribute.type)"
              + (flags.isEmpty ? "" : " [\(flags.joined(separator: ", "))]"))
        }
        for relationship in entity.relationships {
          lines.append(
            "    \(relationship.name) → \(relationship.destination) \(relationship.cardinality)"
              + (relationship.inverse.map { ", inverse \($0)" } ?? "")
              + ", \(relationship.deleteRule)")
        }
        for constraint in entity.uniquenessConstraints {
          lines.append("    unique (\(constraint.joined(separator: ", ")))")
        }
        for index in entity.fetchIndexes {
          lines.append("    index \(index.name) (\(index.elements.joined(separator: ", ")))")
        }
      }
    }
    return lines.joined(separator: "\n")
  }
}
