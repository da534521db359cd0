import DurableIO
import Foundation

/// A private folder (mode 0700) under the system's temporary folder for a command's work
/// files, removed with this value.
///
/// A work file stands for something the user named (``path(_:standingFor:)``): messages name
/// that instead of the private file (``describe(_:)``), so no message sends a user looking
/// for a file that is gone.
///
/// A run that is killed cannot remove its folder, so every folder holds a lock on a file of
/// its own (`.owner`, through `flock(2)`, which the kernel lets go of however the run ends).
/// The first scratch folder a run makes removes the folders of runs that are gone
/// (``sweepAbandoned(in:now:)``), and a run stopped by a signal it can catch removes its own
/// first (``removeEveryLive()``).
package final class ScratchFolder {
  /// The folder.
  package let url: URL
  /// The files registered with a label, to forget with the folder.
  private var labelled: [String] = []
  /// The folder's owner lock, held as long as this value.
  private let owner: FileLock

  /// What each registered work file stands for, by path.
  private static let labels = Labels()

  /// The kinds of scratch folder made besides the plain one: each is named
  /// `graphvault-KIND-UUID`, and the sweep knows them all.
  package enum Kind: String, CaseIterable, Sendable {
    /// A test suite's fixture store (`TemporaryStore`).
    case fixture
  }

  /// How every scratch folder's name begins.
  static let namePrefix = "graphvault-"

  /// The prefix of every scratch folder's path.
  static let prefix = FileManager.default.temporaryDirectory.appendingPathComponent(namePrefix)
    .path

  /// The name of the file whose lock says the folder's run is alive.
  package static let ownerFile = ".owner"

  /// Folders of runs that are gone are removed once per process, when its first folder is made.
  private static let swept: Void = {
    sweepAbandoned(in: FileManager.default.temporaryDirectory)
  }()

  /// Creates the folder, `graphvault-UUID` or, with a `kind`, `graphvault-KIND-UUID`.
  /// - Throws: what creating it or taking its owner lock throws.
  package init(kind: Kind? = nil) throws {
    Self.swept
    let name = Self.namePrefix + (kind.map { $0.rawValue + "-" } ?? "") + UUID().uuidString
    url = FileManager.default.temporaryDirectory.appendingPathComponent(name)
    // Counted live before it exists, so that a signal at any moment after finds it.
    guard Self.live.insert(url.path) else { throw CocoaError(.userCancelled) }
    do {
      try FileManager.default.createDirectory(
        at: url, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
      owner = try FileLock(path: url.appendingPathComponent(Self.ownerFile).path)
    } catch {
      Self.live.remove(url.path)
      try? FileManager.default.removeItem(at: url)
      throw error
    }
  }

  deinit {
    Self.labels.remove(labelled)
    Self.live.remove(url.path)
    try? FileManager.default.removeItem(at: url)
    owner.release()
  }

  /// The folders of this process that have not been removed yet.
  private static let live = LivePaths()

  /// Removes every scratch folder this process still has, and refuses to make more: for a run
  /// about to end by a signal (SIGINT, SIGTERM), which skips every `deinit`. Their owners must
  /// not be used after.
  package static func removeEveryLive() {
    for path in live.close() { removeInUse(path) }
  }

  /// Removes the folder at `path` while the run's other threads may still be making and
  /// removing files in it by path (a removal that meets an entry made or gone meanwhile
  /// fails and leaves the folder): renamed first, under another scratch folder's name beside
  /// it, so that nothing new can be made in it, then removed, again while entries made before
  /// the rename still keep it. What is left despite that goes to the next run's sweep.
  package static func removeInUse(_ path: String) {
    let parent = URL(fileURLWithPath: path).deletingLastPathComponent()
    let doomed = parent.appendingPathComponent(namePrefix + UUID().uuidString).path
    let target = rename(path, doomed) == 0 ? doomed : path
    for _ in 0..<4 {
      try? FileManager.default.removeItem(atPath: target)
      if access(target, F_OK) != 0 { return }
    }
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

  /// The paths of the live folders, shared by every thread.
  private final class LivePaths: @unchecked Sendable {
    private let lock = NSLock()
    private var paths: Set<String> = []
    private var closed = false

    /// Adds `path`; false once ``close()`` has been called.
    func insert(_ path: String) -> Bool {
      lock.withLock {
        guard !closed else { return false }
        paths.insert(path)
        return true
      }
    }

    func remove(_ path: String) { _ = lock.withLock { paths.remove(path) } }

    /// Every path, taking no more from now on.
    func close() -> Set<String> {
      lock.withLock {
        closed = true
        defer { paths = [] }
        return paths
      }
    }
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
