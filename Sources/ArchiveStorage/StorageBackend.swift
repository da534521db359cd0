/// A place archives are kept: a folder on this machine, later a bucket. Each backend is one
/// type; everything above it (naming, retention, the services) works through this protocol.
///
/// Names are plain file names (`Library-20261122T030000Z.gvault`), never paths.
public protocol StorageBackend: AnyObject {
  /// The place, as messages show it (`/var/backups/app`).
  var location: String { get }

  /// How messages and commands name the archive `name` kept here (a path, a URL).
  func address(of name: String) -> String

  /// The archives kept here (names ending in `.gvault`), in no particular order.
  /// - Throws: ``StorageError`` (``StorageError/Kind/notFound`` when the place does not exist).
  func list() throws(StorageError) -> [StoredArchive]

  /// Whether an archive by that name is kept here.
  func exists(_ name: String) -> Bool

  /// Opens the archive `name` for reading from its start, as a stream.
  /// - Throws: ``StorageError`` (``StorageError/Kind/notFound`` when there is none).
  func openForReading(_ name: String) throws(StorageError) -> any ArchiveInput

  /// Opens the archive `archive`, as ``list()`` listed it, for reading from its start: as
  /// ``openForReading(_:)-(String)`` opens it by name, without asking again what the listing
  /// said (its size and version: on object storage, one request fewer).
  /// - Throws: ``StorageError`` (``StorageError/Kind/notFound`` when there is none).
  func openForReading(_ archive: StoredArchive) throws(StorageError) -> any ArchiveInput

  /// Opens the archive `archive`, as ``list()`` listed it, for reading what it is (a framed
  /// archive's trailer, index and header) rather than all of it: through a copy of its ends
  /// where the backend keeps one (``ArchiveEnds``), each read the copy does not hold going to
  /// the archive.
  /// - Throws: ``StorageError`` (``StorageError/Kind/notFound`` when there is none).
  func openForSummary(_ archive: StoredArchive) throws(StorageError) -> any ArchiveInput

  /// Begins a new archive `name`: nothing is visible under that name until the output is
  /// published, and an abandoned or killed write leaves nothing under it.
  /// - Throws: ``StorageError``.
  func create(_ name: String) throws(StorageError) -> any ArchiveOutput

  /// Removes the archive `name`.
  /// - Throws: ``StorageError`` (``StorageError/Kind/notFound`` when there is none).
  func delete(_ name: String) throws(StorageError)

  /// Takes the lock `name` of this place (runs that must not overlap take the same name),
  /// waiting up to `wait` seconds; released by ``StorageLock/release()`` or when its holder
  /// ends, however it ends. Shared holders exclude only exclusive ones.
  /// - Throws: ``StorageError`` (``StorageError/Kind/locked`` naming the holder).
  func lock(_ name: String, shared: Bool, wait: Double?) throws(StorageError) -> any StorageLock

  /// What runs that died mid-write left here (partial archives under temporary names), never
  /// what a living run is writing.
  func leftovers() throws(StorageError) -> [StoredArchive]

  /// Removes a leftover that ``leftovers()`` listed.
  /// - Throws: ``StorageError``.
  func removeLeftover(_ name: String) throws(StorageError)
}

extension StorageBackend {
  /// The archive opened by name: a backend whose opening costs nothing asks again.
  public func openForReading(_ archive: StoredArchive) throws(StorageError) -> any ArchiveInput {
    try openForReading(archive.name)
  }

  /// The archive itself: a backend whose reads cost their bytes keeps no copy.
  public func openForSummary(_ archive: StoredArchive) throws(StorageError) -> any ArchiveInput {
    try openForReading(archive.name)
  }
}

/// One archive a backend keeps.
public struct StoredArchive: Sendable, Equatable {
  /// Its name.
  public let name: String
  /// Its size in bytes.
  public let size: Int64

  /// Describes a kept archive.
  public init(name: String, size: Int64) {
    self.name = name
    self.size = size
  }
}
