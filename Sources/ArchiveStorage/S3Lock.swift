import Foundation
import S3

/// A lock held on object storage: an object `PREFIX.graphvault-locks/NAME/MODE-ID` holding its
/// holder's pid, host and start time, rewritten every ``S3Backend/refreshEvery`` while held.
///
/// To take it: write one's own lock object, then list the name's locks; another fresh lock that
/// conflicts (any, for an exclusive taker; an exclusive one, for a shared taker) means someone
/// holds it, so one's own is removed and the taker waits or fails. A lock not refreshed for
/// ``S3Backend/staleAfter`` (by the service's clock), or naming this host and a process that
/// is gone, is stale: ignored and removed.
final class S3Lock: StorageLock, @unchecked Sendable {
  private let backend: S3Backend
  private let key: String
  private let body: Data
  private let timer: DispatchSourceTimer
  private let guardian = NSLock()
  private var released = false

  private init(backend: S3Backend, key: String, body: Data) {
    self.backend = backend
    self.key = key
    self.body = body
    timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
    timer.schedule(
      deadline: .now() + backend.refreshEvery, repeating: backend.refreshEvery)
    timer.setEventHandler { [weak self] in self?.refresh() }
    timer.resume()
  }

  static func take(backend: S3Backend, name: String, shared: Bool, wait: Double?)
    throws(StorageError) -> S3Lock
  {
    let folder = "\(backend.prefix).graphvault-locks/\(name)/"
    let own = folder + (shared ? "shared-" : "exclusive-") + UUID().uuidString
    let holder = FileLockHolderText.current()
    let body = Data(holder.utf8)
    let deadline = Date().addingTimeInterval(max(0, wait ?? 0))
    while true {
      let (bucket, client) = (backend.bucket, backend.client)
      try backend.storage { try client.put(bucket: bucket, key: own, body: body) }
      let (locks, now) = try backend.storage { try client.list(bucket: bucket, prefix: folder) }
      var conflict: String?
      for lock in locks where lock.key != own {
        let mode = lock.key.dropFirst(folder.count)
        guard !shared || mode.hasPrefix("exclusive-") else { continue }
        let text =
          (try? backend.storage { try client.get(bucket: bucket, key: lock.key) }).map {
            String(decoding: $0, as: UTF8.self)
          } ?? ""
        let age = (now ?? Date()).timeIntervalSince(lock.lastModified ?? .distantPast)
        if age > backend.staleAfter || FileLockHolderText.isDeadHere(text) {
          try? backend.storage { try client.delete(bucket: bucket, key: lock.key) }
          continue
        }
        conflict = FileLockHolderText.describe(text)
        break
      }
      guard let conflict else { return S3Lock(backend: backend, key: own, body: body) }
      try? backend.storage { try client.delete(bucket: bucket, key: own) }
      guard Date() < deadline else {
        throw StorageError(
          .locked,
          "locked by another run (\(conflict)) (\(backend.location)\(folder.dropFirst(backend.prefix.count)))"
        )
      }
      Thread.sleep(forTimeInterval: Double.random(in: 0.5...1.5))
    }
  }

  private func refresh() {
    guardian.withLock {
      guard !released else { return }
      try? backend.client.put(bucket: backend.bucket, key: key, body: body)
    }
  }

  func release() {
    guardian.withLock {
      guard !released else { return }
      released = true
      timer.cancel()
      try? backend.client.delete(bucket: backend.bucket, key: key)
    }
  }

  deinit { release() }
}

/// The text a lock holder writes ("pid host ISO-time"), as ``FileLock`` writes it.
enum FileLockHolderText {
  static func current() -> String {
    "\(getpid()) \(hostName()) \(ISO8601DateFormatter().string(from: Date()))\n"
  }

  static func hostName() -> String {
    var host = [CChar](repeating: 0, count: 256)
    gethostname(&host, host.count - 1)
    return String(cString: host)
  }

  /// "pid 123 on host since …".
  static func describe(_ text: String) -> String {
    let parts = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    guard parts.count >= 3 else { return "another run" }
    return "pid \(parts[0]) on \(parts[1]) since \(parts[2])"
  }

  /// Whether the holder is a process of this host that no longer exists.
  static func isDeadHere(_ text: String) -> Bool {
    let parts = text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init)
    guard parts.count >= 2, parts[1] == hostName(), let pid = Int32(parts[0]) else {
      return false
    }
    return kill(pid, 0) != 0 && errno == ESRCH
  }
}
