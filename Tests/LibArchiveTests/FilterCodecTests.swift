import LibArchive
import TestSupport
import Testing

@Suite("Buffers compressed with an archive filter")
struct FilterCodecTests {
  static let text = Array(
    String(repeating: "Core Data keeps its objects in SQLite. ", count: 2_000).utf8)

  @Test(arguments: ArchiveFilter.allCases)
  func aBufferComesBackAsItWasAfterCompression(filter: ArchiveFilter) throws {
    let packed = try FilterCodec.compress(Self.text, filter: filter)
    if filter != .none { #expect(packed.count < Self.text.count / 10) }
    #expect(try FilterCodec.decompress(packed, filter: filter, limit: 1 << 20) == Self.text)
    #expect(try FilterCodec.decompress([], filter: .none, limit: 1) == [])
  }

  @Test func zstdOutputIsAZstdStreamThatTheZstdToolReads() throws {
    let packed = try FilterCodec.compress(Self.text, filter: .zstd)
    #expect(Array(packed.prefix(4)) == [0x28, 0xB5, 0x2F, 0xFD])
  }

  @Test func truncatedOrOversizedInputIsAnErrorNotACrash() throws {
    // (A flipped byte inside a zstd frame may decode to other bytes: the archive's checksums
    // and seals catch that, not the filter.)
    let packed = try FilterCodec.compress(Self.text, filter: .zstd)
    #expect(throws: ArchiveError.self) {
      _ = try FilterCodec.decompress(
        Array(packed.prefix(packed.count / 2)), filter: .zstd, limit: 1 << 20)
    }
    let whole = try FilterCodec.compress(Self.text, filter: .gzip)
    #expect(throws: ArchiveError.self) {
      _ = try FilterCodec.decompress(whole, filter: .gzip, limit: 1_000)
    }
  }
}
