import ObjectModel
import PropertyList

/// The metadata a Core Data store keeps in `Z_METADATA.Z_PLIST`, and the derived keys Core Data
/// computes from the entity version hashes.
package enum StoreMetadata {
  /// The framework version graphvault writes into stores it creates (`NSPersistenceFrameworkVersion`
  /// of the 2024 stores in the fixtures), unless a source store's is carried over.
  package static let defaultFrameworkVersion: Int64 = 1344

  /// Metadata for a new store of `model`, as Core Data of `frameworkVersion` writes it: the
  /// entity version hashes (those the model carries from Core Data, else computed:
  /// ``ObjectModel/versionHashes``), their digest (from framework 1044) and checksum (from
  /// 1344), and the version identifiers.
  package static func make(
    for model: ObjectModel, frameworkVersion: Int64 = defaultFrameworkVersion
  )
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
    let hashes = model.versionHashes
    metadata["NSStoreModelVersionHashes"] = .dictionary(hashes.mapValues(PropertyListValue.data))
    if frameworkVersion >= 1044 {
      metadata["NSStoreModelVersionHashesDigest"] = .string(
        ObjectModel.versionHashesDigest(of: hashes))
    }
    if frameworkVersion >= 1344 {
      metadata["NSStoreModelVersionChecksumKey"] = .string(ObjectModel.versionChecksum(of: hashes))
    }
    return metadata
  }

  /// `metadata` (a binary property list) with the version keys Core Data writes for `model` at
  /// the metadata's framework version, when it has no version hashes; nil when it has them or
  /// is not a dictionary.
  package static func completing(_ metadata: [UInt8], for model: ObjectModel) -> [UInt8]? {
    guard var fields = (try? PropertyListValue(binaryPropertyList: metadata))?.dictionaryValue,
      fields["NSStoreModelVersionHashes"] == nil
    else { return nil }
    let made = make(
      for: model,
      frameworkVersion: fields["NSPersistenceFrameworkVersion"]?.integerValue
        ?? defaultFrameworkVersion)
    for key in [
      "NSStoreModelVersionHashes", "NSStoreModelVersionHashesDigest",
      "NSStoreModelVersionChecksumKey", "NSStoreModelVersionHashesVersion",
    ] where fields[key] == nil {
      fields[key] = made[key]
    }
    return PropertyListValue.dictionary(fields).binaryPropertyList()
  }
}
