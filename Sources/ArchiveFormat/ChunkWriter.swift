import PropertyList

/// Collects records into bounded chunks and writes each as one member, numbered in order;
/// chunks encoded elsewhere (format 2's, ``ColumnChunkEncoder``) take the next numbers too.
package struct ChunkWriter {
  private let members: any MemberSink
  private let path: (Int) -> String
  private var writer = BinaryPropertyListWriter()
  private var start = 0
  private var records = 0
  private var number = 0

  package init(members: any MemberSink, path: @escaping (Int) -> String) {
    self.members = members
    self.path = path
  }

  package mutating func add(
    _ encode: (inout BinaryPropertyListWriter) -> BinaryPropertyListWriter.Reference
  ) throws {
    let reference = encode(&writer)
    writer.push(reference)
    records += 1
    if records >= ArchiveLayout.chunkRecords || writer.approximateSize >= ArchiveLayout.chunkBytes {
      try flush()
    }
  }

  package mutating func finish() throws {
    if records > 0 { try flush() }
  }

  /// Writes a chunk encoded elsewhere as the next member, with its ranges for the index and
  /// the spans of its large columns (``MemberSink/write(_:_:ranges:spans:)``).
  package mutating func write(
    _ chunk: [UInt8], ranges: ChunkRanges? = nil, spans: [ColumnSpan] = []
  ) throws {
    number += 1
    try members.write(path(number), chunk, ranges: ranges, spans: spans)
  }

  private mutating func flush() throws {
    let root = writer.makeArray(fromStackIndex: start)
    try write(writer.serialized(root: root), ranges: nil)
    writer.reset()
    records = 0
  }
}
