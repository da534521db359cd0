import Crypto

/// The SHA-256 checksums the archive index records, as lowercase hexadecimal.
package enum Checksum {
  /// The SHA-256 of `bytes`.
  package static func sha256(_ bytes: [UInt8]) -> String {
    hex(SHA256.hash(data: bytes))
  }

  /// The SHA-256 of `bytes`, as bytes.
  package static func digest(_ bytes: [UInt8]) -> [UInt8] {
    Array(SHA256.hash(data: bytes))
  }

  /// A finished digest as lowercase hexadecimal.
  package static func hex(_ digest: some Sequence<UInt8>) -> String {
    digest.map { String(format: "%02x", $0) }.joined()
  }
}
