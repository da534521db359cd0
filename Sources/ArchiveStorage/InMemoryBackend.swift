import Foundation

/// Archives kept in this process's memory: a backend for tests and previews that keeps the
/// contract every backend keeps (an archive invisible until published, whole when read back,
/// locks that exclude as the others' do) and touches no disk or network. Everything kept goes
/// with the value.
///
/// ```swift
/// let backend = InMemoryBackend()
/// let output = try backend.create("Library-20261125T030000Z.gvault")
/// try bytes.withUnsafeBytes { try output.write($0) }
/// _ = try output.publish()
/// ```
public final class InMemoryBackend: StorageBackend, @unchecked Sendable {
  /// What the backend holds, behind ``guarded``.
  private struct Contents {
    var archives: [String: [UInt8]] = [:]
    /// Lock holders by lock name: how many share it, or that one holds it alone.
    var locks: [String: (shared: Int, exclusive: Bool)] = [:]
  }

  private let guarded = NSLock()
  private var contents = Contents()
  /// The place's name, as messages show it.
  public let name: String

  /// An empty place called `name` in messages (`memory:NAME/`).
  public init(name: String = "archives") {
    self.name = name
  }

  /// `memory:NAME/`.
  public var location: String { "memory:\(name)/" }

  /// `memory:NAME/ARCHIVE`.
  public func address(of name: String) -> String { location + name }

  private func withContents<R>(_ body: (inout Contents) throws(StorageError) -> R)
    throws(StorageError) -> R
  {
    guarded.lock()
    defer { guarded.unlock() }
    return try body(&contents)
  }

  /// The archives kept, with their sizes.
  public func list() throws(StorageError) -> [StoredArchive] {
    try withContents { contents in
      contents.archives.filter { ArchiveNaming.isArchive($0.key) }.map {
        StoredArchive(name: $0.key, size: Int64($0.value.count))
      }
    }
  }

  /// Whether an archive `name` is kept.
  public func exists(_ name: String) -> Bool {
    (try? withContents { $0.archives[name] != nil }) ?? false
  }

  /// The archive `name` as it is now (a later publish under the name does not change it).
  public func openForReading(_ name: String) throws(StorageError) -> any ArchiveInput {
    let bytes = try withContents { contents throws(StorageError) in
      guard let bytes = contents.archives[name] else {
        throw StorageError(.notFound, "no archive at \(address(of: name))")
      }
      return bytes
    }
    return MemoryInput(bytes: bytes)
  }

  /// A new archive `name`, kept apart until published; publishing replaces nothing.
  public func create(_ name: String) throws(StorageError) -> any ArchiveOutput {
    MemoryOutput(backend: self, name: name)
  }

  /// Forgets the archive `name`.
  public func delete(_ name: String) throws(StorageError) {
    try withContents { contents throws(StorageError) in
      guard contents.archives.removeValue(forKey: name) != nil else {
        throw StorageError(.notFound, "no archive at \(address(of: name))")
      }
    }
  }

  /// Takes the lock `name`, polling every 10 ms up to `wait` seconds.
  public func lock(_ name: String, shared: Bool, wait: Double?) throws(StorageError)
    -> any StorageLock
  {
    let deadline = Date().addingTimeInterval(wait ?? 0)
    while true {
      let taken = try withContents { contents in
        var holders = contents.locks[name] ?? (0, false)
        guard !holders.exclusive, shared || holders.shared == 0 else { return false }
        if shared { holders.shared += 1 } else { holders.exclusive = true }
        contents.locks[name] = holders
        return true
      }
      if taken { return MemoryLock(backend: self, name: name, shared: shared) }
      guard Date() < deadline else {
        throw StorageError(
          .locked, "locked by another holder in this process (\(address(of: name)))")
      }
      Thread.sleep(forTimeInterval: 0.01)
    }
  }

  /// Lets go of one holder of the lock `name`.
  fileprivate func unlock(_ name: String, shared: Bool) {
    try? withContents { contents in
      guard var holders = contents.locks[name] else { return }
      if shared { holders.shared = max(0, holders.shared - 1) } else { holders.exclusive = false }
      contents.locks[name] = holders.shared == 0 && !holders.exclusive ? nil : holders
    }
  }

  /// Keeps `bytes` under `name` unless an archive is kept under it already.
  fileprivate func publish(_ bytes: [UInt8], as name: String) throws(StorageError) {
    try withContents { contents throws(StorageError) in
      guard contents.archives[name] == nil else {
        throw StorageError(.exists, "the archive exists already (\(address(of: name)))")
      }
      contents.archives[name] = bytes
    }
  }

  /// None: an archive being written lives in its writer, and goes with it.
  public func leftovers() throws(StorageError) -> [StoredArchive] { [] }

  /// There are never leftovers to remove.
  public func removeLeftover(_ name: String) throws(StorageError) {
    throw StorageError(.notFound, "no leftover \(name) at \(location)")
  }
}

/// An archive's bytes, read from the start or at any offset.
private final class MemoryInput: ArchiveInput {
  private let bytes: [UInt8]
  private var offset = 0

  init(bytes: [UInt8]) { self.bytes = bytes }

  var size: Int64? { Int64(bytes.count) }

  func read(into buffer: UnsafeMutableRawBufferPointer) throws(StorageError) -> Int {
    let count = min(buffer.count, bytes.count - offset)
    guard count > 0 else { return 0 }
    bytes.withUnsafeBytes {
      buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count]))
    }
    offset += count
    return count
  }

  func read(at offset: Int64, count: Int) throws(StorageError) -> [UInt8] {
    let start = Int(min(max(0, offset), Int64(bytes.count)))
    return Array(bytes[start..<min(bytes.count, start + max(0, count))])
  }
}

/// An archive being written: its bytes, kept by the backend only when published.
private final class MemoryOutput: ArchiveOutput {
  private let backend: InMemoryBackend
  private let name: String
  private var bytes: [UInt8] = []
  private var isDone = false

  init(backend: InMemoryBackend, name: String) {
    self.backend = backend
    self.name = name
  }

  var location: String { backend.address(of: name) }

  func write(_ bytes: UnsafeRawBufferPointer) throws(StorageError) {
    guard !isDone else {
      throw StorageError(.io, "the archive was published or abandoned already (\(location))")
    }
    self.bytes.append(contentsOf: bytes)
  }

  func publish() throws(StorageError) -> Int64 {
    guard !isDone else {
      throw StorageError(.io, "the archive was published or abandoned already (\(location))")
    }
    isDone = true
    try backend.publish(bytes, as: name)
    defer { bytes = [] }
    return Int64(bytes.count)
  }

  func abandon() {
    isDone = true
    bytes = []
  }
}

/// A held lock of an ``InMemoryBackend``; let go once, by ``release()`` or when it goes.
private final class MemoryLock: StorageLock {
  private let backend: InMemoryBackend
  private let name: String
  private let shared: Bool
  private var isHeld = true

  init(backend: InMemoryBackend, name: String, shared: Bool) {
    self.backend = backend
    self.name = name
    self.shared = shared
  }

  deinit { release() }

  func release() {
    guard isHeld else { return }
    isHeld = false
    backend.unlock(name, shared: shared)
  }
}
