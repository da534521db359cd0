import Foundation

/// Where a store can be read without writing anything beside it: its own path, or a private
/// copy for the one case SQLite cannot read in place.
///
/// A reader of a WAL store needs its `-shm`, and creates it when it is missing; on a read-only
/// mount or snapshot that holds a `-wal` but no `-shm`, it cannot, and SQLite refuses to open
/// the store (ignoring the `-wal`, as `immutable=1` would, would lose every transaction not yet
/// checkpointed). There the store and its `-wal` are copied into a private folder (0700,
/// removed with this value) and read from the copy: every committed transaction, nothing
/// written beside the source.
final class ReadableStore {
  /// The path to open.
  let path: String
  /// The copy's folder, when the store is read from a copy.
  private let scratch: ScratchFolder?

  /// The readable path of the store at `source`.
  /// - Throws: what copying throws (a full temporary folder).
  init(_ source: String) throws {
    guard Self.needsCopy(source) else {
      path = source
      scratch = nil
      return
    }
    let folder = try ScratchFolder()
    let copy = folder.path(URL(fileURLWithPath: source).lastPathComponent)
    for suffix in ["", "-wal"] where suffix.isEmpty || Self.exists(source + suffix) {
      try FileManager.default.copyItem(atPath: source + suffix, toPath: copy + suffix)
    }
    path = copy
    scratch = folder
  }

  /// Whether the store at `path` is a WAL store (by its `-wal`, or by its header when it has
  /// none) whose `-shm` is missing in a folder that cannot take one.
  static func needsCopy(_ path: String) -> Bool {
    let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
    return (exists(path + "-wal") || isWriteAheadLogged(path)) && !exists(path + "-shm")
      && access(folder, W_OK) != 0
  }

  private static func exists(_ path: String) -> Bool {
    FileManager.default.fileExists(atPath: path)
  }

  /// Whether the database header at `path` says WAL (its read and write versions, bytes 18
  /// and 19, are 2).
  private static func isWriteAheadLogged(_ path: String) -> Bool {
    guard let handle = FileHandle(forReadingAtPath: path) else { return false }
    defer { try? handle.close() }
    guard let header = try? handle.read(upToCount: 20), header.count == 20 else { return false }
    return header[header.startIndex + 18] == 2 && header[header.startIndex + 19] == 2
  }
}
