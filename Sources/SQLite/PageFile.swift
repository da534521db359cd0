internal import CSQLite

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A database file that pages are appended to without SQLite, for building tables bottom-up
/// (``TableTreeWriter``): pages numbered as SQLite would allocate them (past the pointer-map
/// pages of an `auto_vacuum` database and the page holding the lock byte), their pointer-map
/// entries kept, and the header's page count and change counter written by ``finish()``.
///
/// No connection may write the file while this is open: open it between transactions, and a
/// connection that opens its next transaction after ``finish()`` sees the new change counter
/// and drops its cache, as after another process's commit. The file's durability is left to
/// that connection's next commit (whose `fsync` covers every page written here).
package final class PageFile {
  /// How a page is reached, as a pointer-map entry records it.
  package enum PointerKind: UInt8 {
    /// The first overflow page of a cell, reached from the B-tree page holding the cell.
    case firstOverflow = 3
    /// A later overflow page, reached from the one before it.
    case laterOverflow = 4
    /// A B-tree page other than a root, reached from its parent.
    case btree = 5
  }

  /// The file.
  package let path: String
  /// Bytes in a page.
  package let pageSize: Int
  /// Bytes of a page that hold data (the page size less the reserved bytes).
  package let usableSize: Int
  /// Whether the database keeps pointer maps (`auto_vacuum` full or incremental).
  package let hasPointerMaps: Bool
  /// Pages in the database, those appended included.
  package private(set) var pageCount: UInt32
  /// Pages the file held when it was opened or last handed back (``resume()``): the
  /// pointer-map pages among them are read before they are changed.
  private var pagesOnDisk: UInt32
  private var descriptor: Int32
  private let lockBytePage: UInt32
  private var pointerMaps: [UInt32: [UInt8]] = [:]
  /// Pages waiting to be written, which follow each other from `pendingFirst`.
  private var pending: [UInt8] = []
  private var pendingFirst: UInt32 = 0
  private static let pendingLimit = 1 << 20

  /// Opens the database at `path` to append pages, reading its header.
  /// - Throws: ``SQLiteError`` when the file cannot be opened or read, or its header is not a
  ///   database's.
  package init(path: String) throws(SQLiteError) {
    self.path = path
    let descriptor = open(path, O_RDWR | O_CLOEXEC)
    guard descriptor >= 0 else { throw Self.failure(SQLITE_CANTOPEN, "cannot open", path) }
    self.descriptor = descriptor
    var header = [UInt8](repeating: 0, count: 100)
    let got = header.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 100, 0) }
    guard got == 100, Array(header[0..<16]) == Array("SQLite format 3\u{0}".utf8) else {
      close(descriptor)
      throw Self.failure(SQLITE_NOTADB, "not a database header", path)
    }
    let rawSize = Int(Self.read16(header, 16))
    pageSize = rawSize == 1 ? 65536 : rawSize
    usableSize = pageSize - Int(header[20])
    hasPointerMaps = Self.read32(header, 52) != 0
    lockBytePage = UInt32(0x4000_0000 / pageSize + 1)
    pageCount = Self.pageCount(header, descriptor: descriptor, pageSize: pageSize)
    pagesOnDisk = pageCount
  }

  /// The page count the header gives when it is valid, else the file's size in pages (SQLite's
  /// rule).
  private static func pageCount(_ header: [UInt8], descriptor: Int32, pageSize: Int) -> UInt32 {
    let count = read32(header, 28)
    if count != 0 && read32(header, 24) == read32(header, 92) { return count }
    var status = stat()
    fstat(descriptor, &status)
    return UInt32(Int(status.st_size) / pageSize)
  }

  deinit {
    if descriptor >= 0 { close(descriptor) }
  }

  /// The next free page's number: the page after the last, past a pointer-map page (which it
  /// makes) or the lock-byte page.
  package func allocate() -> UInt32 {
    var page = pageCount + 1
    while page == lockBytePage || (hasPointerMaps && isPointerMap(page)) {
      if page != lockBytePage { pointerMaps[page] = [UInt8](repeating: 0, count: pageSize) }
      page += 1
    }
    pageCount = page
    return page
  }

  /// Writes `bytes` (one page) as page `page`.
  /// - Throws: ``SQLiteError`` when the file cannot be written (`SQLITE_FULL` for a full disk).
  package func write(_ bytes: [UInt8], at page: UInt32) throws(SQLiteError) {
    precondition(bytes.count == pageSize, "a page is pageSize bytes")
    let follows = !pending.isEmpty && page == pendingFirst + UInt32(pending.count / pageSize)
    if !follows || pending.count >= Self.pendingLimit {
      try flush()
      pendingFirst = page
    }
    pending.append(contentsOf: bytes)
  }

  /// Records that `page` is reached as `kind` from page `parent`, in the database's pointer map
  /// (nothing when it keeps none).
  /// - Throws: ``SQLiteError`` when an existing pointer-map page cannot be read.
  package func point(_ page: UInt32, _ kind: PointerKind, from parent: UInt32) throws(SQLiteError) {
    guard hasPointerMaps else { return }
    let map = pointerMapPage(of: page)
    if pointerMaps[map] == nil {
      var bytes = [UInt8](repeating: 0, count: pageSize)
      if map <= pagesOnDisk { try read(map, into: &bytes) }
      pointerMaps[map] = bytes
    }
    let offset = 5 * Int(page - map - 1)
    pointerMaps[map]![offset] = kind.rawValue
    Self.write32(parent, into: &pointerMaps[map]!, at: offset + 1)
  }

  /// Writes what waits, the pointer-map pages, and the header's page count and change counter
  /// (and the number that says the page count is valid), so that a connection may write the
  /// file until ``resume()``: it appends its pages after these, and drops what it cached of
  /// the file when its next transaction sees the new change counter.
  /// - Throws: ``SQLiteError`` when the file cannot be written.
  package func suspend() throws(SQLiteError) {
    try flush()
    for (page, bytes) in pointerMaps.sorted(by: { $0.key < $1.key }) {
      try writeNow(bytes, at: Int64(page - 1) * Int64(pageSize))
    }
    pointerMaps.removeAll()
    var header = [UInt8](repeating: 0, count: 100)
    try readBytes(&header, at: 0)
    let counter = Self.read32(header, 24) &+ 1
    Self.write32(counter, into: &header, at: 24)
    Self.write32(pageCount, into: &header, at: 28)
    Self.write32(counter, into: &header, at: 92)
    try writeNow(header, at: 0)
    pagesOnDisk = pageCount
  }

  /// Takes the file back after a connection committed to it: pages are appended after the
  /// last one it holds now.
  /// - Throws: ``SQLiteError`` when the header cannot be read.
  package func resume() throws(SQLiteError) {
    var header = [UInt8](repeating: 0, count: 100)
    try readBytes(&header, at: 0)
    pageCount = Self.pageCount(header, descriptor: descriptor, pageSize: pageSize)
    pagesOnDisk = pageCount
  }

  /// Writes what waits as ``suspend()`` does, then closes the file. Call it between the
  /// connection's transactions: closing a descriptor of a file drops every POSIX lock the
  /// process holds on it, SQLite's included.
  /// - Throws: ``SQLiteError`` when the file cannot be written.
  package func finish() throws(SQLiteError) {
    try suspend()
    close(descriptor)
    descriptor = -1
  }

  /// Whether `page` is a pointer-map page.
  package func isPointerMap(_ page: UInt32) -> Bool { pointerMapPage(of: page) == page }

  /// The pointer-map page holding `page`'s entry, by SQLite's rule: every
  /// `usableSize / 5 + 1` pages from page 2, moved one on where it would fall on the lock-byte
  /// page.
  func pointerMapPage(of page: UInt32) -> UInt32 {
    guard page >= 2 else { return 0 }
    let span = UInt32(usableSize / 5 + 1)
    var map = (page - 2) / span * span + 2
    if map == lockBytePage { map += 1 }
    return map
  }

  private func flush() throws(SQLiteError) {
    guard !pending.isEmpty else { return }
    try writeNow(pending, at: Int64(pendingFirst - 1) * Int64(pageSize))
    pending.removeAll(keepingCapacity: true)
  }

  private func read(_ page: UInt32, into bytes: inout [UInt8]) throws(SQLiteError) {
    try readBytes(&bytes, at: Int64(page - 1) * Int64(pageSize))
  }

  private func readBytes(_ bytes: inout [UInt8], at offset: Int64) throws(SQLiteError) {
    let count = bytes.count
    let got = bytes.withUnsafeMutableBytes {
      pread(descriptor, $0.baseAddress, count, off_t(offset))
    }
    guard got == count else { throw SQLiteError.fileFailure(writing: false, path: path) }
  }

  private func writeNow(_ bytes: [UInt8], at offset: Int64) throws(SQLiteError) {
    try PositionalWrite.write(bytes, to: descriptor, at: offset, path: path)
  }

  private static func failure(_ code: Int32, _ what: String, _ path: String) -> SQLiteError {
    let reason = errno == 0 ? "" : ": " + String(cString: strerror(errno))
    return SQLiteError(code: code, message: "\(what) the database's pages\(reason)", path: path)
  }

  private static func read16(_ bytes: [UInt8], _ at: Int) -> UInt16 {
    UInt16(bytes[at]) << 8 | UInt16(bytes[at + 1])
  }

  private static func read32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
    UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8
      | UInt32(bytes[at + 3])
  }

  /// Writes `value` big-endian at `at` of `bytes`, as SQLite writes page numbers.
  static func write32(_ value: UInt32, into bytes: inout [UInt8], at: Int) {
    for index in 0..<4 { bytes[at + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * index)) }
  }

  /// Appends `value` big-endian to `bytes`.
  static func append32(_ value: UInt32, to bytes: inout [UInt8]) {
    for index in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (24 - 8 * index))) }
  }
}
