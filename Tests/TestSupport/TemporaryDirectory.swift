import Foundation

/// A fresh folder under the system's temporary folder, removed when the value is released.
public final class TemporaryDirectory: Sendable {
  /// The folder.
  public let url: URL

  /// Creates a new, empty folder.
  public init(_ label: String = "graphvault-test") throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit {
    try? FileManager.default.removeItem(at: url)
  }

  /// A path inside the folder.
  public func path(_ name: String) -> URL { url.appendingPathComponent(name) }
}
