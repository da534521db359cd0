import Foundation

/// A lock held through `flock(2)` on a lock file, so the kernel releases it when its holder
/// exits, however it exits (`kill -9` included): no stale lock ever blocks the next run.
///
/// Exclusive locks keep out every other taker; shared locks keep out only exclusive ones (many
/// backups write into one folder while a prune of it waits). The holder writes its process id,
/// host and start time into the file, so a refused run can name who holds it.
///
/// The last holder removes the lock file when it lets go, so that nothing is left beside what
/// the lock guarded (an archive written into a test's fixtures folder, say): an exclusive
/// holder always, a shared one when it can take the lock alone, which it can only when no one
/// else holds it. That is safe because every taker checks, once it holds the lock, that the
/// file it locked is still the one at the path, and starts again when it is not.
///
/// ```swift
/// let lock = try FileLock(path: "/backups/.graphvault.lock", wait: 30)
/// defer { lock.release() }
/// ```
public final class FileLock: @unchecked Sendable {
  /// Who holds a lock, as its holder wrote it.
  public struct Holder: Sendable, Equatable, CustomStringConvertible {
    /// The holder's process id.
    public let pid: Int32?
    /// The holder's host name.
    public let host: String?
    /// When the holder took the lock (ISO 8601, UTC).
    public let since: String?

    /// "pid 123 on host since 2026-11-22T03:00:00Z", with what is known.
    public var description: String {
      var parts: [String] = []
      if let pid { parts.append("pid \(pid)") }
      if let host { parts.append("on \(host)") }
      if let since { parts.append("since \(since)") }
      return parts.isEmpty ? "another run" : parts.joined(separator: " ")
    }
  }

  /// Taking the lock failed: another run holds it (``Failure/held(_:)``), or the file could not
  /// be opened.
  public enum Failure: Error, Sendable, CustomStringConvertible {
    /// Another run holds the lock (and still held it when the wait ran out).
    case held(Holder)
    /// The lock file could not be opened or locked.
    case io(DurableIOError)

    /// A sentence naming the holder or the failure.
    public var description: String {
      switch self {
      case .held(let holder): return "locked by \(holder)"
      case .io(let error): return error.description
      }
    }
  }

  /// The lock file.
  public let path: String
  /// Whether other shared holders may hold it at the same time.
  public let shared: Bool
  /// Guarded by `guardian` once the initializer has returned.
  private var fd: Int32
  private let guardian = NSLock()

  /// Takes the lock on `path` (created if missing, mode 0600), waiting up to `wait` seconds
  /// for other holders to let go; when nil or 0, for ``releaseGrace`` only.
  /// - Parameter shared: take a shared lock (held by many at once) instead of an exclusive one.
  /// - Throws: ``Failure``.
  public init(path: String, shared: Bool = false, wait: Double? = nil) throws(Failure) {
    self.path = path
    self.shared = shared
    let deadline = Date().addingTimeInterval(max(Self.releaseGrace, wait ?? 0))
    while true {
      let fd = try Self.openLockFile(path)
      while flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0 {
        let reason = errno
        guard reason == EWOULDBLOCK || reason == EINTR else {
          close(fd)
          throw .io(DurableIOError("cannot lock", path: path, errno: reason))
        }
        guard Date() < deadline else {
          let holder = Self.holder(of: fd)
          close(fd)
          throw .held(holder)
        }
        usleep(50_000)
      }
      // The previous holder may have removed the file between our open and our lock: then we
      // hold a lock nobody else can see, and must take the one at the path instead.
      if Self.isStillAtPath(fd, path) {
        self.fd = fd
        break
      }
      close(fd)
    }
    Self.record(in: fd)
  }

  /// Opens (creating it, mode 0600, when missing) the lock file at `path`, which must be what
  /// graphvault makes: a plain file with one name. A symbolic link is never followed, and a
  /// hard link, a device or a pipe is refused, so that a file planted under the lock's name
  /// in a shared folder can never make a run write to (or block on) a file that is not its
  /// own.
  private static func openLockFile(_ path: String) throws(Failure) -> Int32 {
    var fd: Int32
    var status = stat()
    repeat {
      fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
      guard fd >= 0 else {
        let reason = errno
        throw .io(
          DurableIOError(
            "cannot open the lock file", path: path, errno: reason,
            explanation: reason == ELOOP
              ? "it is a symbolic link, which graphvault never makes (planted?): remove it" : nil))
      }
      guard fstat(fd, &status) == 0, status.st_nlink == 0 else { break }
      // The last holder removed the file between our open and our look at it: it has no name
      // left, and the one at the path (if any) is another.
      close(fd)
    } while true
    guard status.st_mode & S_IFMT == S_IFREG, status.st_nlink == 1 else {
      close(fd)
      throw .io(
        DurableIOError(
          "cannot use the lock file", path: path, errno: EEXIST,
          explanation:
            "it is not a plain file with one name, as graphvault makes them (a hard link, a device or a pipe, planted?): remove it"
        ))
    }
    return fd
  }

  /// How long a taker that is told not to wait still tries: a shared holder letting go holds
  /// the lock alone for the instant it takes to remove the file, and a shared taker arriving
  /// then must not be refused as if a run held it.
  public static let releaseGrace = 0.5

  deinit { release() }

  /// Lets go of the lock (also done when the lock is released from memory or the process ends);
  /// the last holder removes the lock file first.
  public func release() {
    guardian.withLock {
      guard fd >= 0 else { return }
      // A shared holder takes the lock alone only when no one else holds it. flock(2) drops
      // the shared lock before trying, so a refusal just lets go, and the file stays for the
      // others (the last of whom removes it).
      if !shared || flock(fd, LOCK_EX | LOCK_NB) == 0 { unlink(path) }
      flock(fd, LOCK_UN)
      close(fd)
      fd = -1
    }
  }

  /// Whether no process holds an `flock(2)` lock on the file at `path` (so a temporary file
  /// whose writer locks it while writing has been left by a run that is gone).
  /// - Returns: `false` when it is held, or cannot be opened.
  public static func isUnheld(_ path: String) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return flock(fd, LOCK_EX | LOCK_NB) == 0
  }

  private static func isStillAtPath(_ fd: Int32, _ path: String) -> Bool {
    var opened = stat()
    var named = stat()
    guard fstat(fd, &opened) == 0, stat(path, &named) == 0 else { return false }
    return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
  }

  private static func record(in fd: Int32) {
    var host = [CChar](repeating: 0, count: 256)
    gethostname(&host, host.count - 1)
    let line = "\(getpid()) \(String(cString: host)) \(utcTimestamp())\n"
    // Shared holders overwrite one another's line: a refused taker names the latest of them.
    // A file holding anything else was not written by a run: it is left as it is.
    var status = stat()
    guard fstat(fd, &status) == 0, status.st_size == 0 || holder(of: fd).pid != nil else {
      return
    }
    ftruncate(fd, 0)
    _ = line.utf8CString.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count - 1, 0) }
  }

  /// Now as ISO 8601 in UTC (`2026-11-28T07:32:14Z`), as `ISO8601DateFormatter` gives it,
  /// without making one (which took milliseconds, for every lock).
  static func utcTimestamp(_ seconds: time_t = time(nil)) -> String {
    var now = seconds
    var parts = tm()
    gmtime_r(&now, &parts)
    var text = [CChar](repeating: 0, count: 32)
    let count = strftime(&text, text.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
    return String(decoding: text.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  private static func holder(of fd: Int32) -> Holder {
    var buffer = [UInt8](repeating: 0, count: 512)
    let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
    let text = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : ""
    let parts = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    return Holder(
      pid: parts.first.flatMap { Int32($0) }, host: parts.count > 1 ? parts[1] : nil,
      since: parts.count > 2 ? parts[2] : nil)
  }
}
