/// Where an object stream comes from: an archive, a chain of archives read as one, a store, a
/// backup's snapshot of a store. ``ObjectPipeline`` runs ``produce(_:)`` on a thread of its own.
package protocol ObjectSource<Head>: AnyObject {
  /// What the source gives before its objects.
  associatedtype Head
  /// Hands every event to `emit` in order, then returns once its end was checked; stops with
  /// what `emit` throws (the pipeline's reader gone).
  func produce(_ emit: (StreamEvent<Head>) throws -> Void) throws
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

/// A source read one event per call: what a reader that looks ahead (a chain's scanner) or
/// walks two streams side by side (a diff of archives) needs.
package protocol PulledSource<Head>: ObjectSource {
  /// What the source gives before its objects (stated again, so that a conformer's is
  /// inferred from ``next()``).
  associatedtype Head
  /// The next event, or nil once everything was given and its end checked.
  func next() throws -> StreamEvent<Head>?
}

extension PulledSource {
  /// Every event ``next()`` gives, in turn.
  package func produce(_ emit: (StreamEvent<Head>) throws -> Void) throws {
    while let event = try next() { try emit(event) }
  }
}
