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

  /// Fills the bytes of `array` from byte `start` to its end, from `offset` of `descriptor`, as
  /// ``read(into:from:at:path:)`` does.
  package static func read<Element>(
    into array: inout [Element], fromByte start: Int = 0, of descriptor: Int32, at offset: Int64,
    path: String
  ) throws(SQLiteError) {
    // The failure is carried out of the closure: a typed throw through
    // `withUnsafeMutableBytes` (which rethrows) does not compile.
    var failure: SQLiteError?
    array.withUnsafeMutableBytes { bytes in
      do throws(SQLiteError) {
        try read(
          into: UnsafeMutableRawBufferPointer(rebasing: bytes[start...]), from: descriptor,
          at: offset, path: path)
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
  }
}
