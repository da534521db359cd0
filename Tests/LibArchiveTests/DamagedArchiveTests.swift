import Foundation
import LibArchive
import TestSupport
import Testing

@Suite("Damaged archives")
struct DamagedArchiveTests {
  static func archiveBytes(filter: ArchiveFilter) throws -> [UInt8] {
    let directory = try TemporaryDirectory()
    let path = directory.path("a.tar").path
    let writer = try ArchiveWriter(path: path, filter: filter)
    var source = PatternStream(seed: 3)
    for i in 0..<3 { try writer.writeEntry(path: "entry\(i)", contents: source.next(20_000)) }
    try writer.close()
    return try Array(Data(contentsOf: URL(fileURLWithPath: path)))
  }

  static func entries(_ bytes: [UInt8]) throws -> [(String, [UInt8])] {
    let reader = try ArchiveReader(bytes: bytes)
    var result: [(String, [UInt8])] = []
    while let entry = try reader.nextEntry() { result.append((entry.path, try reader.readAll())) }
    return result
  }

  @Test func aCutInsideAnEntryThrowsNamingTheEntryAndOffset() throws {
    let bytes = try Self.archiveBytes(filter: .none)
    // Entry 1's data starts after entry 0 (512-byte header + 20,000 bytes padded) and its header.
    let cut = 512 + 20_480 + 512 + 5_000
    do {
      _ = try Self.entries(Array(bytes[0..<cut]))
      Issue.record("the truncated archive read without an error")
    } catch let error as ArchiveError {
      #expect(error.kind == .truncated)
      #expect(error.entry == "entry1")
      #expect(error.entryOffset != nil)
      #expect(error.description.contains("entry1"))
    }
  }

  @Test(arguments: ArchiveFilter.allCases)
  func noTruncationEverReadsAsAShorterEntry(filter: ArchiveFilter) throws {
    let bytes = try Self.archiveBytes(filter: filter)
    let original = try Self.entries(bytes)
    var thrown = 0
    let step = max(1, bytes.count / 1_500)
    for cut in stride(from: 0, to: bytes.count, by: step) {
      do {
        let read = try Self.entries(Array(bytes[0..<cut]))
        // Without an error, what was read is whole: a prefix of the original entries.
        #expect(read.count <= original.count)
        for (i, entry) in read.enumerated() {
          #expect(
            entry.0 == original[i].0 && entry.1 == original[i].1, "cut \(cut), entry \(entry.0)")
        }
      } catch {
        thrown += 1
      }
    }
    #expect(thrown > 0)
  }

  @Test(arguments: ArchiveFilter.allCases)
  func thousandsOfByteFlipsNeverCrash(filter: ArchiveFilter) throws {
    let bytes = try Self.archiveBytes(filter: filter)
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<1_000 {
      var damaged = bytes
      damaged[Int.random(in: 0..<damaged.count, using: &generator)] ^= UInt8.random(
        in: 1...255, using: &generator)
      _ = try? Self.entries(damaged)
    }
  }

  @Test func garbageIsNotAnArchive() {
    #expect(throws: ArchiveError.self) {
      _ = try Self.entries(Array("definitely not an archive, just some text".utf8))
    }
  }
}
