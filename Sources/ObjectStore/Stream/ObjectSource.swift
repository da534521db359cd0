/// Where an object stream comes from: an archive, a chain of archives read as one, a store.
/// ``ObjectPipeline`` calls ``next()`` on a thread of its own.
package protocol ObjectSource<Head>: AnyObject {
  /// What the source gives before its objects.
  associatedtype Head
  /// The next event, or nil once everything was given and its end checked.
  func next() throws -> StreamEvent<Head>?
  /// Whether everything was read to its end and found sound: a sink is finished only then (a
  /// reader collecting problems goes on past them, and says so here).
  var isSound: Bool { get }
  /// Where in the source its head comes from, for messages.
  var headPlace: String { get }
}

extension ObjectSource {
  /// "the head".
  package var headPlace: String { "the head" }
}
