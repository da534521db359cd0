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

  /// A new folder kept for the rest of the test run and removed when the process exits: for a
  /// suite's shared sources, held in a `static let`, which is never released.
  public static func forTheRun(_ label: String) throws -> TemporaryDirectory {
    let directory = try TemporaryDirectory(label)
    KeptUntilExit.shared.keep(directory)
    return directory
  }

  /// The folders ``forTheRun(_:)`` made, released at exit.
  private final class KeptUntilExit: @unchecked Sendable {
    static let shared: KeptUntilExit = {
      atexit { KeptUntilExit.shared.releaseAll() }
      return KeptUntilExit()
    }()

    private let lock = NSLock()
    private var kept: [TemporaryDirectory] = []

    func keep(_ directory: TemporaryDirectory) { lock.withLock { kept.append(directory) } }

    /// Removes every folder kept, whoever else still holds it (a `static let` may).
    func releaseAll() {
      lock.withLock {
        for directory in kept { try? FileManager.default.removeItem(at: directory.url) }
        kept.removeAll()
      }
    }
  }
}
