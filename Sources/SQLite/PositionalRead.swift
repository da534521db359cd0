#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reading bytes at an offset of a file until all are read, for the files graphvault writes
/// beside SQLite's own (a loader's spilled index keys); ``PositionalWrite`` writes them.
package enum PositionalRead {
  /// Fills `buffer` from `offset` of `descriptor`, again after an interrupted or short read.
  /// - Throws: ``SQLiteError`` as SQLite reports a failed read of `path`
  ///   (``SQLiteError/fileFailure(writing:path:)``), also when the file ends first.
  package static func read(
    into buffer: UnsafeMutableRawBufferPointer, from descriptor: Int32, at offset: Int64,
    path: String
  ) throws(SQLiteError) {
    var done = 0
    while done < buffer.count {
      let read = pread(
        descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
      if read < 0 && errno == EINTR { continue }
      guard read > 0 else { throw SQLiteError.fileFailure(writing: false, path: path) }
      done += read
    }
  }
}
