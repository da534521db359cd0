internal import CArchive

/// One buffer compressed or decompressed with an archive filter, through libarchive's raw
/// format: the same libraries and levels as a whole archive stream, for data that is compressed
/// piece by piece (each member of an encrypted archive, before it is sealed).
public enum FilterCodec {
  /// `bytes` compressed with `filter` (a complete stream of that filter: a `.zst`, `.xz` or
  /// `.gz` file's bytes; `bytes` itself for ``ArchiveFilter/none``).
  /// - Throws: ``ArchiveError``.
  public static func compress(_ bytes: [UInt8], filter: ArchiveFilter) throws(ArchiveError)
    -> [UInt8]
  {
    if filter == .none { return bytes }
    guard let archive = archive_write_new() else {
      throw ArchiveError(kind: .library(code: ARCHIVE_FATAL), message: "out of memory")
    }
    defer { archive_write_free(archive) }
    func failure(_ rc: Int32) -> ArchiveError {
      ArchiveError(
        kind: .library(code: rc),
        message: archive_error_string(archive).map { String(cString: $0) },
        errno: archive_errno(archive))
    }
    func check(_ rc: Int32) throws(ArchiveError) {
      guard rc == ARCHIVE_OK else { throw failure(rc) }
    }
    try check(archive_write_set_format_raw(archive))
    switch filter {
    case .none: break
    case .gzip: try check(archive_write_add_filter_gzip(archive))
    case .xz: try check(archive_write_add_filter_xz(archive))
    case .zstd: try check(archive_write_add_filter_zstd(archive))
    }
    try check(archive_write_set_bytes_in_last_block(archive, 1))
    let sink = Sink()
    sink.bytes.reserveCapacity(bytes.count / 2)
    try check(
      archive_write_open(
        archive, Unmanaged.passUnretained(sink).toOpaque(), nil,
        { _, client, data, count in
          let sink = Unmanaged<Sink>.fromOpaque(client!).takeUnretainedValue()
          sink.bytes.append(
            contentsOf: UnsafeRawBufferPointer(start: data, count: count))
          return count
        }, nil))
    guard let entry = archive_entry_new() else {
      throw ArchiveError(kind: .library(code: ARCHIVE_FATAL), message: "out of memory")
    }
    defer { archive_entry_free(entry) }
    archive_entry_set_filetype(entry, GV_AE_IFREG)
    archive_entry_set_size(entry, Int64(bytes.count))
    archive_entry_copy_pathname(entry, "data")
    try check(archive_write_header(archive, entry))
    var written = 0
    while written < bytes.count {
      let n = bytes.withUnsafeBytes { buffer in
        archive_write_data(archive, buffer.baseAddress! + written, buffer.count - written)
      }
      guard n > 0 else { throw failure(n == 0 ? ARCHIVE_FATAL : Int32(n)) }
      written += n
    }
    try check(archive_write_close(archive))
    return sink.bytes
  }

  /// `bytes` (as ``compress(_:filter:)`` made them, with any filter) decompressed.
  /// - Parameter limit: the largest result accepted.
  /// - Throws: ``ArchiveError`` when the bytes are not such a stream, or decompress to more
  ///   than `limit`.
  public static func decompress(_ bytes: [UInt8], filter: ArchiveFilter, limit: Int)
    throws(ArchiveError) -> [UInt8]
  {
    if filter == .none { return bytes }
    guard let archive = archive_read_new() else {
      throw ArchiveError(kind: .library(code: ARCHIVE_FATAL), message: "out of memory")
    }
    defer { archive_read_free(archive) }
    func failure(_ rc: Int32) -> ArchiveError {
      ArchiveError(
        kind: .library(code: rc),
        message: archive_error_string(archive).map { String(cString: $0) },
        errno: archive_errno(archive))
    }
    func check(_ rc: Int32) throws(ArchiveError) {
      guard rc == ARCHIVE_OK else { throw failure(rc) }
    }
    switch filter {
    case .none: break
    case .gzip: try check(archive_read_support_filter_gzip(archive))
    case .xz: try check(archive_read_support_filter_xz(archive))
    case .zstd: try check(archive_read_support_filter_zstd(archive))
    }
    try check(archive_read_support_format_raw(archive))
    var result: [UInt8] = []
    var thrown: ArchiveError?
    bytes.withUnsafeBytes { source in
      do throws(ArchiveError) {
        try check(archive_read_open_memory(archive, source.baseAddress, source.count))
        var entry: OpaquePointer?
        try check(archive_read_next_header(archive, &entry))
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
          let n = buffer.withUnsafeMutableBytes {
            archive_read_data(archive, $0.baseAddress, $0.count)
          }
          if n == 0 { break }
          guard n > 0 else { throw failure(Int32(n)) }
          guard result.count + n <= limit else {
            throw ArchiveError(kind: .entryTooLarge(limit: limit))
          }
          result.append(contentsOf: buffer[0..<n])
        }
      } catch {
        thrown = error
      }
    }
    if let thrown { throw thrown }
    return result
  }
}

private final class Sink {
  var bytes: [UInt8] = []
}
