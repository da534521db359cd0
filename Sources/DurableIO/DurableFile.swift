import Foundation

/// Writes files so that a crash or a failure leaves either nothing or the whole file under the
/// final name: a temporary file beside it, `fsync`, `rename`, `fsync` of the folder.
///
/// Temporary files are hidden and named `.NAME.tmp-UUID` beside their destination.
/// A file written as a stream goes through ``PendingFile``.
public enum DurableFile {
  /// The marker between a destination's name and the random part of its temporary files.
  static let temporaryMarker = ".tmp-"

  /// A fresh temporary path beside `path` (hidden, unique).
  public static func temporaryPath(beside path: String) -> String {
    let url = URL(fileURLWithPath: path)
    return url.deletingLastPathComponent()
      .appendingPathComponent(".\(url.lastPathComponent)\(temporaryMarker)\(UUID().uuidString)")
      .path
  }

  /// Lets `body` build an SQLite database at a temporary path beside `path`, then syncs it and
  /// moves it into place, removing the sidecars (`-wal`, `-shm`, `-journal`) of the database it
  /// replaces. On failure the temporary database and its sidecars are removed and `path` is
  /// untouched.
  /// - Throws: ``DurableIOError``, or what `body` throws.
  public static func buildDatabase<R>(at path: String, _ body: (String) throws -> R) throws -> R {
    let temporary = temporaryPath(beside: path)
    do {
      let result = try body(temporary)
      // A replaced database's sidecars belong to the old file.
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
  /// - Throws: ``DurableIOError``.
  public static func publish(_ temporary: String, as path: String) throws(DurableIOError) {
    try sync(temporary)
    try moveIntoPlace(temporary, as: path)
  }

  /// `fsync` of a file or folder, so that what was written (or renamed in it) is on disk.
  /// - Throws: ``DurableIOError``.
  public static func sync(_ path: String) throws(DurableIOError) {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw DurableIOError("cannot open", path: path, errno: errno) }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw DurableIOError("fsync failed", path: path, errno: errno) }
  }

  /// Renames `temporary` to `path` and syncs the folder, so the rename itself is durable.
  static func moveIntoPlace(_ temporary: String, as path: String) throws(DurableIOError) {
    guard rename(temporary, path) == 0 else {
      throw DurableIOError("cannot move \(temporary) into place as", path: path, errno: errno)
    }
    let folder = open(URL(fileURLWithPath: path).deletingLastPathComponent().path, O_RDONLY)
    if folder >= 0 {
      fsync(folder)
      close(folder)
    }
  }
}
