import ObjectModel

/// A sink that keeps nothing: what a dry run's stream ends in, once its stages have seen
/// every object.
package final class DiscardingSink<Head>: ObjectSink {
  /// A sink for a stream whose head is `Head`.
  package init() {}

  package func begin(_ head: Head) throws {}

  package func take(_ chunk: ObjectChunk, from place: String) throws {}

  package func take(rows: [[String: AttributeValue]], of table: String, from place: String)
    throws
  {}

  package func finish() throws {}
}
