import ObjectModel

/// Where the content of an archive goes once ``ArchiveScanner`` has checked it: a new store
/// (restore), a migration, or checks that write nothing (verify). Calls come in archive order:
/// ``begin(_:)`` once, then the object chunks and table rows, then ``finish()``.
package protocol ArchiveSink: AnyObject {
  /// Receives what the archive holds before its objects.
  func begin(_ store: ArchivedStore) throws
  /// Receives one chunk of objects (member `member`).
  func insert(_ objects: DecodedChunk, member: String) throws
  /// Receives the rows of one chunk (member `member`) of a table the model does not describe.
  func insert(rows: [[String: AttributeValue]], into table: String, member: String) throws
  /// Called after the index matched and every reference resolved.
  func finish() throws
}
