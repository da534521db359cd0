import ArchiveStorage
import Foundation
import LibArchive

/// Archives named by the paths users give, reached through their storage backend.
enum ArchiveAccess {
  /// The backend and name of the archive at `path` (a file on this machine).
  static func locate(_ path: String) -> (backend: LocalFolderBackend, name: String) {
    let url = URL(fileURLWithPath: path)
    return (LocalFolderBackend(folder: url.deletingLastPathComponent().path), url.lastPathComponent)
  }

  /// A reader of the archive at `path`, streamed from its backend.
  /// - Throws: ``StorageError`` or ``ArchiveError``.
  static func reader(_ path: String) throws -> ArchiveReader {
    let (backend, name) = locate(path)
    let input = try backend.openForReading(name)
    return try ArchiveReader(name: path) { buffer in try input.read(into: buffer) }
  }
}
