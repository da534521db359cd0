/// What reads an archive's content in order, checked: one archive (``ArchiveScanner``) or a
/// chain of incremental archives read as one (``ChainScanner``).
package protocol ArchiveEventSource: AnyObject {
  /// The next event, or nil once everything was read and its end checked.
  func next() throws -> ArchiveScanner.Event?
  /// The problems found so far (when collecting).
  var problems: [ArchiveFormatError] { get }
  /// Objects given per entity.
  var objects: [String: Int] { get }
  /// Rows given per table.
  var tables: [String: Int] { get }
  /// Members read.
  var memberCount: Int { get }
  /// Entities with a member that did not pass.
  var damagedEntities: Set<String> { get }
  /// Whether every index was read.
  var isComplete: Bool { get }
  /// Whether everything was read to its end.
  var readToTheEnd: Bool { get }
  /// What the archive holds before its objects, once checked.
  var store: ArchivedStore? { get }
}

extension ArchiveScanner: ArchiveEventSource {}

extension ArchiveEventSource {
  /// Scans the archive on a second thread while `sink` takes what passed, in order, on this one:
  /// the archive is read, checked and decoded on one core while the sink inserts on the other.
  ///
  /// `sinkFailed` decides what an error of the sink does, given the member it happened at:
  /// thrown on (the default), or recorded by a collecting caller, which goes on. The sink's
  /// ``ArchiveSink/finish()`` is called only when the scan found no problem.
  /// - Throws: the scan's first problem (unless collecting), what reading the archive throws,
  ///   and what `sinkFailed` throws.
  package func run(
    into sink: some ArchiveSink,
    sinkFailed: (any Error, String) throws -> Void = { error, _ in throw error }
  ) throws {
    let prefetcher = Prefetcher { [self] in try next() }
    defer { prefetcher.cancel() }
    while let event = try prefetcher.next() {
      switch event {
      case .begin(let store):
        do { try sink.begin(store) } catch { try sinkFailed(error, ArchiveLayout.storeSchema) }
      case .objects(let objects, let member):
        do { try sink.insert(objects, member: member) } catch { try sinkFailed(error, member) }
      case .rows(let rows, let table, let member):
        do { try sink.insert(rows: rows, into: table, member: member) } catch {
          try sinkFailed(error, member)
        }
      }
    }
    guard problems.isEmpty, readToTheEnd else { return }
    do { try sink.finish() } catch { try sinkFailed(error, "the objects") }
  }
}
