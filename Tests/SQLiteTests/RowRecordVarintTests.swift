import SQLite
import Testing

@Suite("SQLite's variable-length integers")
struct RowRecordVarintTests {
  /// SQLite's varint read as its file format describes it: up to eight bytes of seven bits,
  /// big-endian, each but the last with its high bit set, and a ninth byte of eight bits.
  static func read(_ bytes: [UInt8]) -> (value: UInt64, length: Int)? {
    var value: UInt64 = 0
    for (index, byte) in bytes.enumerated() {
      if index == 8 { return (value << 8 | UInt64(byte), 9) }
      value = value << 7 | UInt64(byte & 0x7F)
      if byte < 0x80 { return (value, index + 1) }
    }
    return nil
  }

  @Test func everyValueReadsBackFromTheBytesItsLengthSays() {
    // xorshift64, seeded: the same values every run.
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> UInt64 {
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      return state
    }
    var values: [UInt64] = Array(0...20_000)
    for shift in 1...63 {
      let power = UInt64(1) << UInt64(shift)
      values += [power - 1, power, power + 1]
    }
    values += [.max, .max - 1] + (0..<5_000).map { _ in next() >> (next() % 64) }
    for value in values {
      var bytes: [UInt8] = [0xAA]
      RowRecord.appendVarint(value, to: &bytes)
      let read = Self.read(Array(bytes.dropFirst()))
      #expect(read?.value == value && read?.length == bytes.count - 1, "\(value)")
      #expect(RowRecord.varintLength(value) == bytes.count - 1, "\(value)")
      #expect(bytes.first == 0xAA)
    }
  }
}
