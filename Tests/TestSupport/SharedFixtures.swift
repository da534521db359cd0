import Foundation
import Testing

/// Where the third-party Core Data fixtures live: `../shared/fixtures/coredata` beside the
/// package, or the folder named by `GRAPHVAULT_SHARED` (the `shared` folder itself).
///
/// Tests that need them use `.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote)`
/// so that a machine without `../shared` reports them as skipped, with the reason.
public enum SharedFixtures {
  /// The package's root folder (found from this source file's path).
  public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // TestSupport
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()

  /// The `shared` folder.
  public static let sharedRoot: URL = {
    if let override = ProcessInfo.processInfo.environment["GRAPHVAULT_SHARED"], !override.isEmpty {
      return URL(fileURLWithPath: override)
    }
    return packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
  }()

  /// The Core Data fixture folder.
  public static let coreDataRoot: URL = sharedRoot.appendingPathComponent("fixtures/coredata")

  /// Whether the Core Data fixtures are present.
  public static let isAvailable: Bool = FileManager.default.fileExists(
    atPath: coreDataRoot.appendingPathComponent("README.md").path)

  /// The message a skipped test shows.
  public static let skipNote: Comment =
    "needs ../shared/fixtures/coredata beside the package (or GRAPHVAULT_SHARED); absent here"

  /// A file below the Core Data fixture folder.
  public static func file(_ relativePath: String) -> URL {
    coreDataRoot.appendingPathComponent(relativePath)
  }

  /// Every file below the fixture folder whose name ends with `suffix`, sorted by path.
  public static func files(endingWith suffix: String) -> [URL] {
    guard
      let enumerator = FileManager.default.enumerator(
        at: coreDataRoot, includingPropertiesForKeys: nil)
    else { return [] }
    var result: [URL] = []
    for case let url as URL in enumerator where url.lastPathComponent.hasSuffix(suffix) {
      result.append(url)
    }
    return result.sorted { $0.path < $1.path }
  }

  /// Copies a store with its `-wal` and `-shm` (those that exist) into `directory`, so a test
  /// never opens a fixture in place; returns the copy's path.
  public static func copyStore(_ relativePath: String, into directory: URL) throws -> URL {
    let source = file(relativePath)
    let destination = directory.appendingPathComponent(source.lastPathComponent)
    for suffix in ["", "-wal", "-shm"] {
      let from = URL(fileURLWithPath: source.path + suffix)
      if FileManager.default.fileExists(atPath: from.path) {
        try FileManager.default.copyItem(
          at: from, to: URL(fileURLWithPath: destination.path + suffix))
      }
    }
    return destination
  }
}
