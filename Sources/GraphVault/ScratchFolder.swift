import Foundation

/// A private folder (mode 0700) under the system's temporary folder for a command's work
/// files, removed with this value.
final class ScratchFolder {
  /// The folder.
  let url: URL

  /// Creates the folder.
  /// - Throws: what creating it throws.
  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "graphvault-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
      at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }

  /// A path inside the folder.
  func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
