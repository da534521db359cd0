internal import Bytes
internal import CArchive

/// Reads an archive as a stream, entry by entry, each entry's data in chunks. Every format and
/// filter libarchive supports is recognised (tar and zip; zstd, xz, gzip, none). It owns its
/// `struct archive` and frees it when released.
///
/// A truncated or damaged archive is a thrown ``ArchiveError`` naming the entry and offset: an
/// entry whose data ends before the size in its header never reads as a silently shorter entry.
///
/// ```swift
/// let reader = try ArchiveReader(path: "backup.gvault")
/// while let entry = try reader.nextEntry() {
///   try reader.readData { chunk in hash.update(chunk) }
/// }
/// ```
public final class ArchiveReader {
  private let archive: OpaquePointer
  private let path: String?
  private let source: [UInt8]?
  private let stream: ReadStream?
  private var current: ArchiveEntry?
  private var offsetInEntry: Int64 = 0
  private var entryExhausted = true

  /// Opens the archive file at `path`; wraps `archive_read_open_filename`.
  public init(path: String, blockSize: Int = 128 * 1024) throws(ArchiveError) {
    self.archive = try ArchiveReader.makeArchive()
    self.path = path
    self.source = nil
    self.stream = nil
    try check(archive_read_open_filename(archive, path, blockSize))
  }

  /// Reads an archive from a stream: `read` fills the buffer it is given and returns how many
  /// bytes it put there, 0 at the end; what it throws becomes an ``ArchiveError`` (`EIO`) with
  /// its description. Wraps `archive_read_open` with a read callback.
  /// - Parameter name: what messages call the archive (a path or URL).
  public init(
    name: String?, blockSize: Int = 128 * 1024,
    read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int
  ) throws(ArchiveError) {
    self.archive = try ArchiveReader.makeArchive()
    self.path = name
    self.source = nil
    let stream = ReadStream(read: read, blockSize: blockSize)
    self.stream = stream
    let rc = archive_read_open(
      archive, Unmanaged.passUnretained(stream).toOpaque(), nil,
      { archive, client, block in
        let stream = Unmanaged<ReadStream>.fromOpaque(client!).takeUnretainedValue()
        do {
          let count = try stream.read(stream.buffer)
          block?.pointee = UnsafeRawPointer(stream.buffer.baseAddress)
          return count
        } catch {
          stream.failed = true
          gv_archive_set_error(archive, EIO, "reading the archive failed: \(error)")
          return -1
        }
      }, nil)
    try check(rc)
  }

  /// Reads an archive held in memory (the reader keeps the bytes alive);
  /// wraps `archive_read_open_memory`.
  public init(bytes: [UInt8]) throws(ArchiveError) {
    self.archive = try ArchiveReader.makeArchive()
    self.path = nil
    self.source = bytes
    self.stream = nil
    let rc = source!.withUnsafeBytes { buffer in
      // The array is never mutated and lives as long as the reader, so its storage is stable.
      archive_read_open_memory(archive, buffer.baseAddress, buffer.count)
    }
    try check(rc)
  }

  deinit {
    archive_read_free(archive)
  }

  private static func makeArchive() throws(ArchiveError) -> OpaquePointer {
    guard let archive = archive_read_new() else {
      throw ArchiveError(kind: .library(code: ARCHIVE_FATAL), message: "out of memory")
    }
    archive_read_support_filter_all(archive)
    archive_read_support_format_tar(archive)
    archive_read_support_format_zip(archive)
    return archive
  }

  /// The entry whose data is being read, if any.
  public var currentEntry: ArchiveEntry? { current }

  /// Moves to the next entry, skipping any unread data of the current one; wraps
  /// `archive_read_next_header`.
  /// - Returns: the entry's header, or `nil` at the end of the archive.
  /// - Throws: ``ArchiveError`` when the archive is damaged or truncated.
  public func nextEntry() throws(ArchiveError) -> ArchiveEntry? {
    if current != nil && !entryExhausted {
      // Skipping reads the rest, so a truncated entry is still noticed.
      let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
      defer { scratch.deallocate() }
      while try read(into: scratch) > 0 {}
    }
    let previous = current?.path
    current = nil
    var header: OpaquePointer?
    let rc = archive_read_next_header(archive, &header)
    if rc == ARCHIVE_EOF { return nil }
    let usable =
      rc == ARCHIVE_OK || (rc == ARCHIVE_WARN && ArchiveWarning.isLocaleConversion(archive))
    guard usable, let header else {
      throw makeError(
        code: rc, entry: previous.map { "after \($0)" } ?? "first entry", offset: nil)
    }
    let entryPath =
      archive_entry_pathname_utf8(header).map { String(cString: $0) }
      ?? archive_entry_pathname(header).map { String(cString: $0) } ?? ""
    let fileType = UInt32(archive_entry_filetype(header))
    let type: ArchiveEntryType
    switch fileType {
    case GV_AE_IFREG: type = .regular
    case GV_AE_IFDIR: type = .directory
    case GV_AE_IFLNK: type = .symlink
    default: type = .other(fileType)
    }
    let entry = ArchiveEntry(
      path: entryPath,
      size: archive_entry_size_is_set(header) != 0 ? archive_entry_size(header) : nil,
      type: type, modificationTime: Int64(archive_entry_mtime(header)),
      permissions: UInt32(archive_entry_perm(header)))
    current = entry
    offsetInEntry = 0
    entryExhausted = false
    return entry
  }

  /// Reads the next bytes of the current entry's data into `buffer`; wraps `archive_read_data`.
  /// - Returns: the number of bytes read; 0 at the end of the entry.
  /// - Throws: ``ArchiveError`` when the data is damaged, or ends before the entry's size.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(ArchiveError) -> Int {
    guard let entry = current else {
      throw ArchiveError(kind: .misuse("data read outside an entry"), archivePath: path)
    }
    if entryExhausted || buffer.isEmpty { return 0 }
    let n = archive_read_data(archive, buffer.baseAddress, buffer.count)
    if n < 0 {
      throw makeError(code: Int32(n), entry: entry.path, offset: offsetInEntry)
    }
    if n == 0 {
      entryExhausted = true
      if let size = entry.size, offsetInEntry != size {
        throw ArchiveError(
          kind: .truncated,
          message: "entry ends after \(offsetInEntry) of its \(size) bytes",
          archivePath: path, entry: entry.path, entryOffset: offsetInEntry,
          archiveOffset: archive_filter_bytes(archive, -1))
      }
      return 0
    }
    offsetInEntry += Int64(n)
    return n
  }

  /// Reads the rest of the current entry's data, passing it to `body` chunk by chunk.
  public func readData(chunkSize: Int = 256 * 1024, _ body: (UnsafeRawBufferPointer) throws -> Void)
    throws
  {
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
    defer { buffer.deallocate() }
    while true {
      let n = try read(into: buffer)
      if n == 0 { return }
      try body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
    }
  }

  /// Reads the rest of the current entry's data into memory.
  /// - Parameter limit: the largest entry accepted; a larger one throws rather than exhausting
  ///   memory.
  public func readAll(limit: Int = 256 << 20) throws(ArchiveError) -> [UInt8] {
    var bytes: [UInt8] = []
    try readAll(limit: limit, into: &bytes)
    return bytes
  }

  /// Reads the rest of the current entry's data into `bytes`, replacing what it held and
  /// reusing its storage when no one else holds it (a reader of many entries then allocates
  /// once), refusing entries larger than `limit` bytes.
  /// - Throws: ``ArchiveError`` (``ArchiveError/Kind/entryTooLarge(limit:)`` past `limit`).
  public func readAll(limit: Int = 256 << 20, into bytes: inout [UInt8]) throws(ArchiveError) {
    guard let entry = current else {
      throw ArchiveError(kind: .misuse("data read outside an entry"), archivePath: path)
    }
    if let size = entry.size, size > limit {
      throw ArchiveError(
        kind: .entryTooLarge(limit: limit), archivePath: path, entry: entry.path, entryOffset: 0)
    }
    bytes.removeAll(keepingCapacity: true)
    // The entry's size, when the archive gives it, is where the data is read straight into;
    // the rest (none, unless the size was not given or was wrong) goes through a small buffer.
    if let size = entry.size, size > 0 {
      bytes.appendZeros(count: Int(size))
      var done = 0
      while done < bytes.count {
        let n = try bytes.withUnsafeMutableBytes { whole in
          Result { () throws(ArchiveError) in
            try read(into: UnsafeMutableRawBufferPointer(rebasing: whole[done...]))
          }
        }.get()
        if n == 0 { break }
        done += n
      }
      bytes.removeLast(bytes.count - done)
      if done < Int(size) { return }
    }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    defer { buffer.deallocate() }
    while true {
      let n = try read(into: buffer)
      if n == 0 { return }
      guard bytes.count + n <= limit else {
        throw ArchiveError(
          kind: .entryTooLarge(limit: limit), archivePath: path, entry: entry.path,
          entryOffset: offsetInEntry)
      }
      bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
    }
  }

  /// The number of archive bytes (compressed) consumed so far.
  public var archiveOffset: Int64 { archive_filter_bytes(archive, -1) }

  private func check(_ rc: Int32) throws(ArchiveError) {
    if rc != ARCHIVE_OK { throw makeError(code: rc, entry: nil, offset: nil) }
  }

  private func makeError(code: Int32, entry: String?, offset: Int64?) -> ArchiveError {
    let message = archive_error_string(archive).map { String(cString: $0) }
    let truncated = message?.lowercased().contains("truncated") ?? false
    // The stream's own failure is the cause, whatever libarchive made of it.
    let kind: ArchiveError.Kind =
      stream?.failed == true ? .stream : truncated ? .truncated : .library(code: code)
    return ArchiveError(
      kind: kind, message: message,
      errno: archive_errno(archive), archivePath: path, entry: entry, entryOffset: offset,
      archiveOffset: archive_filter_bytes(archive, -1))
  }
}

/// The caller's stream and the block it reads into, for libarchive's read callback (which holds
/// it unretained: the reader keeps it alive).
private final class ReadStream {
  let read: (UnsafeMutableRawBufferPointer) throws -> Int
  let buffer: UnsafeMutableRawBufferPointer
  /// Whether `read` threw: the failure libarchive then reports is the stream's.
  var failed = false

  init(read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int, blockSize: Int) {
    self.read = read
    buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: blockSize, alignment: 16)
  }

  deinit { buffer.deallocate() }
}
