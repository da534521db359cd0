import Foundation

/// A file being written under a temporary name beside its destination, invisible under the final
/// name until ``publish()`` syncs it and renames it into place. ``abandon()`` (or a failed
/// publish) removes it; a killed process leaves only the hidden temporary file, which
/// ``DurableFile/abandonedTemporaries(in:of:)`` finds: the writer holds an `flock(2)` lock on it
/// while it lives.
///
/// ```swift
/// let file = try PendingFile(creating: "/backups/a.gvault", mode: 0o600)
/// try file.write(bytes)
/// try file.publish()
/// ```
public final class PendingFile {
  /// The final path.
  public let path: String
  /// The temporary path the bytes go to until published.
  public let temporaryPath: String
  private var fd: Int32
  private var published = false
  /// Bytes written so far.
  public private(set) var bytesWritten: Int64 = 0

  /// Creates the temporary file beside `path` with `mode` (the final name is not touched) and
  /// locks it, so that nobody takes it for a dead run's leftover.
  /// - Throws: ``DurableIOError`` when the folder does not take the file.
  public init(creating path: String, mode: mode_t = 0o600) throws(DurableIOError) {
    self.path = path
    temporaryPath = DurableFile.temporaryPath(beside: path)
    fd = try DurableFile.createLocked(temporaryPath, mode: mode)
    // open(2) applies the umask; the mode asked for is the mode the file gets.
    fchmod(fd, mode)
  }

  deinit { abandon() }

  /// Appends `bytes`.
  /// - Throws: ``DurableIOError`` (a full disk is `ENOSPC`).
  public func write(_ bytes: UnsafeRawBufferPointer) throws(DurableIOError) {
    guard fd >= 0 else {
      throw DurableIOError("write after close", path: temporaryPath, errno: EBADF)
    }
    var remaining = bytes
    while !remaining.isEmpty {
      let written = Foundation.write(fd, remaining.baseAddress, remaining.count)
      if written < 0 {
        if errno == EINTR { continue }
        throw DurableIOError("cannot write", path: temporaryPath, errno: errno)
      }
      bytesWritten += Int64(written)
      remaining = UnsafeRawBufferPointer(rebasing: remaining[written...])
    }
  }

  /// Syncs the file and moves it to ``path``, then syncs the folder. On failure the temporary
  /// file is removed.
  /// - Parameter replacing: whether a file already at ``path`` is replaced; when `false`, a
  ///   file that appeared there meanwhile is kept and the publish fails with `EEXIST`.
  /// - Throws: ``DurableIOError``.
  public func publish(replacing: Bool = true) throws(DurableIOError) {
    guard fd >= 0 else {
      throw DurableIOError("publish after close", path: temporaryPath, errno: EBADF)
    }
    do throws(DurableIOError) {
      guard fsync(fd) == 0 else {
        throw DurableIOError("fsync failed", path: temporaryPath, errno: errno)
      }
      let closing = fd
      fd = -1
      guard close(closing) == 0 else {
        throw DurableIOError("close failed", path: temporaryPath, errno: errno)
      }
      try DurableFile.moveIntoPlace(temporaryPath, as: path, replacing: replacing)
      published = true
    } catch {
      abandon()
      throw error
    }
  }

  /// Closes and removes the temporary file, if it is still there; the final name is untouched.
  public func abandon() {
    if fd >= 0 {
      close(fd)
      fd = -1
    }
    if !published { unlink(temporaryPath) }
  }
}
