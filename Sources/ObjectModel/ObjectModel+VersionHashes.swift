import Crypto
import Foundation

extension ObjectModel {
  /// Each entity's version hash as Core Data computes it from the model (what it writes as
  /// `NSStoreModelVersionHashes` and checks when it opens a store), by entity name; the hashes
  /// a model carries from Core Data (a compiled model, a store) are not consulted.
  ///
  /// An entity's hash is the SHA-256 of its name, whether it is abstract, its parent's hash,
  /// the hashes of its stored properties (inherited ones included, sorted by name), its version
  /// hash modifier and its own uniqueness constraints. A property's hash covers its name, its
  /// optional/transient/read-only flags and modifier, and then an attribute's type code and its
  /// external-storage and preserve-after-deletion flags, or a relationship's destination,
  /// inverse, bounds and ordering. Checked byte for byte against the metadata Core Data wrote
  /// into real stores and the hashes Xcode's model compiler wrote into `.momd`s, frameworks
  /// 419 to 1344. Not reproduced: the hash of an entity with a derived attribute (itself or
  /// inherited; ``unreproducedVersionHashes``), into which Core Data feeds something of the
  /// derivation that no fixture shows.
  public var computedVersionHashes: [String: [UInt8]] {
    var hashes: [String: [UInt8]] = [:]
    func hash(of entity: EntityDescription) -> [UInt8] {
      if let known = hashes[entity.name] { return known }
      var hasher = SHA256()
      hasher.update(data: Array(entity.name.utf8))
      hasher.update(data: [entity.isAbstract ? 1 : 0])
      if let parent = entity.parent.flatMap({ self.entity(named: $0) }) {
        hasher.update(data: hash(of: parent))
      }
      var properties: [(name: String, hash: [UInt8])] = []
      for attribute in declaredAttributes(of: entity.name) where !attribute.isTransient {
        properties.append((attribute.name, Self.hash(of: attribute)))
      }
      for relationship in relationships(of: entity.name) where !relationship.isTransient {
        properties.append((relationship.name, Self.hash(of: relationship)))
      }
      for property in properties.sorted(by: {
        Array($0.name.utf8).lexicographicallyPrecedes($1.name.utf8)
      }) {
        hasher.update(data: property.hash)
      }
      if let modifier = entity.versionHashModifier { hasher.update(data: Array(modifier.utf8)) }
      for constraint in entity.uniquenessConstraints.map({ $0.joined(separator: ".") }).sorted() {
        hasher.update(data: Array(constraint.utf8))
      }
      let result = Array(hasher.finalize())
      hashes[entity.name] = result
      return result
    }
    for entity in entities { _ = hash(of: entity) }
    return hashes
  }

  /// The entities whose hash in ``versionHashes`` is known not to be Core Data's, each with the
  /// reason: computed (the model carries no hash of Core Data's for it) for an entity with a
  /// derived or composite attribute of its own or inherited.
  public var unreproducedVersionHashes: [String: String] {
    var reasons: [String: String] = [:]
    for entity in entities where entity.versionHash == nil {
      if let derived = attributes(of: entity.name).first(where: \.isDerived) {
        reasons[entity.name] =
          "its derived attribute \(derived.name): Core Data hashes the derivation in a way not reproduced"
      } else if let composite = declaredAttributes(of: entity.name).first(where: \.isComposite) {
        reasons[entity.name] =
          "its composite attribute \(composite.name): Core Data hashes a composite's elements in a way not reproduced"
      }
    }
    return reasons
  }

  /// The version hashes to write for this model: the ones it carries from Core Data where it
  /// has them, else the computed ones (``computedVersionHashes``).
  public var versionHashes: [String: [UInt8]] {
    computedVersionHashes.merging(entityVersionHashes) { _, carried in carried }
  }

  /// Whether Core Data takes `other` for this model: both have the same entities with the same
  /// entity version hashes (``versionHashes``), whatever the models, their files, versions and
  /// version identifiers are called, and whatever the hashes leave out (user info, defaults,
  /// renaming identifiers), as Core Data finds a store's model by its metadata's hashes.
  public func isSameVersion(as other: ObjectModel) -> Bool {
    versionHashes == other.versionHashes
  }

  /// `NSStoreModelVersionHashesDigest` of `hashes` (entity name → hash): base64 of the
  /// SHA-512 of each entity's UTF-8 name followed by its hash, entities sorted by name, as
  /// frameworks from 1044 write it.
  public static func versionHashesDigest(of hashes: [String: [UInt8]]) -> String {
    var hasher = SHA512()
    for name in hashes.keys.sorted() {
      hasher.update(data: Array(name.utf8))
      hasher.update(data: hashes[name]!)
    }
    return Data(hasher.finalize()).base64EncodedString()
  }

  /// `NSStoreModelVersionChecksumKey` of `hashes`: base64 of the SHA-256 of the hashes,
  /// entities sorted by name, as frameworks from 1344 write it (and Xcode's model compiler as
  /// a version's `NSManagedObjectModel_VersionChecksums`).
  public static func versionChecksum(of hashes: [String: [UInt8]]) -> String {
    var hasher = SHA256()
    for name in hashes.keys.sorted() { hasher.update(data: hashes[name]!) }
    return Data(hasher.finalize()).base64EncodedString()
  }

  /// The part every property's hash starts with.
  private static func propertyHash(
    name: String, optional: Bool, transient: Bool, readOnly: Bool = false, modifier: String?
  ) -> [UInt8] {
    var hasher = SHA256()
    hasher.update(data: Array(name.utf8))
    let flags: UInt16 = (optional ? 1 : 0) | (transient ? 2 : 0) | (readOnly ? 4 : 0)
    hasher.update(data: littleEndian(flags))
    if let modifier { hasher.update(data: Array(modifier.utf8)) }
    return Array(hasher.finalize())
  }

  private static func hash(of attribute: AttributeDescription) -> [UInt8] {
    var hasher = SHA256()
    hasher.update(
      data: propertyHash(
        name: attribute.name, optional: attribute.isOptional, transient: attribute.isTransient,
        readOnly: attribute.isDerived, modifier: attribute.versionHashModifier))
    hasher.update(data: littleEndian(UInt32(attribute.type.coreDataCode)))
    if attribute.allowsExternalBinaryDataStorage { hasher.update(data: [1]) }
    if attribute.preservesValueInHistoryOnDeletion { hasher.update(data: [1]) }
    // Not Core Data's recipe (no real store shows it; see unreproducedVersionHashes), but a
    // hash that changes with every element, so that models differing in them differ.
    for element in attribute.elements.sorted(by: { $0.name < $1.name }) {
      hasher.update(data: hash(of: element))
    }
    return Array(hasher.finalize())
  }

  private static func hash(of relationship: RelationshipDescription) -> [UInt8] {
    var hasher = SHA256()
    hasher.update(
      data: propertyHash(
        name: relationship.name, optional: relationship.isOptional,
        transient: relationship.isTransient, modifier: relationship.versionHashModifier))
    hasher.update(data: Array(relationship.destination.utf8))
    if let inverse = relationship.inverse { hasher.update(data: Array(inverse.utf8)) }
    hasher.update(data: littleEndian(UInt32(truncatingIfNeeded: relationship.maxCount)))
    hasher.update(data: littleEndian(UInt32(truncatingIfNeeded: relationship.minCount)))
    if relationship.isOrdered { hasher.update(data: littleEndian(UInt16(1))) }
    return Array(hasher.finalize())
  }

  private static func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
    withUnsafeBytes(of: value.littleEndian) { Array($0) }
  }
}
