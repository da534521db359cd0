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
  /// moves it into place. On failure the temporary database and its sidecars are removed and
  /// `path` is untouched.
  ///
  /// A database already at `path` stays whole, its sidecars (`-wal`, `-shm`, `-journal`)
  /// included, until the new one is in place: `beforeReplacing` is called with its path first
  /// (to fold its journal into its main file, so that its sidecars hold nothing it needs), the
  /// new file takes its mode and, where allowed, its owner, the rename replaces it in one step,
  /// and only then are the old sidecars removed (they would otherwise be read as the new
  /// file's).
  /// - Throws: ``DurableIOError``, or what `body` or `beforeReplacing` throws.
  ///
  /// The temporary file is created (empty, mode 0644 less the umask, as SQLite makes them, or
  /// the mode of the store it replaces) and locked before `body` runs, so ``abandonedTemporaries(in:of:)`` never takes it for a dead
  /// run's leftover.
  public static func buildDatabase<R>(
    at path: String, beforeReplacing: ((String) throws -> Void)? = nil,
    _ body: (String) throws -> R
  ) throws -> R {
    let temporary = temporaryPath(beside: path)
    // A store replacing another is never readable by more users than the old one, not even
    // while it is written (SQLite gives its journals the main file's mode).
    var existing = stat()
    let mode = stat(path, &existing) == 0 ? existing.st_mode & 0o777 : 0o644
    let fd = try createLocked(temporary, mode: mode)
    defer { close(fd) }
    do {
      let result = try body(temporary)
      var old = stat()
      let replacing = stat(path, &old) == 0
      if replacing {
        try beforeReplacing?(path)
        chmod(temporary, old.st_mode & 0o7777)
        // Only root may give a file away; others keep their own, as a copy would.
        _ = chown(temporary, old.st_uid, old.st_gid)
      }
      try publish(temporary, as: path)
      if replacing {
        for suffix in ["-wal", "-shm", "-journal"] { unlink(path + suffix) }
      }
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

  /// Renames `temporary` to `path` and syncs the folder, so the rename itself is durable. When
  /// not `replacing`, a file at `path` stays and the move fails with `EEXIST` (a hard link,
  /// then the temporary name is removed: no window where either is missing).
  static func moveIntoPlace(_ temporary: String, as path: String, replacing: Bool = true)
    throws(DurableIOError)
  {
    if replacing {
      guard rename(temporary, path) == 0 else {
        throw DurableIOError("cannot move \(temporary) into place as", path: path, errno: errno)
      }
    } else {
      guard link(temporary, path) == 0 else {
        throw DurableIOError("cannot move \(temporary) into place as", path: path, errno: errno)
      }
      unlink(temporary)
    }
    let folder = open(URL(fileURLWithPath: path).deletingLastPathComponent().path, O_RDONLY)
    if folder >= 0 {
      fsync(folder)
      close(folder)
    }
  }

  /// Creates `path` (which must not exist) with `mode` and takes an exclusive `flock(2)` lock
  /// on it, held as long as the returned descriptor is open.
  /// - Throws: ``DurableIOError``.
  static func createLocked(_ path: String, mode: mode_t) throws(DurableIOError) -> Int32 {
    let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode)
    guard fd >= 0 else { throw DurableIOError("cannot create", path: path, errno: errno) }
    flock(fd, LOCK_EX | LOCK_NB)
    return fd
  }

  /// The temporary files in `folder` (of the destination `name` only, when given) that no
  /// living run holds: what runs killed mid-write left behind, with the sidecars (`-journal`,
  /// `-wal`, `-shm`) of their databases. A file whose writer is alive is never listed.
  public static func abandonedTemporaries(in folder: String, of name: String? = nil) -> [String] {
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
      return []
    }
    let prefix = name.map { ".\($0)\(temporaryMarker)" }
    var found: [String] = []
    for entry in names.sorted() where entry.hasPrefix(".") && entry.contains(temporaryMarker) {
      if let prefix, !entry.hasPrefix(prefix) { continue }
      let path = URL(fileURLWithPath: folder).appendingPathComponent(entry).path
      let sidecar = ["-journal", "-wal", "-shm"].first { entry.hasSuffix($0) }
      if let sidecar {
        // A sidecar goes with its database: left when the database is abandoned or gone.
        let main = String(path.dropLast(sidecar.count))
        if !FileManager.default.fileExists(atPath: main) || FileLock.isUnheld(main) {
          found.append(path)
        }
      } else if FileLock.isUnheld(path) {
        found.append(path)
      }
    }
    return found
  }
}
