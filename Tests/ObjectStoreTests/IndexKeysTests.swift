import Foundation
import TestSupport
import Testing

@testable import ObjectStore

@Suite("An index's keys gathered as rows are written")
struct IndexKeysTests {
  /// The keys in the order SQLite keeps an index on an integer column: NULLs first, then by
  /// value, then by rowid.
  static func expected(_ keys: [(Int64?, Int64)]) -> [(Int64?, Int64)] {
    keys.sorted {
      switch ($0.0, $1.0) {
      case (nil, nil): $0.1 < $1.1
      case (nil, _): true
      case (_, nil): false
      case (let a?, let b?): a == b ? $0.1 < $1.1 : a < b
      }
    }
  }

  static func read(_ keys: IndexKeys) throws -> [(Int64?, Int64)] {
    var ordered = try keys.inOrder()
    var read: [(Int64?, Int64)] = []
    while let key = try ordered.next() { read.append((key.value, key.rowid)) }
    return read
  }

  @Test(arguments: [1, 3, 64, IndexKeys.runLength])
  func keysComeBackInTheIndexsOrderWhetherTheyWaitedInMemoryOrWereSpilled(runLength: Int)
    throws
  {
    let directory = try TemporaryDirectory()
    var generator = SeededRandom(seed: UInt64(runLength))
    var added: [(Int64?, Int64)] = []
    let keys = IndexKeys(folder: directory.url.path, runLength: runLength)
    // Rowids ascend within each of three runs of an entity's rows, interleaved between them.
    for run in 0..<3 {
      for step in 0..<700 {
        let rowid = Int64(step * 3 + run) - 50
        let value: Int64? =
          Int.random(in: 0..<5, using: &generator) == 0
          ? nil
          : [.min, .max, -1, 0, 1, Int64.random(in: -9...9, using: &generator)].randomElement(
            using: &generator)!
        try keys.add(value, rowid: rowid)
        added.append((value, rowid))
      }
    }
    // 2,100 keys: in memory at the default run length, else spilled in runs.
    #expect((keys.spilledRuns == 0) == (runLength == IndexKeys.runLength))
    let read = try Self.read(keys)
    let expected = Self.expected(added)
    #expect(read.count == expected.count)
    #expect(zip(read, expected).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 })
    // The spilled files had no name: nothing is left in the folder.
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
  }

  @Test func noKeysComeBackAsNone() throws {
    let directory = try TemporaryDirectory()
    #expect(try Self.read(IndexKeys(folder: directory.url.path, runLength: 2)).isEmpty)
  }
}
