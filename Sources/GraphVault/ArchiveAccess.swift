import ArchiveFormat
import ArchiveStorage
import Foundation
import LibArchive

/// Archives named by the paths users give (`-` for standard input), reached through their
/// storage backend.
enum ArchiveAccess {
  /// The backend and name of the archive at `path` (a file on this machine).
  static func locate(_ path: String) -> (backend: LocalFolderBackend, name: String) {
    let url = URL(fileURLWithPath: path)
    return (LocalFolderBackend(folder: url.deletingLastPathComponent().path), url.lastPathComponent)
  }

  /// Whether `path` names standard input or output.
  static func isStandardStream(_ path: String) -> Bool { path == StandardStream.name }

  /// A reader of the archive at `path`, streamed from its backend (or standard input).
  /// - Throws: ``StorageError`` or ``ArchiveError``.
  static func reader(_ path: String) throws -> ArchiveReader {
    let input: any ArchiveInput
    if isStandardStream(path) {
      input = StandardStream.input()
    } else {
      let (backend, name) = locate(path)
      input = try backend.openForReading(name)
    }
    return try ArchiveReader(name: displayName(path)) { buffer in try input.read(into: buffer) }
  }

  /// What messages call the archive at `path`.
  static func displayName(_ path: String) -> String {
    isStandardStream(path) ? "standard input" : path
  }

  /// The members of the archive at `path`, opened with the password from `password` when the
  /// archive is sealed (the password is read only then).
  static func members(_ path: String, password: PasswordSource?) throws -> MemberStream {
    MemberStream(reader: try reader(path), name: displayName(path)) { () throws -> [UInt8]? in
      try password?.read()
    }
  }

  /// Throws ``VaultError/Kind/inputMissing`` unless `path` is standard input or an existing
  /// file.
  static func requireInput(_ path: String) throws(VaultError) {
    guard isStandardStream(path) || FileManager.default.fileExists(atPath: path) else {
      throw VaultError(.inputMissing, "no archive at this path (\(path))")
    }
  }
}
