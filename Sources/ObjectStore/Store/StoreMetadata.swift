import Crypto
import Foundation
import ObjectModel
import PropertyList

/// The metadata a Core Data store keeps in `Z_METADATA.Z_PLIST`, and the derived keys Core Data
/// computes from the entity version hashes.
public enum StoreMetadata {
  /// The framework version graphvault writes into stores it creates (`NSPersistenceFrameworkVersion`
  /// of the 2024 stores in the fixtures), unless a source store's is carried over.
  public static let defaultFrameworkVersion: Int64 = 1344

  /// Metadata for a new store of `model`. Apple's entity version hashes are written only when
  /// the model carries them for every entity (they cannot be computed); with them come the
  /// digest and checksum keys.
  public static func make(for model: ObjectModel, frameworkVersion: Int64 = defaultFrameworkVersion)
    -> [String: PropertyListValue]
  {
    var metadata: [String: PropertyListValue] = [
      "NSStoreType": "SQLite",
      "NSPersistenceFrameworkVersion": .integer(frameworkVersion),
      "NSStoreModelVersionHashesVersion": 3,
      "NSStoreModelVersionIdentifiers": .array(
        model.versionIdentifiers.map(PropertyListValue.string)),
      "_NSAutoVacuumLevel": "2",
    ]
    let hashes = model.entityVersionHashes
    if !hashes.isEmpty && hashes.count == model.entities.count {
      metadata["NSStoreModelVersionHashes"] = .dictionary(hashes.mapValues(PropertyListValue.data))
      metadata["NSStoreModelVersionHashesDigest"] = .string(digest(of: hashes))
      metadata["NSStoreModelVersionChecksumKey"] = .string(checksum(of: hashes))
    }
    return metadata
  }

  /// `NSStoreModelVersionHashesDigest`: base64 of the SHA-512 of each entity's UTF-8 name
  /// followed by its hash, entities sorted by name.
  public static func digest(of hashes: [String: [UInt8]]) -> String {
    var hasher = SHA512()
    for name in hashes.keys.sorted() {
      hasher.update(data: Array(name.utf8))
      hasher.update(data: hashes[name]!)
    }
    return Data(hasher.finalize()).base64EncodedString()
  }

  /// `NSStoreModelVersionChecksumKey`: base64 of the SHA-256 of the hashes, entities sorted by
  /// name.
  public static func checksum(of hashes: [String: [UInt8]]) -> String {
    var hasher = SHA256()
    for name in hashes.keys.sorted() { hasher.update(data: hashes[name]!) }
    return Data(hasher.finalize()).base64EncodedString()
  }
}
