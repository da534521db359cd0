import ObjectModel

/// Where an object stream goes: a new store, an archive, checks that write nothing. Calls
/// come in the stream's order: ``begin(_:)`` once, then chunks and rows, then ``finish()``
/// when the source was sound.
package protocol ObjectSink<Head>: AnyObject {
  /// What the sink is told before the objects.
  associatedtype Head
  /// Receives what the stream holds before its objects.
  func begin(_ head: Head) throws
  /// Receives one chunk of objects, from `place` in the source.
  func take(_ chunk: ObjectChunk, from place: String) throws
  /// Receives rows of a table the model does not describe, from `place` in the source.
  func take(rows: [[String: AttributeValue]], of table: String, from place: String) throws
  /// Called once everything was received and the source found it sound.
  func finish() throws
}
