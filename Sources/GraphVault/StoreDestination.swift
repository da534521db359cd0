import ArchiveStorage
import DurableIO
import Foundation
import ObjectStore

/// A store about to be written by a restore or an import: one writer at a time per destination
/// (a lock file `.NAME.lock` beside it), what killed writers left removed, and an existing
/// store replaced only when asked.
struct StoreDestination {
  /// The lock, held until ``release()``.
  private let lock: FileLock

  /// Claims `destination` for `what` (`restore`, `import`), which reads the file `source` (nil:
  /// no file of this machine).
  /// - Parameters:
  ///   - force: whether an existing store may be replaced.
  ///   - wait: how long to wait for another writer, in seconds (nil: fail at once).
  /// - Throws: ``VaultError``: usage (64) when the destination is the file being read (a
  ///   `--force` would replace the only copy), locked (75) when another writer holds it,
  ///   destination exists (73) unless `force`, locked (75) when the store to replace is open
  ///   in another process (``StoreUsers``) after `wait`.
  init(
    _ destination: String, for what: String, reading source: String?, force: Bool, wait: Double?
  ) throws {
    if let source, Self.sameFile(source, destination) {
      throw VaultError(
        .usage,
        "the destination is the file being read: the \(what) would replace it (\(destination))")
    }
    let url = URL(fileURLWithPath: destination)
    let folder = url.deletingLastPathComponent()
    do throws(FileLock.Failure) {
      lock = try FileLock(path: Self.lockPath(of: destination), wait: wait)
    } catch {
      switch error {
      case .held(let holder):
        throw VaultError(
          .locked, "another \(what) to this store is running (\(holder)) (\(destination))")
      case .io(let failure): throw failure
      }
    }
    for leftover in DurableFile.abandonedTemporaries(in: folder.path, of: url.lastPathComponent) {
      unlink(leftover)
    }
    if FileManager.default.fileExists(atPath: destination) {
      guard force else {
        lock.release()
        throw VaultError(
          .destinationExists, "the store exists (use --force to replace it) (\(destination))")
      }
      // Refused before the work, not only at the move that ends it.
      do {
        try StoreUsers.requireNone(of: destination, before: "replace", wait: wait ?? 0)
      } catch {
        lock.release()
        throw error
      }
    }
  }

  /// The lock file of writers to `destination`: `.NAME.lock` beside it.
  static func lockPath(of destination: String) -> String {
    let url = URL(fileURLWithPath: destination)
    return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).lock")
      .path
  }

  /// Removes what killed writers of `destination` left beside it (hidden temporary stores
  /// and their journals, and the lock file when no one holds it), for a run that changes the
  /// store without claiming it as a destination (`migrate` finding it migrated already).
  static func removeLeftovers(of destination: String) {
    let url = URL(fileURLWithPath: destination)
    for leftover in DurableFile.abandonedTemporaries(
      in: url.deletingLastPathComponent().path, of: url.lastPathComponent)
    {
      unlink(leftover)
    }
    // Taken and let go, a lock file no one holds is removed; a held one stays its holder's.
    let lock = lockPath(of: destination)
    if FileManager.default.fileExists(atPath: lock) { (try? FileLock(path: lock))?.release() }
  }

  /// Whether `a` and `b` name one existing file (links followed); `-` names what standard
  /// input reads, when that is a file.
  static func sameFile(_ a: String, _ b: String) -> Bool {
    var first = stat()
    var second = stat()
    guard status(of: a, &first), status(of: b, &second) else { return false }
    return first.st_dev == second.st_dev && first.st_ino == second.st_ino
  }

  private static func status(of path: String, _ status: inout stat) -> Bool {
    path == StandardStream.name ? fstat(STDIN_FILENO, &status) == 0 : stat(path, &status) == 0
  }

  /// Lets the next writer in.
  func release() { lock.release() }
}
