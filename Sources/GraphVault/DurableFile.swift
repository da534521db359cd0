import Foundation

/// Writes a file so that a crash or a failure leaves either nothing or the whole file under the
/// final name: a temporary file beside it, `fsync`, `rename`, `fsync` of the folder.
enum DurableFile {
  /// A fresh temporary path beside `path` (hidden, unique).
  static func temporaryPath(beside path: String) -> String {
    let url = URL(fileURLWithPath: path)
    return url.deletingLastPathComponent()
      .appendingPathComponent(".\(url.lastPathComponent).tmp-\(UUID().uuidString)").path
  }

  /// Creates a temporary file beside `path`, lets `body` write it through its descriptor, then
  /// syncs it and moves it into place. On failure the temporary file is removed.
  static func write<R>(to path: String, _ body: (Int32) throws -> R) throws -> R {
    let temporary = temporaryPath(beside: path)
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      throw VaultError(.ioFailure, "cannot create \(temporary): \(lastError)")
    }
    var closed = false
    do {
      let result = try body(fd)
      guard fsync(fd) == 0 else {
        throw VaultError(.ioFailure, "fsync failed: \(lastError) (\(temporary))")
      }
      closed = true
      guard close(fd) == 0 else {
        throw VaultError(.ioFailure, "close failed: \(lastError) (\(temporary))")
      }
      try moveIntoPlace(temporary, as: path)
      return result
    } catch {
      if !closed { close(fd) }
      unlink(temporary)
      throw error
    }
  }

  /// Lets `body` build an SQLite store at a temporary path beside `path`, then syncs it and
  /// moves it into place, removing the sidecars (`-wal`, `-shm`, `-journal`) of the store it
  /// replaces. On failure the temporary store and its sidecars are removed and `path` is
  /// untouched.
  static func buildStore<R>(at path: String, _ body: (String) throws -> R) throws -> R {
    let temporary = temporaryPath(beside: path)
    do {
      let result = try body(temporary)
      // A replaced store's sidecars belong to the old file.
      for suffix in ["-wal", "-shm", "-journal"] {
        try? FileManager.default.removeItem(atPath: path + suffix)
      }
      try publish(temporary, as: path)
      return result
    } catch {
      for suffix in ["", "-wal", "-shm", "-journal"] {
        try? FileManager.default.removeItem(atPath: temporary + suffix)
      }
      throw error
    }
  }

  /// Syncs a finished temporary file and moves it into place as `path`.
  static func publish(_ temporary: String, as path: String) throws {
    let fd = open(temporary, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw VaultError(.ioFailure, "cannot open \(temporary): \(lastError)") }
    let synced = fsync(fd) == 0
    close(fd)
    guard synced else { throw VaultError(.ioFailure, "fsync failed: \(lastError) (\(temporary))") }
    try moveIntoPlace(temporary, as: path)
  }

  /// Renames `temporary` to `path` and syncs the folder, so the rename itself is durable.
  private static func moveIntoPlace(_ temporary: String, as path: String) throws {
    guard rename(temporary, path) == 0 else {
      throw VaultError(.ioFailure, "cannot move \(temporary) into place: \(lastError) (\(path))")
    }
    let folder = open(URL(fileURLWithPath: path).deletingLastPathComponent().path, O_RDONLY)
    if folder >= 0 {
      fsync(folder)
      close(folder)
    }
  }

  private static var lastError: String { String(cString: strerror(errno)) }
}
