import ArchiveStorage
import Testing

@Suite("A copy of an archive's ends: what it keeps, how it is read, what it refuses")
struct ArchiveEndsTests {
  /// The ends recorded of `bytes` written in pieces of `piece` bytes.
  static func recorded(_ bytes: [UInt8], piece: Int) -> ArchiveEnds {
    var recorder = ArchiveEnds.Recorder()
    var start = 0
    repeat {
      let end = min(bytes.count, start + piece)
      bytes[start..<end].withUnsafeBytes { recorder.append($0) }
      start = end
    } while start < bytes.count
    return recorder.ends
  }

  @Test(
    "the recorder keeps the first and last bytes of what was written, whatever the pieces",
    arguments: [0, 10, ArchiveEnds.headLimit, ArchiveEnds.headLimit + 1, 100_000, 3_000_000])
  func theRecorderKeepsTheEnds(size: Int) {
    let bytes = StorageClause.bytes(size, seed: UInt64(size) + 1)
    let head = min(size, ArchiveEnds.headLimit)
    let tail = min(size - head, ArchiveEnds.tailLimit)
    for piece in [997, 65_536, 1_000_000] {
      let ends = Self.recorded(bytes, piece: piece)
      #expect(ends.size == Int64(size))
      #expect(ends.head == Array(bytes.prefix(head)), "piece \(piece)")
      #expect(ends.tail == Array(bytes.suffix(tail)), "piece \(piece)")
    }
  }

  @Test("a range the ends hold is the archive's bytes, and one they do not is not served")
  func rangesAreServedOnlyWhenHeld() {
    let bytes = StorageClause.bytes(1_000_000, seed: 9)
    let ends = Self.recorded(bytes, piece: 65_536)
    let tailStart = bytes.count - ArchiveEnds.tailLimit
    for (offset, count) in [
      (0, 0), (0, 100), (ArchiveEnds.headLimit - 10, 10), (ArchiveEnds.headLimit - 10, 11),
      (500_000, 10), (tailStart - 1, 2), (tailStart, 50), (bytes.count - 32, 32),
      (bytes.count - 32, 1_000), (bytes.count, 10), (-1, 5),
    ] {
      let held = ends.bytes(at: Int64(offset), count: count)
      let inHead = offset >= 0 && offset + count <= ArchiveEnds.headLimit
      let inTail = offset >= tailStart
      #expect((held != nil) == (inHead || inTail), "\(offset) +\(count)")
      if let held {
        #expect(Array(held) == Array(bytes[offset..<min(bytes.count, offset + count)]))
      }
    }
  }

  @Test("ends decode to what was encoded")
  func endsRoundTrip() throws {
    for size in [0, 5, 40_000, 2_000_000] {
      let ends = Self.recorded(StorageClause.bytes(size, seed: 3), piece: 100_000)
      #expect(try ArchiveEnds(decoding: ends.encoded) == ends)
    }
  }

  @Test("a copy whose magic or lengths are wrong is refused as unreadable, never misread")
  func forgedCopiesAreRefused() throws {
    let encoded = Self.recorded(StorageClause.bytes(400_000, seed: 4), piece: 65_536).encoded
    func refused(_ bytes: [UInt8]) -> Bool {
      do {
        _ = try ArchiveEnds(decoding: bytes)
        return false
      } catch {
        return error.kind == .unreadable
      }
    }
    func with(_ offset: Int, _ value: [UInt8]) -> [UInt8] {
      var bytes = encoded
      bytes.replaceSubrange(offset..<offset + value.count, with: value)
      return bytes
    }
    #expect(refused([]))
    #expect(refused(Array(encoded.prefix(23))))
    #expect(refused(Array(encoded.dropLast())))
    #expect(refused(encoded + [0]))
    #expect(refused(with(0, Array("GVENDX".utf8))))
    #expect(refused(with(7, [2])))
    // The archive smaller than its two ends; a head or a tail past its limit.
    #expect(refused(with(8, [1, 0, 0, 0, 0, 0, 0, 0])))
    #expect(refused(with(8, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])))
    #expect(refused(with(16, [0xFF, 0xFF, 0xFF, 0x7F])))
    #expect(refused(with(20, [0xFF, 0xFF, 0xFF, 0xFF])))
    // Any byte of the lengths changed: refused, or ends whose lengths add up.
    for offset in 8..<24 {
      for bit in 0..<8 {
        var bytes = encoded
        bytes[offset] ^= 1 << bit
        if let ends = try? ArchiveEnds(decoding: bytes) {
          #expect(Int64(ends.head.count + ends.tail.count) <= ends.size)
        }
      }
    }
  }

  /// An archive in memory that counts its opening and what is read of it.
  final class CountingInput: ArchiveInput {
    let bytes: [UInt8]
    var read = 0
    var position = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    var size: Int64? { Int64(bytes.count) }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(StorageError) -> Int {
      let count = min(buffer.count, bytes.count - position)
      buffer.copyMemory(
        from: UnsafeRawBufferPointer(
          rebasing: bytes.withUnsafeBytes { $0 }[position..<position + count]))
      position += count
      read += count
      return count
    }
    func read(at offset: Int64, count: Int) throws(StorageError) -> [UInt8] {
      let range = Int(offset)..<min(bytes.count, Int(offset) + count)
      read += range.count
      return Array(bytes[range])
    }
  }

  @Test("reads the copy holds do not open the archive; others, and a stream, read the archive")
  func theInputReadsTheArchiveOnlyForWhatTheCopyLacks() throws {
    let bytes = StorageClause.bytes(600_000, seed: 5)
    let ends = Self.recorded(bytes, piece: 65_536)
    var opened = 0
    let archive = CountingInput(bytes)
    let input = ArchiveEndsInput(ends: ends, fetched: 1_000, span: 8 << 20) {
      () throws(StorageError) -> any ArchiveInput in
      opened += 1
      return archive
    }
    #expect(input.size == 600_000)
    #expect(input.preferredReadSpan == 8 << 20)
    #expect(try input.read(at: 599_968, count: 32) == Array(bytes[599_968...]))
    var into: [UInt8] = [1, 2, 3]
    try input.read(at: 100, count: 1_000, into: &into)
    #expect(into == Array(bytes[100..<1_100]))
    #expect(opened == 0 && input.fetched == 1_000)
    #expect(try input.read(at: 300_000, count: 500) == Array(bytes[300_000..<300_500]))
    try input.read(at: 200_000, count: 100, into: &into)
    #expect(into == Array(bytes[200_000..<200_100]))
    #expect(opened == 1 && input.fetched == 1_600)
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 700_000, alignment: 1)
    defer { buffer.deallocate() }
    #expect(try input.read(into: buffer) == 600_000)
    #expect(Array(buffer[0..<600_000]) == bytes)
    #expect(opened == 1 && input.fetched == 601_600)
  }

  /// An archive that counts what it fetched (object storage), with what it fetched when it
  /// was opened.
  final class FetchingInput: ArchiveInput {
    let inner: CountingInput
    let ahead: Int64
    init(_ bytes: [UInt8], ahead: Int64) { (inner, self.ahead) = (CountingInput(bytes), ahead) }
    var size: Int64? { inner.size }
    var bytesFetched: Int64? { ahead + Int64(inner.read) }
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(StorageError) -> Int {
      try inner.read(into: buffer)
    }
    func read(at offset: Int64, count: Int) throws(StorageError) -> [UInt8] {
      try inner.read(at: offset, count: count)
    }
  }

  @Test("what an archive that counts its fetches fetched is counted once, never the copy's reads")
  func anArchiveThatCountsItsFetchesIsCountedOnce() throws {
    let bytes = StorageClause.bytes(600_000, seed: 7)
    let ends = Self.recorded(bytes, piece: 65_536)
    let copied = ArchiveEndsInput(ends: ends, fetched: 1_000, span: 8 << 20) {
      () throws(StorageError) -> any ArchiveInput in FetchingInput(bytes, ahead: 4_096)
    }
    #expect(try copied.read(at: 0, count: 100) == Array(bytes[0..<100]))
    #expect(copied.fetched == 1_000)
    #expect(try copied.read(at: 300_000, count: 500) == Array(bytes[300_000..<300_500]))
    #expect(copied.fetched == 1_000 + 4_096 + 500)
    // Its end read from the archive itself (which counted it), then used as the copy.
    let archive = FetchingInput(bytes, ahead: 4_096)
    let tail = try archive.read(at: 590_000, count: 10_000)
    let opened = ArchiveEndsInput(
      ends: ArchiveEnds(size: 600_000, head: [], tail: tail), fetched: 10_000, span: 8 << 20,
      opened: archive)
    #expect(opened.fetched == 4_096 + 10_000)
    #expect(try opened.read(at: 599_000, count: 1_000) == Array(bytes[599_000...]))
    #expect(try opened.read(at: 1_000, count: 200) == Array(bytes[1_000..<1_200]))
    #expect(opened.fetched == 4_096 + 10_200 && opened.bytesFetched == opened.fetched)
  }

  @Test("an archive that is not the size its copy records is refused when reached")
  func anArchiveOfAnotherSizeIsRefused() {
    let ends = Self.recorded(StorageClause.bytes(600_000, seed: 6), piece: 65_536)
    let input = ArchiveEndsInput(ends: ends, fetched: 0, span: 0) {
      () throws(StorageError) -> any ArchiveInput in
      CountingInput(StorageClause.bytes(599_999, seed: 6))
    }
    #expect(throws: StorageError.self) { _ = try input.read(at: 300_000, count: 10) }
  }
}
