/// An archive being read from a backend, from its first byte to its last.
public protocol ArchiveInput: AnyObject {
  /// Fills the start of `buffer` with the next bytes.
  /// - Returns: how many bytes; 0 at the end of the archive.
  /// - Throws: ``StorageError``.
  func read(into buffer: UnsafeMutableRawBufferPointer) throws(StorageError) -> Int

  /// The archive's size in bytes, when known before it is read (not for a pipe).
  var size: Int64? { get }

  /// Reads `count` bytes at `offset`, apart from the sequential reads (a file or an object,
  /// not a pipe): what `find` reads of an archive. Fewer bytes come back only at the end.
  /// - Throws: ``StorageError`` (``StorageError/Kind/unsupported`` for a pipe).
  func read(at offset: Int64, count: Int) throws(StorageError) -> [UInt8]

  /// Reads `count` bytes at `offset` into `bytes`, replacing what it held and reusing its
  /// storage when no one else holds it: a reader of many members allocates once, not once a
  /// member. Fewer bytes come back only at the end.
  /// - Throws: ``StorageError`` (``StorageError/Kind/unsupported`` for a pipe).
  func read(at offset: Int64, count: Int, into bytes: inout [UInt8]) throws(StorageError)

  /// How many bytes one ranged read should fetch at once when a reader wants several ranges
  /// that follow each other: 0 where a read costs no more than its bytes (a disk), several MiB
  /// where each has a latency of its own (a request to object storage).
  var preferredReadSpan: Int { get }

  /// The bytes fetched so far from where the archive is kept, where reads are fetched and the
  /// input counts them (object storage): what came with it when it was opened included, and
  /// nothing served from memory counted again. Nil where reads are not fetched (a disk, a
  /// pipe): then what was read is what it cost.
  var bytesFetched: Int64? { get }
}

extension ArchiveInput {
  /// None: each range is read on its own.
  public var preferredReadSpan: Int { 0 }

  /// Not counted: reads are not fetched.
  public var bytesFetched: Int64? { nil }

  /// Reads through ``read(at:count:)``: a fresh array every time.
  public func read(at offset: Int64, count: Int, into bytes: inout [UInt8]) throws(StorageError) {
    bytes = try read(at: offset, count: count)
  }
}
