import ObjectStore

/// What reads an archive's content in order, checked: one archive (``ArchiveScanner``) or a
/// chain of incremental archives read as one (``ChainScanner``). The source of an object
/// stream whose head is the archived store.
package protocol ArchiveEventSource: PulledSource where Head == ArchivedStore {
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
  /// Read to its end without a problem.
  package var isSound: Bool { problems.isEmpty && readToTheEnd }

  /// The member that holds the archived store's schema.
  package var headPlace: String { ArchiveLayout.storeSchema }

  /// This source as an object source (Swift does not yet convert `any ArchiveEventSource`
  /// to it by itself).
  package var objectSource: any ObjectSource<ArchivedStore> { self }
}
