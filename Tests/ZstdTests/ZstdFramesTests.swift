import Foundation
import Testing
import Zstd

@Suite("zstd frames")
struct ZstdFramesTests {
  static func sample(_ size: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<size).map { i in
      i % 3 == 0 ? UInt8.random(in: 0...255, using: &generator) : UInt8(i % 7)
    }
  }

  @Test(arguments: [0, 1, 100, 70_000, 1_000_000])
  func aFrameDecompressesToWhatWasCompressed(size: Int) throws {
    let frames = try ZstdFrames()
    let input = Self.sample(size)
    let frame = try frames.compress(input)
    #expect(
      ZstdFrames.contentSize(of: UnsafeRawBufferPointer(start: frame, count: frame.count)) == size)
    #expect(try frames.decompress(frame, limit: size) == input)
  }

  @Test func oneContextMakesManyFramesEachReadableAlone() throws {
    let frames = try ZstdFrames()
    let inputs = (0..<50).map { Self.sample(1_000 + $0 * 37) }
    let made = try inputs.map { try frames.compress($0) }
    let reader = try ZstdFrames()
    for (frame, input) in zip(made, inputs).reversed() {
      #expect(try reader.decompress(frame, limit: 1 << 20) == input)
    }
  }

  @Test func aDamagedFrameIsRefusedByItsChecksum() throws {
    let frames = try ZstdFrames()
    let input = Array(String(repeating: "checksummed content ", count: 500).utf8)
    var frame = try frames.compress(input)
    // The last four bytes are the checksum; damage the content's encoding before them.
    frame[frame.count - 6] ^= 0x40
    #expect(throws: ZstdError.self) { try frames.decompress(frame, limit: 1 << 20) }
    var checksum = try frames.compress(input)
    checksum[checksum.count - 1] ^= 0x01
    #expect(throws: ZstdError(kind: .corruptData, message: "Restored data doesn't match checksum"))
    {
      try frames.decompress(checksum, limit: 1 << 20)
    }
  }

  @Test func aFrameLargerThanTheLimitIsRefusedBeforeDecompressing() throws {
    let frames = try ZstdFrames()
    let frame = try frames.compress([UInt8](repeating: 7, count: 10_000))
    #expect(throws: ZstdError(kind: .outputLimitExceeded(limit: 9_999))) {
      try frames.decompress(frame, limit: 9_999)
    }
  }

  @Test func truncatedOrTrailingBytesAreRefused() throws {
    let frames = try ZstdFrames()
    let frame = try frames.compress(Self.sample(5_000))
    #expect(throws: ZstdError.self) {
      try frames.decompress(Array(frame.dropLast()), limit: 1 << 20)
    }
    #expect(throws: ZstdError.self) { try frames.decompress(frame + [0], limit: 1 << 20) }
    #expect(throws: ZstdError.self) { try frames.decompress([1, 2, 3], limit: 1 << 20) }
  }

  @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zstd"), "needs zstd"))
  func theZstdCommandReadsAFrameAndItsChecksum() throws {
    let frames = try ZstdFrames()
    let input = Self.sample(200_000)
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "gv-zstd-\(UUID().uuidString).zst")
    defer { try? FileManager.default.removeItem(at: path) }
    try Data(try frames.compress(input)).write(to: path)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/zstd")
    process.arguments = ["-dc", path.path]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(Array(output) == input)
  }
}
