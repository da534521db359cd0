#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writing bytes at an offset of a file until all are written, for the files graphvault
/// writes beside SQLite's own (a database's pages, a loader's spools).
package enum PositionalWrite {
  /// Writes `bytes` at `offset` of `descriptor`, again after an interrupted or short write.
  /// - Throws: ``SQLiteError`` as SQLite reports a failed write of `path`
  ///   (``SQLiteError/fileFailure(writing:path:)``: a full disk is `SQLITE_FULL`).
  package static func write(
    _ bytes: [UInt8], to descriptor: Int32, at offset: Int64, path: String
  ) throws(SQLiteError) {
    var failure: SQLiteError?
    bytes.withUnsafeBytes {
      do throws(SQLiteError) {
        try write($0, to: descriptor, at: offset, path: path)
      } catch {
        failure = error
      }
    }
    if let failure { throw failure }
  }

  /// Writes `bytes` at `offset` of `descriptor`, as ``write(_:to:at:path:)-([UInt8],_,_,_)``
  /// does.
  package static func write(
    _ bytes: UnsafeRawBufferPointer, to descriptor: Int32, at offset: Int64, path: String
  ) throws(SQLiteError) {
    var done = 0
    while done < bytes.count {
      let wrote = pwrite(
        descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
      if wrote < 0 && errno == EINTR { continue }
      guard wrote > 0 else { throw SQLiteError.fileFailure(writing: true, path: path) }
      done += wrote
    }
  }
}
