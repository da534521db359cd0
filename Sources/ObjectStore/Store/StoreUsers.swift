import Foundation

/// The other processes that have a store open: an app whose SQLite connection is open, even
/// idle. A store must never be replaced by another file under such a connection: the app would
/// go on committing to the old file, unlinked, and lose every later write without an error.
///
/// Two ways of seeing them, together:
/// - **Open descriptors** (`/proc/PID/fd`): any process that has the store, its `-wal`, `-shm`
///   or `-journal` open, in whatever journal mode, idle or not. Linux shows a process's
///   descriptors to its own user and to root.
/// - **SQLite's locks**, which any user can test: every connection to a WAL store holds a read
///   lock on its shared-memory file's "dead man's switch" byte for as long as it is open, and a
///   connection in a transaction holds the database's lock bytes. Testing them needs a
///   descriptor of ours on the file, and closing it would drop every POSIX lock this process
///   holds on that file (its own connections' included), so they are tested only when this
///   process has the file open nowhere else.
package enum StoreUsers {
  /// A process that has a store open.
  package struct User: Sendable, Equatable, CustomStringConvertible {
    /// Its process id.
    package let pid: Int32
    /// Its command name (`/proc/PID/comm`), when it can be read.
    package let command: String?

    /// "pid 1234 (python3)".
    package var description: String {
      command.map { "pid \(pid) (\($0))" } ?? "pid \(pid)"
    }
  }

  /// The offset of SQLite's lock bytes in a database file (the "pending byte"), the reserved
  /// byte after it and the 510 shared bytes after that.
  static let databaseLockBytes: (start: off_t, count: off_t) = (0x4000_0000, 512)
  /// The byte of a WAL store's `-shm` file that every open connection holds a read lock on.
  static let sharedMemoryDeadMansSwitch: off_t = 128

  /// The processes other than this one that have the store at `path` (or its sidecars) open,
  /// by process id; empty when there are none, or the store does not exist.
  package static func others(of path: String) -> [User] {
    let pids = holdingDescriptors(of: path).union(holdingLocks(of: path))
    return pids.sorted().map { User(pid: $0, command: command(of: $0)) }
  }

  /// The processes other than this one with a descriptor on the store or a sidecar, among
  /// those whose descriptors this process may list.
  static func holdingDescriptors(of path: String) -> Set<Int32> {
    let files = identities(of: path)
    guard !files.isEmpty else { return [] }
    let me = getpid()
    return Set(processes().filter { $0 != me && !descriptors(of: $0, among: files).isEmpty })
  }

  /// The processes other than this one holding SQLite's locks on the store: the database's
  /// lock bytes, a WAL store's shared-memory switch. A file this process has open is not
  /// tested (see the type's note).
  static func holdingLocks(of path: String) -> Set<Int32> {
    let mine = descriptors(of: getpid(), among: identities(of: path))
    var pids = Set<Int32>()
    if let database = FileIdentity(path), !mine.contains(database) {
      pids.formUnion(
        lockHolders(of: path, start: databaseLockBytes.start, count: databaseLockBytes.count))
    }
    if let memory = FileIdentity(path + "-shm"), !mine.contains(memory) {
      pids.formUnion(lockHolders(of: path + "-shm", start: sharedMemoryDeadMansSwitch, count: 1))
    }
    pids.remove(getpid())
    return pids
  }

  private static func identities(of path: String) -> Set<FileIdentity> {
    Set(["", "-wal", "-shm", "-journal"].compactMap { FileIdentity(path + $0) })
  }

  /// Returns once no other process has the store at `path` open, waiting up to `wait` seconds
  /// for them to close it.
  /// - Parameter what: what would be done to the store ("replace", "migrate"), for the message.
  /// - Throws: ``StoreError`` (``StoreError/Kind/conflict``) naming the processes that still
  ///   have it open.
  package static func requireNone(of path: String, before what: String, wait: Double = 0)
    throws(StoreError)
  {
    let deadline = Date().addingTimeInterval(max(0, wait))
    while true {
      let users = others(of: path)
      if users.isEmpty { return }
      guard Date() < deadline else {
        let names = users.map(\.description).joined(separator: ", ")
        throw StoreError(
          .conflict,
          "the store is open in another process (\(names)), whose later writes would be lost if graphvault were to \(what) the store now: close the app (or its store), or give --wait time for it to",
          path: path)
      }
      Thread.sleep(forTimeInterval: 0.1)
    }
  }

  /// A file by device and inode, as `stat(2)` names it (links followed).
  package struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the file at `path`, nil when it cannot be read.
    package init?(_ path: String) {
      var status = stat()
      guard stat(path, &status) == 0 else { return nil }
      device = UInt64(status.st_dev)
      inode = UInt64(status.st_ino)
    }
  }

  /// Every process id in `/proc`.
  private static func processes() -> [Int32] {
    ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap {
      Int32($0)
    }
  }

  /// The files among `files` that `pid` has a descriptor on (none when its descriptors
  /// cannot be listed: another user's process, or one that has ended).
  private static func descriptors(of pid: Int32, among files: Set<FileIdentity>) -> Set<
    FileIdentity
  > {
    let folder = "/proc/\(pid)/fd"
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else {
      return []
    }
    var found = Set<FileIdentity>()
    for entry in entries {
      // stat(2) of the descriptor's link reaches the open file without opening it.
      if let file = FileIdentity("\(folder)/\(entry)"), files.contains(file) {
        found.insert(file)
      }
    }
    return found
  }

  /// The processes holding a POSIX lock that conflicts with a write lock on `count` bytes of
  /// `path` from `start` (`F_GETLK` reports one holder at a time: each found is stepped past).
  private static func lockHolders(of path: String, start: off_t, count: off_t) -> Set<Int32> {
    let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var holders = Set<Int32>()
    var offset = start
    while offset < start + count {
      var probe = flock()
      probe.l_type = Int16(F_WRLCK)
      probe.l_whence = Int16(SEEK_SET)
      probe.l_start = offset
      probe.l_len = start + count - offset
      guard fcntl(fd, F_GETLK, &probe) == 0, probe.l_type != Int16(F_UNLCK) else { break }
      if probe.l_pid > 0 { holders.insert(probe.l_pid) }
      // Past the lock found (a lock to the end of the file ends the search).
      guard probe.l_len > 0 else { break }
      offset = max(offset + 1, probe.l_start + probe.l_len)
    }
    return holders
  }

  private static func command(of pid: Int32) -> String? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else {
      return nil
    }
    let name = text.trimmingCharacters(in: .whitespacesAndNewlines)
    // A command name is the process's own choice: shown escaped, never as terminal codes.
    return name.isEmpty
      ? nil
      : String(
        name.unicodeScalars.map { scalar in
          scalar.value < 0x20 || scalar.value == 0x7f ? "?" : Character(scalar)
        })
  }
}
