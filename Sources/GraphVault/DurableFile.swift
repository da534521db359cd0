import Foundation

/// Writes a file so that a crash or a failure leaves either nothing or the whole file under the
/// final name: a temporary file beside it, `fsync`, `rename`, `fsync` of the folder.
enum DurableFile {
  static func write<R>(to path: String, _ body: (Int32) throws -> R) throws -> R {
    let url = URL(fileURLWithPath: path)
    let folder = url.deletingLastPathComponent().path
    let temporary = url.deletingLastPathComponent()
      .appendingPathComponent(".\(url.lastPathComponent).tmp-\(UUID().uuidString)").path
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      throw VaultError(
        .ioFailure, "cannot create \(temporary): \(String(cString: strerror(errno)))")
    }
    var closed = false
    do {
      let result = try body(fd)
      guard fsync(fd) == 0 else {
        throw VaultError(
          .ioFailure, "fsync failed: \(String(cString: strerror(errno))) (\(temporary))")
      }
      closed = true
      guard close(fd) == 0 else {
        throw VaultError(
          .ioFailure, "close failed: \(String(cString: strerror(errno))) (\(temporary))")
      }
      guard rename(temporary, path) == 0 else {
        throw VaultError(
          .ioFailure,
          "cannot move the archive into place: \(String(cString: strerror(errno))) (\(path))")
      }
      let folderFD = open(folder, O_RDONLY)
      if folderFD >= 0 {
        fsync(folderFD)
        close(folderFD)
      }
      return result
    } catch {
      if !closed { close(fd) }
      unlink(temporary)
      throw error
    }
  }
}
