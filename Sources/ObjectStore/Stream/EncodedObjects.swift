/// Objects already in an archive's encoding: a backup's chunks, encoded on the threads that
/// read them, which an archive's writer takes as they are and any other sink decodes first
/// (``ObjectChunk/encoded(_:)``).
package protocol EncodedObjects: Sendable {
  /// The concrete entity of every object.
  var entity: String { get }
  /// The number of objects.
  var count: Int { get }
  /// The same objects, decoded.
  func decoded() throws -> ObjectChunk
}
