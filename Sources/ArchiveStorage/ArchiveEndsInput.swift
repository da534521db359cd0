/// An archive read through a copy of its ends (``ArchiveEnds``): a ranged read the ends hold is
/// served from them, and any other read, and reading from the start as a stream, goes to the
/// archive itself, opened on the first such read.
public final class ArchiveEndsInput: ArchiveInput {
  /// The copy.
  public let ends: ArchiveEnds
  private let open: () throws(StorageError) -> any ArchiveInput
  private var archive: (any ArchiveInput)?
  /// What the copy took, and what was read of the archive where it does not count its fetches.
  private var counted: Int64

  /// Bytes fetched to serve the reads: the copy's, and what the archive fetched (what was
  /// read of it, where it does not count its fetches).
  public var fetched: Int64 { counted + (archive?.bytesFetched ?? 0) }

  /// ``fetched``.
  public var bytesFetched: Int64? { fetched }

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
    (self.ends, self.counted, self.preferredReadSpan, self.open) = (ends, fetched, span, open)
  }

  /// Reads through `ends`, read from `archive` itself (which counts what it fetched, or whose
  /// reads of them took `fetched` bytes), and through `archive` for what they do not hold.
  public convenience init(
    ends: ArchiveEnds, fetched: Int64, span: Int, opened archive: any ArchiveInput
  ) {
    self.init(
      ends: ends, fetched: archive.bytesFetched == nil ? fetched : 0, span: span
    ) { () throws(StorageError) -> any ArchiveInput in archive }
    self.archive = archive
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
    let input = try opened()
    let count = try input.read(into: buffer)
    counting(count, readFrom: input)
    return count
  }

  /// Bytes from the copy when it holds them all, else from the archive.
  public func read(at offset: Int64, count: Int) throws(StorageError) -> [UInt8] {
    if let bytes = ends.bytes(at: offset, count: count) { return Array(bytes) }
    let input = try opened()
    let bytes = try input.read(at: offset, count: count)
    counting(bytes.count, readFrom: input)
    return bytes
  }

  /// As ``read(at:count:)``, into `bytes`.
  public func read(at offset: Int64, count: Int, into bytes: inout [UInt8]) throws(StorageError) {
    if let held = ends.bytes(at: offset, count: count) {
      bytes.removeAll(keepingCapacity: true)
      bytes.append(contentsOf: held)
      return
    }
    let input = try opened()
    try input.read(at: offset, count: count, into: &bytes)
    counting(bytes.count, readFrom: input)
  }

  /// Counts `count` bytes read from the archive `input`, unless it counts what it fetched.
  private func counting(_ count: Int, readFrom input: any ArchiveInput) {
    if input.bytesFetched == nil { counted += Int64(count) }
  }
}
