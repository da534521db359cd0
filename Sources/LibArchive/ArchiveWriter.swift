internal import CArchive

/// Writes an archive as a stream: one entry at a time, each entry's data in as many chunks as the
/// caller likes, so no entry ever needs to sit in memory whole. It owns its `struct archive` and
/// frees it when released.
///
/// ```swift
/// let writer = try ArchiveWriter(path: "out.tar.zst", format: .pax, filter: .zstd)
/// try writer.beginEntry(path: "hello.txt", size: 5)
/// try writer.write(Array("hello".utf8))
/// try writer.finishEntry()
/// try writer.close()
/// ```
public final class ArchiveWriter {
  private let archive: OpaquePointer
  private let path: String?
  private let stream: WriteStream?
  private var entry: (path: String, size: Int64, written: Int64)?
  private var closed = false

  /// Opens `path` for writing (created or truncated); wraps `archive_write_open_filename`.
  /// - Parameters:
  ///   - format: the container format.
  ///   - filter: the compression applied to the whole stream (tar) or each entry (zip, gzip only).
  ///   - compressionLevel: the filter's level (zstd 1–19, xz 0–9, gzip 1–9); the filter's
  ///     default when `nil`.
  ///   - threads: worker threads for the zstd and xz filters (libarchive's `threads` option);
  ///     the filter's default when `nil`.
  /// - Throws: ``ArchiveError`` when the file cannot be created or the combination is invalid.
  public convenience init(
    path: String, format: ArchiveFormat = .pax, filter: ArchiveFilter = .zstd,
    compressionLevel: Int? = nil, threads: Int? = nil
  ) throws(ArchiveError) {
    try self.init(
      target: .path(path), format: format, filter: filter, compressionLevel: compressionLevel,
      threads: threads)
  }

  /// Writes to an open file descriptor, which the caller keeps and closes (so it can `fsync`
  /// it after ``close()``); wraps `archive_write_open_fd`.
  public convenience init(
    fileDescriptor: Int32, format: ArchiveFormat = .pax, filter: ArchiveFilter = .zstd,
    compressionLevel: Int? = nil, threads: Int? = nil
  ) throws(ArchiveError) {
    try self.init(
      target: .descriptor(fileDescriptor), format: format, filter: filter,
      compressionLevel: compressionLevel, threads: threads)
  }

  /// Writes to a stream: `write` gets each block of the finished (compressed) archive and must
  /// take all of it; what it throws becomes an ``ArchiveError`` (`EIO`) with its description.
  /// Wraps `archive_write_open` with a write callback. The last block is not padded, as with a
  /// regular file.
  /// - Parameter name: what messages call the archive (a path or URL).
  /// - Parameter unblocked: hand every byte to `write` as soon as libarchive produces it,
  ///   rather than in 10 KiB blocks, so that when ``finishEntry()`` returns, `write` has had
  ///   the whole entry, padding included.
  public convenience init(
    name: String?, format: ArchiveFormat = .pax, filter: ArchiveFilter = .zstd,
    compressionLevel: Int? = nil, threads: Int? = nil, unblocked: Bool = false,
    write: @escaping (UnsafeRawBufferPointer) throws -> Void
  ) throws(ArchiveError) {
    try self.init(
      target: .stream(name, WriteStream(write: write), unblocked: unblocked), format: format,
      filter: filter, compressionLevel: compressionLevel, threads: threads)
  }

  private enum Target {
    case path(String)
    case descriptor(Int32)
    case stream(String?, WriteStream, unblocked: Bool)
  }

  private init(
    target: Target, format: ArchiveFormat, filter: ArchiveFilter, compressionLevel: Int?,
    threads: Int?
  ) throws(ArchiveError) {
    guard let archive = archive_write_new() else {
      throw ArchiveError(kind: .library(code: ARCHIVE_FATAL), message: "out of memory")
    }
    self.archive = archive
    switch target {
    case .path(let path): (self.path, stream) = (path, nil)
    case .descriptor: (self.path, stream) = (nil, nil)
    case .stream(let name, let writeStream, _): (self.path, stream) = (name, writeStream)
    }
    try configure(format: format, filter: filter, level: compressionLevel, threads: threads)
    switch target {
    case .path(let path):
      try check(archive_write_open_filename(archive, path))
    case .descriptor(let fd):
      try check(archive_write_open_fd(archive, fd))
    case .stream(_, let stream, let unblocked):
      try check(archive_write_set_bytes_in_last_block(archive, 1))
      if unblocked { try check(archive_write_set_bytes_per_block(archive, 0)) }
      let rc = archive_write_open(
        archive, Unmanaged.passUnretained(stream).toOpaque(), nil,
        { archive, client, bytes, count in
          let stream = Unmanaged<WriteStream>.fromOpaque(client!).takeUnretainedValue()
          do {
            try stream.write(UnsafeRawBufferPointer(start: bytes, count: count))
            return count
          } catch {
            stream.failed = true
            gv_archive_set_error(archive, EIO, "writing the archive failed: \(error)")
            return -1
          }
        }, nil)
      try check(rc)
    }
  }

  deinit {
    archive_write_free(archive)
  }

  private func configure(
    format: ArchiveFormat, filter: ArchiveFilter, level: Int?, threads: Int?
  ) throws(ArchiveError) {
    switch format {
    case .pax:
      try check(archive_write_set_format_pax_restricted(archive))
      switch filter {
      case .none:
        try check(archive_write_add_filter_none(archive))
        // No need to pad an uncompressed archive's last block to 10 KiB.
        try check(archive_write_set_bytes_in_last_block(archive, 1))
      case .gzip: try check(archive_write_add_filter_gzip(archive))
      case .xz: try check(archive_write_add_filter_xz(archive))
      case .zstd: try check(archive_write_add_filter_zstd(archive))
      }
      if let level, filter != .none {
        try check(
          archive_write_set_filter_option(archive, filter.rawValue, "compression-level", "\(level)")
        )
      }
      if let threads, filter == .zstd || filter == .xz {
        try check(
          archive_write_set_filter_option(archive, filter.rawValue, "threads", "\(threads)"))
      }
    case .zip:
      try check(archive_write_set_format_zip(archive))
      switch filter {
      case .none: try check(archive_write_set_format_option(archive, "zip", "compression", "store"))
      case .gzip:
        try check(archive_write_set_format_option(archive, "zip", "compression", "deflate"))
        if let level {
          try check(
            archive_write_set_format_option(archive, "zip", "compression-level", "\(level)"))
        }
      case .xz, .zstd:
        throw ArchiveError(
          kind: .unsupported("zip with the \(filter.rawValue) filter; use pax, or gzip or none"),
          archivePath: path)
      }
    }
  }

  /// Begins an entry of `size` bytes; the data follows through ``write(_:)-7n0ba`` and the entry
  /// ends with ``finishEntry()``. Wraps `archive_write_header`.
  /// - Parameters:
  ///   - path: the entry's path inside the archive (UTF-8).
  ///   - size: the exact number of bytes that will be written (tar records it up front).
  ///   - modificationTime: seconds since 1970.
  ///   - permissions: the entry's mode bits.
  public func beginEntry(
    path entryPath: String, size: Int64, modificationTime: Int64 = 0, permissions: UInt32 = 0o644
  ) throws(ArchiveError) {
    guard !closed else { throw ArchiveError(kind: .misuse("entry after close"), archivePath: path) }
    if entry != nil { try finishEntry() }
    guard let header = archive_entry_new() else {
      throw ArchiveError(kind: .library(code: ARCHIVE_FATAL), message: "out of memory")
    }
    defer { archive_entry_free(header) }
    // The UTF-8 bytes go in as the locale's multibyte form: libarchive 3.6 crashes in the pax
    // writer when given only a UTF-8 name under the C locale (cron's usual locale). Under C it
    // stores non-ASCII names as raw bytes (hdrcharset=BINARY) and warns; readers get the same
    // bytes back.
    archive_entry_copy_pathname(header, entryPath)
    archive_entry_set_size(header, size)
    archive_entry_set_filetype(header, GV_AE_IFREG)
    archive_entry_set_perm(header, mode_t(permissions))
    archive_entry_set_mtime(header, time_t(modificationTime), 0)
    let rc = archive_write_header(archive, header)
    if !(rc == ARCHIVE_WARN && ArchiveWarning.isLocaleConversion(archive)) {
      try check(rc, entry: entryPath)
    }
    entry = (entryPath, size, 0)
  }

  /// Writes the next chunk of the current entry's data; wraps `archive_write_data`.
  /// - Throws: ``ArchiveError`` on an I/O failure (with its `errno`, such as `ENOSPC`), or when
  ///   the chunk would take the entry past its declared size.
  public func write(_ bytes: UnsafeRawBufferPointer) throws(ArchiveError) {
    guard let current = entry else {
      throw ArchiveError(kind: .misuse("data written outside an entry"), archivePath: path)
    }
    guard current.written + Int64(bytes.count) <= current.size else {
      throw ArchiveError(
        kind: .sizeMismatch(declared: current.size, written: current.written + Int64(bytes.count)),
        archivePath: path, entry: current.path, entryOffset: current.written)
    }
    var remaining = bytes
    while !remaining.isEmpty {
      let n = archive_write_data(archive, remaining.baseAddress, remaining.count)
      if n < 0 {
        throw makeError(code: Int32(n), entry: current.path, offset: entry!.written)
      }
      if n == 0 {
        throw makeError(code: ARCHIVE_FATAL, entry: current.path, offset: entry!.written)
      }
      entry!.written += Int64(n)
      remaining = UnsafeRawBufferPointer(rebasing: remaining[n...])
    }
  }

  /// Writes the next chunk of the current entry's data.
  public func write(_ bytes: [UInt8]) throws(ArchiveError) {
    var failure: ArchiveError?
    bytes.withUnsafeBytes { buffer in
      do throws(ArchiveError) { try write(buffer) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  /// Ends the current entry; wraps `archive_write_finish_entry`.
  /// - Throws: ``ArchiveError`` when fewer bytes were written than the entry declared.
  public func finishEntry() throws(ArchiveError) {
    guard let current = entry else { return }
    entry = nil
    guard current.written == current.size else {
      throw ArchiveError(
        kind: .sizeMismatch(declared: current.size, written: current.written),
        archivePath: path, entry: current.path, entryOffset: current.written)
    }
    try check(archive_write_finish_entry(archive), entry: current.path)
  }

  /// Writes a whole entry from memory: begin, write, finish.
  public func writeEntry(path entryPath: String, contents: [UInt8], modificationTime: Int64 = 0)
    throws(ArchiveError)
  {
    try beginEntry(path: entryPath, size: Int64(contents.count), modificationTime: modificationTime)
    try write(contents)
    try finishEntry()
  }

  /// Finishes the archive: ends the last entry, writes the end-of-archive marker and flushes the
  /// filter; wraps `archive_write_close`. The archive is complete only once this returns.
  public func close() throws(ArchiveError) {
    guard !closed else { return }
    try finishEntry()
    closed = true
    try check(archive_write_close(archive))
  }

  /// The number of bytes written to the file so far (after compression).
  public var bytesWritten: Int64 { archive_filter_bytes(archive, -1) }

  private func check(_ rc: Int32, entry entryPath: String? = nil) throws(ArchiveError) {
    if rc != ARCHIVE_OK { throw makeError(code: rc, entry: entryPath, offset: nil) }
  }

  private func makeError(code: Int32, entry entryPath: String?, offset: Int64?) -> ArchiveError {
    // The stream's own failure is the cause, whatever libarchive made of it.
    ArchiveError(
      kind: stream?.failed == true ? .stream : .library(code: code),
      message: archive_error_string(archive).map { String(cString: $0) },
      errno: archive_errno(archive), archivePath: path, entry: entryPath, entryOffset: offset,
      archiveOffset: archive_filter_bytes(archive, -1))
  }
}

/// The caller's stream, for libarchive's write callback (which holds it unretained: the writer
/// keeps it alive).
private final class WriteStream {
  let write: (UnsafeRawBufferPointer) throws -> Void
  /// Whether `write` threw: the failure libarchive then reports is the stream's.
  var failed = false

  init(write: @escaping (UnsafeRawBufferPointer) throws -> Void) { self.write = write }
}
