import Foundation
import SQLite

/// The keys of an index on one integer column, gathered while its table's rows are written
/// (each row's value, NULL or an integer, and its rowid), given back in the index's order:
/// NULLs first, then by value, then by rowid, as SQLite compares the index's records.
///
/// Memory stays bounded however many rows come: keys wait in memory up to ``runLength`` of
/// them, are then sorted and written to a file that has no name (removed from its folder as
/// soon as it is made), and the runs are merged as they are read back.
final class IndexKeys {
  /// How many keys wait in memory before they are sorted and spilled (16 bytes each).
  static let runLength = 1 << 17

  private var nulls: SortedRuns
  private var values: SortedRuns

  /// Keys spilled, when there are many, to files in `folder`, `runLength` at a time.
  init(folder: String, runLength: Int = IndexKeys.runLength) {
    nulls = SortedRuns(folder: folder, runLength: runLength)
    values = SortedRuns(folder: folder, runLength: runLength)
  }

  /// How many runs went to files (for tests).
  var spilledRuns: Int { nulls.runs.count + values.runs.count }

  /// Adds the key of the row `rowid` whose column holds `value` (nil: NULL).
  /// - Throws: ``StoreError`` when a run cannot be spilled.
  func add(_ value: Int64?, rowid: Int64) throws(StoreError) {
    if let value {
      try values.add(UInt128(Self.ordered(value)) << 64 | UInt128(Self.ordered(rowid)))
    } else {
      try nulls.add(UInt128(Self.ordered(rowid)))
    }
  }

  /// The keys in the index's order, to be read once, after the last was added.
  /// - Throws: ``StoreError`` when the last run cannot be spilled.
  func inOrder() throws(StoreError) -> Ordered {
    Ordered(nulls: try nulls.merged(), values: try values.merged())
  }

  /// The keys in the index's order: NULLs first.
  struct Ordered {
    fileprivate var nulls: SortedRuns.Merged
    fileprivate var values: SortedRuns.Merged

    /// The next key; nil after the last.
    /// - Throws: ``StoreError`` when a run cannot be read back.
    mutating func next() throws(StoreError) -> (value: Int64?, rowid: Int64)? {
      if let null = try nulls.next() {
        return (nil, IndexKeys.integer(UInt64(truncatingIfNeeded: null)))
      }
      guard let key = try values.next() else { return nil }
      return (
        IndexKeys.integer(UInt64(truncatingIfNeeded: key >> 64)),
        IndexKeys.integer(UInt64(truncatingIfNeeded: key))
      )
    }
  }

  /// `value` as an unsigned number that sorts as the signed one does.
  private static func ordered(_ value: Int64) -> UInt64 { UInt64(bitPattern: value) ^ (1 << 63) }

  fileprivate static func integer(_ ordered: UInt64) -> Int64 {
    Int64(bitPattern: ordered ^ (1 << 63))
  }

  /// Numbers sorted in runs of at most `runLength`, spilled to a file, merged when read.
  fileprivate struct SortedRuns {
    let folder: String
    let runLength: Int
    private var waiting: [UInt128] = []
    /// The file the runs are spilled to, once one is.
    private var file: KeysFile?
    /// Each spilled run's entries, by index in the file.
    private(set) var runs: [Range<Int>] = []
    private static let entriesPerRead = 4096

    init(folder: String, runLength: Int) {
      self.folder = folder
      self.runLength = max(runLength, 1)
    }

    mutating func add(_ key: UInt128) throws(StoreError) {
      waiting.append(key)
      if waiting.count >= runLength { try spill() }
    }

    private mutating func spill() throws(StoreError) {
      waiting.sort()
      if self.file == nil { self.file = try KeysFile(in: folder) }
      let file = self.file!
      let start = runs.last?.upperBound ?? 0
      do {
        try waiting.withUnsafeBytes {
          try PositionalWrite.write($0, to: file.descriptor, at: Int64(start) * 16, path: folder)
        }
      } catch {
        throw StoreError(
          .database, "cannot write an index's keys", path: folder,
          underlying: error as? SQLiteError)
      }
      runs.append(start..<start + waiting.count)
      waiting.removeAll(keepingCapacity: true)
    }

    /// The numbers added, sorted, to be read once: those in memory when none were spilled,
    /// else every run (the last one spilled now) merged.
    mutating func merged() throws(StoreError) -> Merged {
      if runs.isEmpty {
        waiting.sort()
        defer { waiting = [] }
        return Merged(sorted: waiting)
      }
      if !waiting.isEmpty { try spill() }
      waiting = []
      // The runs were spilled to it.
      let file = self.file!
      var merged = Merged(sorted: [])
      merged.file = file
      merged.readers = runs.map { Reader(run: $0) }
      for index in merged.readers.indices {
        if let key = try merged.readers[index].next(from: file) {
          merged.heap.append((key, index))
        }
      }
      // A sorted array is a heap.
      merged.heap.sort { $0.key < $1.key }
      return merged
    }

    /// Sorted numbers read once: an array's, or runs merged through a heap of their next
    /// numbers (least at the top).
    struct Merged {
      private var sorted: [UInt128]
      private var position = 0
      fileprivate var file: KeysFile?
      fileprivate var readers: [Reader] = []
      fileprivate var heap: [(key: UInt128, reader: Int)] = []

      init(sorted: [UInt128]) { self.sorted = sorted }

      mutating func next() throws(StoreError) -> UInt128? {
        guard let file else {
          guard position < sorted.count else { return nil }
          position += 1
          return sorted[position - 1]
        }
        guard let top = heap.first else { return nil }
        if let key = try readers[top.reader].next(from: file) {
          heap[0] = (key, top.reader)
        } else {
          heap[0] = heap[heap.count - 1]
          heap.removeLast()
        }
        siftDown()
        return top.key
      }

      /// Moves the heap's top down to its place.
      private mutating func siftDown() {
        var parent = 0
        while true {
          let left = 2 * parent + 1
          guard left < heap.count else { return }
          let right = left + 1
          let least = right < heap.count && heap[right].key < heap[left].key ? right : left
          guard heap[least].key < heap[parent].key else { return }
          heap.swapAt(parent, least)
          parent = least
        }
      }
    }

    /// One run read back a few thousand keys at a time.
    fileprivate struct Reader {
      var run: Range<Int>
      var buffer: [UInt128] = []
      var position = 0

      mutating func next(from file: KeysFile) throws(StoreError) -> UInt128? {
        if position == buffer.count {
          guard !run.isEmpty else { return nil }
          let count = min(run.count, SortedRuns.entriesPerRead)
          buffer = [UInt128](repeating: 0, count: count)
          do throws(SQLiteError) {
            try PositionalRead.read(
              into: &buffer, of: file.descriptor, at: Int64(run.lowerBound) * 16,
              path: file.folder)
          } catch {
            throw StoreError(
              .database, "cannot read an index's keys back", path: file.folder, underlying: error)
          }
          run = run.dropFirst(count)
          position = 0
        }
        position += 1
        return buffer[position - 1]
      }
    }
  }
}
