import DurableIO
import Foundation

/// A store about to be written by a restore or an import: one writer at a time per destination
/// (a lock file `.NAME.lock` beside it), what killed writers left removed, and an existing
/// store replaced only when asked.
struct StoreDestination {
  /// The lock, held until ``release()``.
  private let lock: FileLock

  /// Claims `destination` for `what` (`restore`, `import`).
  /// - Parameters:
  ///   - force: whether an existing store may be replaced.
  ///   - wait: how long to wait for another writer, in seconds (nil: fail at once).
  /// - Throws: ``VaultError``: locked (75) when another writer holds it, destination exists
  ///   (73) unless `force`.
  init(_ destination: String, for what: String, force: Bool, wait: Double?) throws {
    let url = URL(fileURLWithPath: destination)
    let folder = url.deletingLastPathComponent()
    do throws(FileLock.Failure) {
      lock = try FileLock(
        path: folder.appendingPathComponent(".\(url.lastPathComponent).lock").path, wait: wait)
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
    if FileManager.default.fileExists(atPath: destination) && !force {
      lock.release()
      throw VaultError(
        .destinationExists, "the store exists (use --force to replace it) (\(destination))")
    }
  }

  /// Lets the next writer in.
  func release() { lock.release() }
}
