import Bytes
import Testing

@Suite("Appending zero bytes")
struct AppendZerosTests {
  @Test(
    "what the array held stays, followed by exactly that many zeros",
    arguments: [0, 1, 65_535, 65_536, 65_537, 300_001])
  func theBytesBeforeStayAndTheZerosFollow(count: Int) {
    var bytes: [UInt8] = [7, 8, 9]
    bytes.appendZeros(count: count)
    #expect(bytes.count == 3 + count)
    #expect(bytes.prefix(3) == [7, 8, 9])
    #expect(bytes.dropFirst(3).allSatisfy { $0 == 0 })
  }

  @Test("a count that is not positive appends nothing")
  func aCountThatIsNotPositiveAppendsNothing() {
    var bytes: [UInt8] = [1]
    bytes.appendZeros(count: -5)
    #expect(bytes == [1])
  }

  @Test("storage with room is filled in place, not replaced")
  func storageWithRoomIsReused() {
    var bytes = [UInt8](repeating: 0xFF, count: 200_000)
    bytes.removeAll(keepingCapacity: true)
    let before = bytes.withUnsafeBufferPointer { $0.baseAddress }
    bytes.appendZeros(count: 200_000)
    #expect(bytes.withUnsafeBufferPointer { $0.baseAddress } == before)
    #expect(bytes.allSatisfy { $0 == 0 })
  }
}
