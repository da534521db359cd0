import ObjectModel
import ObjectStore

/// One format-2 chunk of objects (``ColumnChunkEncoder``), encoded where it was read: what a
/// backup's reading threads hand its archive's writer, which writes the bytes as they are.
package struct EncodedColumns: EncodedObjects {
  /// The concrete entity of every object.
  package let entity: String
  /// The number of objects.
  package let count: Int
  /// The chunk's bytes.
  package let bytes: [UInt8]
  /// What it holds by key, for the index.
  package let ranges: ChunkRanges?
  /// Its large columns, each given a frame of its own in a framed archive.
  package let spans: [ColumnSpan]
  /// The model it was encoded with.
  let model: ObjectModel

  /// The chunk of `count` objects of `entity` that `encoder` holds, or nil when it holds none.
  package init?(_ encoder: inout ColumnChunkEncoder, entity: String) {
    guard let (bytes, spans) = encoder.encoded() else { return nil }
    self.entity = entity
    count = encoder.count
    self.bytes = bytes
    ranges = encoder.ranges()
    self.spans = spans
    model = encoder.model
  }

  /// The objects as an archive's reader decodes them.
  package func decoded() throws -> ObjectChunk {
    try RecordDecoder(model: model, member: ArchiveLayout.objects(entity, chunk: 0))
      .decodeObjects(bytes)
  }
}
