import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore

/// One archive of a streamed comparison (``StreamedDiff``): read, checked and decoded by the
/// one scanner restore uses (``ArchiveScanner``), on a thread of its own, and taken an entity
/// at a time as its object chunks come.
///
/// Its checks are restore's: each member as it comes, and at the end (``finish()``) the index,
/// every reference and the trailer, so an archive that a restore refuses makes the comparison
/// fail too, naming the archive.
final class ScannedArchive {
  /// The archive, as the user named it.
  let path: Location
  /// What the archive holds before its objects, checked.
  let store: ArchivedStore
  private let chain: ArchiveChain
  private var scanner: any ArchiveEventSource { chain.source }
  private let events: Prefetcher<ArchiveScanner.Event>
  /// The chunk read but not yet taken: the first of the next entity.
  private var head: (chunk: ObjectChunk, member: String, entity: String)?
  /// Whether the scan has passed its last object chunk.
  private var objectsEnded = false
  /// Where the objects taken are counted.
  private let meter: ProgressMeter?

  /// Opens the archive at `path` (a file or `s3://`) and reads it up to its objects.
  /// - Throws: ``VaultError``: 66 when it is missing, 65 when damaged, 77 for a password
  ///   problem.
  init(
    _ path: Location, password: PasswordSource?, allowingUnencrypted: Bool, meter: ProgressMeter?
  ) throws {
    self.path = path
    self.meter = meter
    try ArchiveAccess.requireInput(path)
    // Two sides are compared entity by entity in key order.
    let chain = try ArchiveChain.open(
      path, password: password, allowingUnencrypted: allowingUnencrypted)
    self.chain = chain
    let scanner = chain.source
    // A few chunks ahead: the two sides' chunk boundaries fall at different objects.
    let events = Prefetcher(depth: 3) { try scanner.next() }
    self.events = events
    guard case .begin(let store)? = try ArchiveAccess.reading(path, { try events.next() }) else {
      throw VaultError(.invalidInput, "the archive holds no store (\(path))")
    }
    self.store = store
  }

  /// The objects the header says the archive holds, by entity (nil in archives written before
  /// headers recorded them). The scanner holds the archive to them.
  var expectedObjects: [String: Int]? { store.header.expectedObjects }

  /// The entity of the next object chunk, or nil when no object chunk is left.
  func nextEntity() throws -> String? {
    if let head { return head.entity }
    while !objectsEnded {
      switch try nextEvent() {
      case .objects(let chunk, let member)?:
        guard let entity = ArchiveLayout.entity(ofObjectsMember: member) else { continue }
        head = (chunk, member, entity)
        return entity
      case .rows?, .begin?: continue
      case nil: objectsEnded = true
      }
    }
    return nil
  }

  /// The next object chunk when it is `entity`'s (nil once `entity`'s chunks are all taken).
  func nextChunk(of entity: String) throws -> ObjectChunk? {
    guard try nextEntity() == entity, let chunk = head?.chunk else { return nil }
    head = nil
    meter?.add(objects: chunk.count)
    return chunk
  }

  /// Reads the rest of the archive (the rows of other tables and the index) and holds it to
  /// every check a restore makes.
  /// - Throws: ``VaultError`` (65) naming the problem and the archive.
  func finish() throws {
    while try nextEvent() != nil {}
    try checkEnd()
  }

  /// Restores what the scan has not given yet (the chunk at hand and everything after it)
  /// into a new store at `storePath`, with the store's tables and bookkeeping as archived:
  /// the entities already taken are left out. The archive is checked as a restore checks it.
  /// - Throws: ``VaultError`` when the archive is refused or the store cannot be written.
  func restoreRest(to storePath: String) throws {
    let sink = StoreSink(path: storePath)
    try sink.begin(store.storeHead)
    if let head {
      try sink.take(head.chunk, from: head.member)
      meter?.add(objects: head.chunk.count)
      self.head = nil
    }
    while let event = try nextEvent() {
      switch event {
      case .objects(let chunk, let member):
        try sink.take(chunk, from: member)
        meter?.add(objects: chunk.count)
      case .rows(let rows, let table, let member):
        try sink.take(rows: rows, of: table, from: member)
      case .begin: continue
      }
    }
    objectsEnded = true
    try checkEnd()
    try sink.finish()
  }

  /// The scan's next event, its archive problems named with the archive.
  private func nextEvent() throws -> ArchiveScanner.Event? {
    try ArchiveAccess.reading(path) { try events.next() }
  }

  /// The checks made once everything was read: the scan's end, and the trailer.
  private func checkEnd() throws {
    guard scanner.readToTheEnd, scanner.problems.isEmpty else {
      throw VaultError(.invalidInput, "the archive ends before its index (\(path))")
    }
    try chain.checkTrailers()
  }
}
