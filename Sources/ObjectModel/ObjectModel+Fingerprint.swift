import Crypto
import PropertyList

extension ObjectModel {
  /// graphvault's own fingerprint of the model: the SHA-256 (hexadecimal) of its canonical
  /// descriptor without the model's name, version name, version identifiers and Apple's
  /// version hashes. Two models with the same entities, attributes and relationships have the
  /// same fingerprint whatever they are called; any change to them changes it.
  public var fingerprint: String {
    let canonical = ObjectModel.unchecked(
      name: "", versionName: nil, versionIdentifiers: [],
      entities: entities.map { entity in
        var entity = entity
        entity.versionHash = nil
        return entity
      })
    let bytes = ModelDescriptor.encode(canonical).binaryPropertyList()
    return SHA256.hash(data: bytes).map { byte in
      let hex = String(byte, radix: 16)
      return byte < 16 ? "0" + hex : hex
    }.joined()
  }
}
