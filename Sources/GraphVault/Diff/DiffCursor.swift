import ObjectModel
import ObjectStore

/// One entity's objects on one side of a comparison, one at a time in the order of the key
/// they are matched by: what ``DiffService`` steps through on each side. A store's rows
/// (``ObjectCursor``) or an archive's chunks as they stream (``ChunkCursor``).
protocol DiffCursor {
  /// Moves to the next object; false after the last.
  func step() throws -> Bool
  /// The current object's key (primary key, or key attribute value as stored).
  var key: AttributeValue? { get }
  /// Whether the current objects of this cursor and `other` hold the same values (false may
  /// also mean "cannot tell without reading them").
  func sameValues(as other: Self) -> Bool
  /// The current object, read in full.
  func object() throws -> ObjectCursor.Object
}

extension ObjectCursor: DiffCursor {}
