internal import Bytes
import Foundation
import SQLite

/// The keys of an index on any columns (``IndexSortKey``s: bytes that compare as SQLite orders
/// the index's records), gathered while its table's rows are written, given back sorted.
/// ``IndexKeys`` does the same for one integer column, sixteen bytes a key; these keys are as
/// long as their texts and blobs.
///
/// Memory stays bounded however many rows come: keys wait in memory up to ``runBytes`` of
/// them, are then sorted and written to a file that has no name on a thread of their own (one
/// run at a time, while the next is gathered), and the runs are merged as they are read back.
final class SortedKeys {
  /// How many bytes of keys wait in memory before they are sorted and spilled.
  static let runBytes = 4 << 20
  /// How many bytes of a sorted run are written at a time.
  static let writeLength = 1 << 20
  /// How many bytes of a spilled run are read back at a time.
  static let readLength = 1 << 16

  /// A key waiting in memory: where it lies in `bytes`, and its first eight bytes (zeros after
  /// a shorter key's end) as one number, which orders most pairs of keys alone.
  fileprivate struct Entry {
    var prefix: UInt64
    var start: UInt32
    var length: UInt32
  }

  private let folder: String
  private let runBytes: Int
  private var bytes: [UInt8] = []
  private var entries: [Entry] = []
  private var file: KeysFile?
  /// Each spilled run's bytes in the file: its keys, each after its length (four bytes).
  private(set) var runs: [Range<Int64>] = []
  /// Where runs are sorted and written, one at a time.
  private let spilling = DispatchQueue(label: "graphvault.index-keys")
  /// What the last spill found: set on `spilling`, read after it is waited for.
  private let outcome = SpillOutcome()

  /// Keys spilled, when there are many, to a file in `folder`, `runBytes` at a time.
  init(folder: String, runBytes: Int = SortedKeys.runBytes) {
    self.folder = folder
    self.runBytes = max(runBytes, 1)
  }

  /// Where the keys added end in `bytes`: a key made after them and not added lies beyond.
  private var added = 0

  /// Makes the key of a row about to be written, which `body` appends to the bytes it is
  /// given, in place of one made before and not added; false, keeping nothing, when `body`
  /// returns false.
  func make(_ body: (inout [UInt8]) -> Bool) -> Bool {
    bytes.removeSubrange(added...)
    guard body(&bytes) else {
      bytes.removeSubrange(added...)
      return false
    }
    return true
  }

  /// The key made last, not yet added.
  func withMadeKey<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[added...])) }
  }

  /// Adds the key made last (``make(_:)``).
  /// - Throws: ``StoreError`` when a run cannot be spilled.
  func addMadeKey() throws(StoreError) {
    let prefix = withMadeKey { Self.prefix(of: $0) }
    entries.append(
      Entry(prefix: prefix, start: UInt32(added), length: UInt32(bytes.count - added)))
    added = bytes.count
    if bytes.count >= runBytes { try spill() }
  }

  /// The keys in order, to be read once, after the last was added.
  /// - Throws: ``StoreError`` when the last run cannot be spilled.
  func inOrder() throws(StoreError) -> Ordered {
    bytes.removeSubrange(added...)
    if runs.isEmpty {
      Self.sort(&entries, of: bytes)
      defer {
        bytes = []
        entries = []
      }
      return Ordered(bytes: bytes, entries: entries)
    }
    if !entries.isEmpty { try spill() }
    bytes = []
    entries = []
    try waitForSpill()
    return try Ordered(file: file!, runs: runs)
  }

  /// The first eight bytes of `key` as a big-endian number, zeros after its end.
  private static func prefix(of key: UnsafeRawBufferPointer) -> UInt64 {
    var prefix: UInt64 = 0
    for index in 0..<8 { prefix = prefix << 8 | UInt64(index < key.count ? key[index] : 0) }
    return prefix
  }

  /// Whether key `a` sorts before key `b`: bytes compared in order, a key that begins the
  /// other first.
  private static func precedes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    let common = min(a.count, b.count)
    let order = memcmp(a.baseAddress!, b.baseAddress!, common)
    return order != 0 ? order < 0 : a.count < b.count
  }

  /// Sorts `entries`, keys in `bytes`.
  private static func sort(_ entries: inout [Entry], of bytes: [UInt8]) {
    bytes.withUnsafeBytes { all in
      entries.sort { a, b in
        if a.prefix != b.prefix { return a.prefix < b.prefix }
        return Self.precedes(
          UnsafeRawBufferPointer(rebasing: all[Int(a.start)..<Int(a.start + a.length)]),
          UnsafeRawBufferPointer(rebasing: all[Int(b.start)..<Int(b.start + b.length)]))
      }
    }
  }

  /// Hands the keys waiting in memory to the spilling thread, which sorts them and writes them
  /// to the file as a run, once the run before has been written.
  /// - Throws: ``StoreError`` when the file cannot be made or the run before not written.
  private func spill() throws(StoreError) {
    try waitForSpill()
    if file == nil { file = try KeysFile(in: folder) }
    let file = self.file!
    let start = runs.last?.upperBound ?? 0
    runs.append(start..<start + Int64(bytes.count + 4 * entries.count))
    let outcome = self.outcome
    outcome.running = true
    spilling.async { [bytes, entries] in
      var entries = entries
      Self.sort(&entries, of: bytes)
      do throws(StoreError) {
        try Self.write(entries, of: bytes, to: file, at: start)
      } catch {
        outcome.failure = error
      }
      outcome.done.signal()
    }
    bytes = []
    entries = []
    added = 0
  }

  /// Waits for the run being spilled, if one is.
  /// - Throws: ``StoreError`` when it could not be written.
  private func waitForSpill() throws(StoreError) {
    guard outcome.running else { return }
    outcome.done.wait()
    outcome.running = false
    if let failure = outcome.failure { throw failure }
  }

  /// Writes sorted `entries`, keys in `bytes`, as a run at `start` of `file`, a piece at a
  /// time.
  private static func write(
    _ entries: [Entry], of bytes: [UInt8], to file: KeysFile, at start: Int64
  ) throws(StoreError) {
    var piece: [UInt8] = []
    piece.reserveCapacity(writeLength + 4096)
    var offset = start
    for (index, entry) in entries.enumerated() {
      withUnsafeBytes(of: entry.length.littleEndian) { piece.append(contentsOf: $0) }
      bytes.withUnsafeBytes {
        piece.append(
          contentsOf: UnsafeRawBufferPointer(
            rebasing: $0[Int(entry.start)..<Int(entry.start + entry.length)]))
      }
      guard piece.count >= writeLength || index == entries.count - 1 else { continue }
      do {
        try PositionalWrite.write(piece, to: file.descriptor, at: offset, path: file.folder)
      } catch {
        throw StoreError(
          .database, "cannot write an index's keys", path: file.folder, underlying: error)
      }
      offset += Int64(piece.count)
      piece.removeAll(keepingCapacity: true)
    }
  }

  /// Whether a run is being spilled, and what its spill found. The owner sets `running` and
  /// waits on `done`; the spilling thread sets `failure` before it signals `done`.
  private final class SpillOutcome: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    var running = false
    var failure: StoreError?
  }

  /// The keys in order, read once: those kept in memory, or the spilled runs merged through a
  /// heap of their next keys (least at the top).
  struct Ordered {
    private var bytes: [UInt8] = []
    private var entries: [Entry] = []
    private var position = 0
    private var file: KeysFile?
    private var readers: [Reader] = []
    /// Readers that have a key, as a heap by their keys.
    private var heap: [Int] = []

    fileprivate init(bytes: [UInt8], entries: [Entry]) {
      self.bytes = bytes
      self.entries = entries
    }

    fileprivate init(file: KeysFile, runs: [Range<Int64>]) throws(StoreError) {
      self.file = file
      readers = runs.map { Reader(run: $0) }
      for index in readers.indices where try readers[index].advance(in: file) {
        heap.append(index)
      }
      for start in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: start) }
    }

    /// Puts the next key into `key` (replacing what it held); false after the last.
    /// - Throws: ``StoreError`` when a run cannot be read back.
    mutating func next(into key: inout [UInt8]) throws(StoreError) -> Bool {
      key.removeAll(keepingCapacity: true)
      guard let file else {
        guard position < entries.count else { return false }
        let entry = entries[position]
        key.append(contentsOf: bytes[Int(entry.start)..<Int(entry.start + entry.length)])
        position += 1
        return true
      }
      guard let top = heap.first else { return false }
      readers[top].withKey { key.append(contentsOf: $0) }
      if try !readers[top].advance(in: file) {
        heap[0] = heap[heap.count - 1]
        heap.removeLast()
      }
      siftDown(from: 0)
      return true
    }

    private func less(_ a: Int, _ b: Int) -> Bool {
      readers[a].withKey { first in
        readers[b].withKey { second in SortedKeys.precedes(first, second) }
      }
    }

    /// Moves the heap's entry at `start` down to its place.
    private mutating func siftDown(from start: Int) {
      var parent = start
      while true {
        let left = 2 * parent + 1
        guard left < heap.count else { return }
        let right = left + 1
        let least = right < heap.count && less(heap[right], heap[left]) ? right : left
        guard less(heap[least], heap[parent]) else { return }
        heap.swapAt(parent, least)
        parent = least
      }
    }
  }

  /// One spilled run read back ``readLength`` bytes at a time, at its current key.
  fileprivate struct Reader {
    var run: Range<Int64>
    var buffer: [UInt8] = []
    /// The current key's bytes in `buffer`.
    var key: Range<Int> = 0..<0

    init(run: Range<Int64>) { self.run = run }

    func withKey<Result>(_ body: (UnsafeRawBufferPointer) -> Result) -> Result {
      buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[key])) }
    }

    /// Moves to the next key; false after the last.
    mutating func advance(in file: KeysFile) throws(StoreError) -> Bool {
      var start = key.upperBound
      if buffer.count - start < 4 {
        guard try refill(from: start, wanting: 4, in: file) else { return false }
        start = 0
      }
      let length = buffer.withUnsafeBytes {
        Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
      }
      if buffer.count - start < 4 + length {
        guard try refill(from: start, wanting: 4 + length, in: file) else {
          throw Self.cutShort(file)
        }
        start = 0
      }
      key = start + 4..<start + 4 + length
      return true
    }

    /// Keeps the buffer's bytes from `start` and reads more after them, at least `wanting` in
    /// all; false when the run has ended with none kept.
    private mutating func refill(from start: Int, wanting: Int, in file: KeysFile)
      throws(StoreError) -> Bool
    {
      buffer.removeSubrange(0..<start)
      key = 0..<0
      let kept = buffer.count
      let count = Int(min(Int64(max(SortedKeys.readLength, wanting - kept)), Int64(run.count)))
      if count == 0 {
        if kept == 0 { return false }
        throw Self.cutShort(file)
      }
      buffer.appendZeros(count: count)
      do throws(SQLiteError) {
        try PositionalRead.read(
          into: &buffer, fromByte: kept, of: file.descriptor, at: run.lowerBound,
          path: file.folder)
      } catch {
        throw StoreError(
          .database, "cannot read an index's keys back", path: file.folder, underlying: error)
      }
      run = run.dropFirst(count)
      guard buffer.count >= wanting else { throw Self.cutShort(file) }
      return true
    }

    private static func cutShort(_ file: KeysFile) -> StoreError {
      StoreError(
        .database, "cannot read an index's keys back", path: file.folder,
        underlying: SQLiteError.fileFailure(writing: false, path: file.folder))
    }
  }
}
