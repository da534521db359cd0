import Foundation

/// A private folder (mode 0700) under the system's temporary folder for a command's work
/// files, removed with this value.
///
/// A work file stands for something the user named (``path(_:standingFor:)``): messages name
/// that instead of the private file (``describe(_:)``), so no message sends a user looking
/// for a file that is gone.
final class ScratchFolder {
  /// The folder.
  let url: URL
  /// The files registered with a label, to forget with the folder.
  private var labelled: [String] = []

  /// What each registered work file stands for, by path.
  private static let labels = Labels()

  /// The prefix of every scratch folder's path.
  static let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("graphvault-")
    .path

  /// Creates the folder.
  /// - Throws: what creating it throws.
  init() throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "graphvault-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
      at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
  }

  deinit {
    Self.labels.remove(labelled)
    try? FileManager.default.removeItem(at: url)
  }

  /// A path inside the folder.
  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  /// A path inside the folder for a file that stands for `label` (the user's archive or
  /// store, or a description of the copy: "the copy of old.gvault migrated to …"), which
  /// messages name in its place.
  func path(_ name: String, standingFor label: String) -> String {
    let path = path(name)
    Self.labels.set(label, for: path)
    labelled.append(path)
    return path
  }

  /// `text` with every work file's path replaced by what it stands for, and any other path
  /// inside a scratch folder by "a private working copy".
  static func describe(_ text: String) -> String {
    guard text.contains(prefix) else { return text }
    var result = text
    for (path, label) in labels.all().sorted(by: { $0.key.count > $1.key.count }) {
      result = result.replacingOccurrences(of: path, with: label)
    }
    var searchFrom = result.startIndex
    while let start = result.range(of: prefix, range: searchFrom..<result.endIndex) {
      // A scratch folder's name is the prefix and a UUID; other folders keep their names.
      let name = result[start.upperBound...].prefix(36)
      guard name.count == 36, UUID(uuidString: String(name)) != nil else {
        searchFrom = start.upperBound
        continue
      }
      let end =
        result[start.upperBound...].firstIndex(where: { " ),;\n\"'".contains($0) })
        ?? result.endIndex
      result.replaceSubrange(start.lowerBound..<end, with: "a private working copy")
      searchFrom = result.startIndex
    }
    return result
  }

  /// The labels, shared by every thread.
  private final class Labels: @unchecked Sendable {
    private let lock = NSLock()
    private var byPath: [String: String] = [:]

    func set(_ label: String, for path: String) {
      lock.withLock { byPath[path] = label }
    }

    func remove(_ paths: [String]) {
      lock.withLock { for path in paths { byPath[path] = nil } }
    }

    func all() -> [String: String] {
      lock.withLock { byPath }
    }
  }
}
