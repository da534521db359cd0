import PropertyList

/// Where a backup's members go, in order: an archive (``MemberWriter``), or a reader in the
/// same process (``MemberPipe``).
package protocol MemberSink: AnyObject {
  /// Takes one member: a chunk of objects with its ranges, for the index, and the spans of its
  /// large columns (what a framed archive gives frames of their own).
  func write(_ path: String, _ bytes: [UInt8], ranges: ChunkRanges?, spans: [ColumnSpan]) throws
}

extension MemberSink {
  /// Takes one member holding a property list.
  package func write(_ path: String, plist: PropertyListValue) throws {
    try write(path, plist.binaryPropertyList(), ranges: nil, spans: [])
  }

  /// Takes one member of other bytes.
  package func write(_ path: String, _ bytes: [UInt8]) throws {
    try write(path, bytes, ranges: nil, spans: [])
  }
}
