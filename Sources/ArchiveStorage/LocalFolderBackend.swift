internal import Bytes
import DurableIO
import Foundation

/// Archives kept in a folder on this machine. New archives are written to a hidden temporary
/// file beside their final name, synced, and renamed into place (``PendingFile``); locks are
/// `flock(2)` locks on hidden lock files in the folder (``FileLock``).
public final class LocalFolderBackend: StorageBackend {
  /// The folder.
  public let folder: String

  /// The folder at `folder` (it need not exist until used).
  public init(folder: String) {
    self.folder = folder
  }

  /// The folder's path.
  public var location: String { folder }

  /// The path of `name` in the folder.
  public func path(of name: String) -> String {
    URL(fileURLWithPath: folder).appendingPathComponent(name).path
  }

  /// The archive's path.
  public func address(of name: String) -> String { path(of: name) }

  /// The `.gvault` files in the folder, with their sizes.
  public func list() throws(StorageError) -> [StoredArchive] {
    let names: [String]
    do {
      names = try FileManager.default.contentsOfDirectory(atPath: folder)
    } catch {
      throw StorageError(.notFound, "cannot list the folder (\(folder))")
    }
    return names.filter(ArchiveNaming.isArchive).map { name in
      let attributes = try? FileManager.default.attributesOfItem(atPath: path(of: name))
      return StoredArchive(
        name: name, size: (attributes?[.size] as? NSNumber)?.int64Value ?? 0)
    }
  }

  /// Whether the folder holds `name`.
  public func exists(_ name: String) -> Bool {
    FileManager.default.fileExists(atPath: path(of: name))
  }

  /// Opens `name` for reading with `read(2)`.
  public func openForReading(_ name: String) throws(StorageError) -> any ArchiveInput {
    try LocalInput(path: path(of: name))
  }

  /// A new file `name` (mode 0600: archives hold an app's private data), written beside its
  /// final name and moved into place when published; a file that appeared under the name
  /// meanwhile is never replaced.
  public func create(_ name: String) throws(StorageError) -> any ArchiveOutput {
    do {
      return LocalOutput(file: try PendingFile(creating: path(of: name), mode: 0o600))
    } catch {
      let denied = error.errno == EACCES || error.errno == EPERM
      throw StorageError(denied ? .denied : .io, error.description)
    }
  }

  /// Removes `name` from the folder.
  public func delete(_ name: String) throws(StorageError) {
    guard unlink(path(of: name)) == 0 else {
      let failure = DurableIOError("cannot remove", path: path(of: name), errno: errno)
      throw StorageError(failure.errno == ENOENT ? .notFound : .io, failure.description)
    }
  }

  /// An `flock(2)` lock on the hidden file `.NAME.lock` in the folder.
  public func lock(_ name: String, shared: Bool, wait: Double?) throws(StorageError)
    -> any StorageLock
  {
    let lockPath = path(of: ".\(name).lock")
    do {
      return LocalLock(try FileLock(path: lockPath, shared: shared, wait: wait))
    } catch {
      switch error {
      case .held(let holder):
        throw StorageError(.locked, "locked by another run (\(holder)) (\(lockPath))")
      case .io(let failure):
        let denied = failure.errno == EACCES || failure.errno == EPERM
        throw StorageError(
          denied ? .denied : .io,
          denied
            ? "this user may not write in the folder: \(failure.description) (the folder is \(FileOwnership.describe(folder)))"
            : failure.description)
      }
    }
  }
}

extension LocalFolderBackend {
  /// The hidden temporary files (`.NAME.tmp-UUID`, with their `-journal`, `-wal` and `-shm`)
  /// that no living run holds, with their sizes.
  public func leftovers() throws(StorageError) -> [StoredArchive] {
    guard FileManager.default.fileExists(atPath: folder) else {
      throw StorageError(.notFound, "no such folder (\(folder))")
    }
    return DurableFile.abandonedTemporaries(in: folder).map { path in
      let attributes = try? FileManager.default.attributesOfItem(atPath: path)
      return StoredArchive(
        name: URL(fileURLWithPath: path).lastPathComponent,
        size: (attributes?[.size] as? NSNumber)?.int64Value ?? 0)
    }
  }

  /// Removes a leftover temporary file.
  public func removeLeftover(_ name: String) throws(StorageError) {
    try delete(name)
  }
}

/// A file of the folder, read with `read(2)`.
private final class LocalInput: ArchiveInput {
  let path: String
  private let fd: Int32

  init(path: String) throws(StorageError) {
    self.path = path
    fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
      let failure = DurableIOError("cannot open", path: path, errno: errno)
      switch failure.errno {
      case ENOENT: throw StorageError(.notFound, failure.description)
      case EACCES, EPERM:
        throw StorageError(
          .unreadable,
          "the archive cannot be read: permission denied (\(path), \(FileOwnership.describe(path)))"
        )
      default: throw StorageError(.io, failure.description)
      }
    }
    var status = stat()
    if fstat(fd, &status) == 0 && (status.st_mode & S_IFMT) != S_IFREG {
      close(fd)
      let what = (status.st_mode & S_IFMT) == S_IFDIR ? "a folder" : "not a regular file"
      throw StorageError(.notAnArchive, "this is \(what), not an archive (\(path))")
    }
  }

  deinit { close(fd) }

  var size: Int64? {
    var status = stat()
    return fstat(fd, &status) == 0 ? Int64(status.st_size) : nil
  }

  func read(into buffer: UnsafeMutableRawBufferPointer) throws(StorageError) -> Int {
    while true {
      let count = Foundation.read(fd, buffer.baseAddress, buffer.count)
      if count >= 0 { return count }
      if errno == EINTR { continue }
      throw StorageError(.io, DurableIOError("cannot read", path: path, errno: errno).description)
    }
  }

  func read(at offset: Int64, count: Int) throws(StorageError) -> [UInt8] {
    var bytes: [UInt8] = []
    try read(at: offset, count: count, into: &bytes)
    return bytes
  }

  func read(at offset: Int64, count: Int, into bytes: inout [UInt8]) throws(StorageError) {
    // Zeroed in storage kept from the last read (no new pages), then filled in place.
    bytes.removeAll(keepingCapacity: true)
    bytes.appendZeros(count: count)
    var done = 0
    while done < bytes.count {
      let read = bytes.withUnsafeMutableBytes {
        pread(fd, $0.baseAddress! + done, $0.count - done, off_t(offset) + off_t(done))
      }
      if read == 0 { break }
      if read < 0 {
        if errno == EINTR { continue }
        throw StorageError(
          .io, DurableIOError("cannot read", path: path, errno: errno).description)
      }
      done += read
    }
    bytes.removeLast(bytes.count - done)
  }
}

/// A new file of the folder, published by rename.
private final class LocalOutput: ArchiveOutput {
  private let file: PendingFile

  init(file: PendingFile) { self.file = file }

  var location: String { file.path }

  func write(_ bytes: UnsafeRawBufferPointer) throws(StorageError) {
    do { try file.write(bytes) } catch { throw StorageError(.io, error.description) }
  }

  func publish() throws(StorageError) -> Int64 {
    do {
      try file.publish(replacing: false)
      return file.bytesWritten
    } catch {
      if error.errno == EEXIST {
        throw StorageError(.exists, "the archive exists already (\(file.path))")
      }
      throw StorageError(.io, error.description)
    }
  }

  func abandon() { file.abandon() }
}

/// A held ``FileLock``.
private final class LocalLock: StorageLock {
  private let lock: FileLock

  init(_ lock: FileLock) { self.lock = lock }

  func release() { lock.release() }
}
