import Foundation
import TestSupport
import Testing

@testable import ObjectStore

extension SortedKeys {
  /// Adds `key`, made and added at once.
  func add(_ key: [UInt8]) throws {
    _ = make {
      $0.append(contentsOf: key)
      return true
    }
    try addMadeKey()
  }
}

@Suite("Keys of any length gathered as rows are written")
struct SortedKeysTests {
  static func read(_ keys: SortedKeys) throws -> [[UInt8]] {
    var ordered = try keys.inOrder()
    var read: [[UInt8]] = []
    var key: [UInt8] = []
    while try ordered.next(into: &key) { read.append(key) }
    return read
  }

  /// Keys of one to a few hundred bytes, many sharing their first eight, some repeated.
  static func randomKeys(_ count: Int, seed: UInt64) -> [[UInt8]] {
    var generator = SeededRandom(seed: seed)
    return (0..<count).map { _ in
      let head: [UInt8] =
        Int.random(in: 0..<3, using: &generator) == 0 ? [] : [3, 0x61, 0x62, 0x63]
      let length = [1, 2, 7, 8, 9, 30, 300].randomElement(using: &generator)!
      return head + (0..<length).map { _ in UInt8.random(in: 0...3, using: &generator) }
    }
  }

  @Test(arguments: [64, 1_000, SortedKeys.runBytes])
  func keysComeBackInByteOrderWhetherTheyWaitedInMemoryOrWereSpilled(runBytes: Int) throws {
    let directory = try TemporaryDirectory()
    let keys = SortedKeys(folder: directory.url.path, runBytes: runBytes)
    let added = Self.randomKeys(3_000, seed: UInt64(runBytes))
    for key in added { try keys.add(key) }
    // About 150 kB of keys: in memory at the default run size, else spilled in runs.
    #expect(keys.runs.isEmpty == (runBytes == SortedKeys.runBytes))
    let read = try Self.read(keys)
    #expect(read == added.sorted { $0.lexicographicallyPrecedes($1) })
    // The spilled runs' file had no name: nothing is left in the folder.
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
  }

  /// A key made for a row that is then not written is not kept: the next one made replaces it.
  @Test func aKeyMadeButNotAddedIsNotKept() throws {
    let directory = try TemporaryDirectory()
    let keys = SortedKeys(folder: directory.url.path, runBytes: 16)
    var added: [[UInt8]] = []
    for (index, key) in Self.randomKeys(200, seed: 9).enumerated() {
      #expect(
        keys.make {
          $0.append(contentsOf: key)
          return true
        })
      #expect(keys.withMadeKey { Array($0) } == key)
      if index % 3 != 0 {
        try keys.addMadeKey()
        added.append(key)
      }
      // A key that cannot be made leaves nothing.
      #expect(
        !keys.make {
          $0.append(9)
          return false
        })
    }
    #expect(try Self.read(keys) == added.sorted { $0.lexicographicallyPrecedes($1) })
  }

  @Test func noKeysComeBackAsNone() throws {
    let directory = try TemporaryDirectory()
    #expect(try Self.read(SortedKeys(folder: directory.url.path, runBytes: 2)).isEmpty)
  }
}
