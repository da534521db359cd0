import TestSupport
import Testing
import Zlib

@Suite("Raw DEFLATE")
struct RawDeflateTests {
  static let text = Array(
    String(repeating: "Core Data model cache, raw DEFLATE. ", count: 2_000).utf8)

  @Test(arguments: [0, 1, 100, 70_000, 1_000_000])
  func compressedBytesInflateToTheOriginal(size: Int) throws {
    var generator = SystemRandomNumberGenerator()
    let input = (0..<size).map { i in
      i % 3 == 0 ? UInt8.random(in: 0...255, using: &generator) : UInt8(i % 7)
    }
    let compressed = try RawDeflate.compress(input)
    #expect(try RawDeflate.decompress(compressed) == input)
  }

  @Test func theOutputIsRawDeflateWithoutAZlibHeader() throws {
    let compressed = try RawDeflate.compress(Self.text, level: 9)
    #expect(compressed.count < Self.text.count / 20)
    // A zlib stream would start with 0x78; Python's raw inflate (wbits -15) must accept ours.
    #expect(compressed.first != 0x78)
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
  func pythonsRawDeflateAndOursAgree() throws {
    let script = """
      import sys, zlib
      data = sys.stdin.buffer.read()
      c = zlib.compressobj(6, zlib.DEFLATED, -15)
      sys.stdout.buffer.write(c.compress(data) + c.flush())
      """
    let result = try Subprocess.python(script, input: Self.text)
    #expect(result.status == 0)
    #expect(try RawDeflate.decompress(result.stdoutBytes) == Self.text)
    let check = try Subprocess.python(
      "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(sys.stdin.buffer.read(), -15))",
      input: try RawDeflate.compress(Self.text))
    #expect(check.stdoutBytes == Self.text)
  }

  @Test func aTruncatedStreamIsReportedAsTruncated() throws {
    let compressed = try RawDeflate.compress(Self.text)
    for cut in [1, compressed.count / 2, compressed.count - 1] {
      do {
        _ = try RawDeflate.decompress(Array(compressed[0..<cut]))
        Issue.record("cut at \(cut) inflated")
      } catch {
        #expect(error.kind == .truncated || error.kind == .corruptData, "cut at \(cut): \(error)")
      }
    }
  }

  @Test func garbageIsReportedAsCorruptWithItsOffset() {
    do {
      _ = try RawDeflate.decompress([0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
      Issue.record("garbage inflated")
    } catch {
      #expect(error.kind == .corruptData)
      #expect(error.description.contains("compressed byte"))
    }
  }

  @Test func outputBeyondTheLimitIsRefused() throws {
    let bomb = try RawDeflate.compress([UInt8](repeating: 0, count: 10_000_000))
    #expect(bomb.count < 20_000)
    do {
      _ = try RawDeflate.decompress(bomb, limit: 1_000_000)
      Issue.record("expected the limit to stop it")
    } catch {
      #expect(error.kind == .outputLimitExceeded(limit: 1_000_000))
    }
  }

  @Test func thousandsOfDamagedStreamsNeverCrash() throws {
    let compressed = try RawDeflate.compress(Array(Self.text[0..<4_000]))
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<3_000 {
      var damaged = compressed
      damaged[Int.random(in: 0..<damaged.count, using: &generator)] ^= UInt8.random(
        in: 1...255, using: &generator)
      _ = try? RawDeflate.decompress(damaged, limit: 1 << 20)
    }
  }
}
