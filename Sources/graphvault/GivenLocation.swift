import Foundation
import GraphVault

extension Location {
  /// The location `text` names on the command line, parsed with this process's environment:
  /// the one place the command line reads how to reach object storage.
  /// - Throws: ``VaultError`` (64) for an `s3://` URL without a bucket.
  static func given(_ text: String) throws(VaultError) -> Location {
    try Location(text, environment: ProcessInfo.processInfo.environment)
  }
}
