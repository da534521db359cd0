/// An archive read through a copy of its ends (``ArchiveEnds``): a ranged read the ends hold is
/// served from them, and any other read, and reading from the start as a stream, goes to the
/// archive itself, opened on the first such read.
public final class ArchiveEndsInput: ArchiveInput {
  /// The copy.
  public let ends: ArchiveEnds
  private let open: () throws(StorageError) -> any ArchiveInput
  private var archive: (any ArchiveInput)?
  /// Bytes fetched to serve the reads: the copy's, and what was read of the archive.
  public private(set) var fetched: Int64

  /// The archive's ``ArchiveInput/preferredReadSpan``: reads the copy does not hold are the
  /// archive's reads.
  public let preferredReadSpan: Int

  /// Reads through `ends`, which took `fetched` bytes to get, and through the archive `open`
  /// opens for what they do not hold, whose reads fetch `span` bytes at once
  /// (``ArchiveInput/preferredReadSpan``).
  public init(
    ends: ArchiveEnds, fetched: Int64, span: Int,
    archive open: @escaping () throws(StorageError) -> any ArchiveInput
  ) {
    (self.ends, self.fetched, self.preferredReadSpan, self.open) = (ends, fetched, span, open)
  }

  /// The archive's size, as the copy records it.
  public var size: Int64? { ends.size }

  private func opened() throws(StorageError) -> any ArchiveInput {
    if let archive { return archive }
    let input = try open()
    guard input.size == nil || input.size == ends.size else {
      throw StorageError(
        .unreadable,
        "the archive's size (\(input.size ?? 0) bytes) is not its copied ends' (\(ends.size))")
    }
    archive = input
    return input
  }

  /// Reads the archive from its start, as a stream.
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws(StorageError) -> Int {
    let count = try opened().read(into: buffer)
    fetched += Int64(count)
    return count
  }

  /// Bytes from the copy when it holds them all, else from the archive.
  public func read(at offset: Int64, count: Int) throws(StorageError) -> [UInt8] {
    if let bytes = ends.bytes(at: offset, count: count) { return Array(bytes) }
    let bytes = try opened().read(at: offset, count: count)
    fetched += Int64(bytes.count)
    return bytes
  }

  /// As ``read(at:count:)``, into `bytes`.
  public func read(at offset: Int64, count: Int, into bytes: inout [UInt8]) throws(StorageError) {
    if let held = ends.bytes(at: offset, count: count) {
      bytes.removeAll(keepingCapacity: true)
      bytes.append(contentsOf: held)
      return
    }
    try opened().read(at: offset, count: count, into: &bytes)
    fetched += Int64(bytes.count)
  }
}
