/// Standard base64 (RFC 4648, with padding), as XML property lists hold data.
public enum Base64 {
  private static let alphabet = Array(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  private static let decodeTable: [UInt8] = {
    var table = [UInt8](repeating: 0xFF, count: 256)
    for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
    return table
  }()

  /// Encodes bytes, breaking lines after `lineLength` characters when it is nonzero.
  public static func encode(_ bytes: [UInt8], lineLength: Int = 0, lineSeparator: String = "\n")
    -> String
  {
    var output: [UInt8] = []
    output.reserveCapacity((bytes.count + 2) / 3 * 4)
    var i = 0
    var column = 0
    func emit(_ byte: UInt8) {
      if lineLength > 0 && column == lineLength {
        output.append(contentsOf: lineSeparator.utf8)
        column = 0
      }
      output.append(byte)
      column += 1
    }
    while i + 3 <= bytes.count {
      let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
      emit(alphabet[Int(n >> 18 & 63)])
      emit(alphabet[Int(n >> 12 & 63)])
      emit(alphabet[Int(n >> 6 & 63)])
      emit(alphabet[Int(n & 63)])
      i += 3
    }
    let rest = bytes.count - i
    if rest > 0 {
      let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
      emit(alphabet[Int(n >> 18 & 63)])
      emit(alphabet[Int(n >> 12 & 63)])
      emit(rest == 2 ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
      emit(UInt8(ascii: "="))
    }
    return String(decoding: output, as: UTF8.self)
  }

  /// Decodes base64, ignoring whitespace; `nil` when a character is not base64 or padding is
  /// misplaced.
  public static func decode(_ text: String) -> [UInt8]? {
    var output: [UInt8] = []
    var accumulator: UInt32 = 0
    var bits = 0
    var padding = 0
    for byte in text.utf8 {
      switch byte {
      case 0x20, 0x09, 0x0A, 0x0D: continue
      case UInt8(ascii: "="):
        padding += 1
        continue
      default:
        guard padding == 0 else { return nil }
        let value = decodeTable[Int(byte)]
        guard value != 0xFF else { return nil }
        accumulator = accumulator << 6 | UInt32(value)
        bits += 6
        if bits >= 8 {
          bits -= 8
          output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
        }
      }
    }
    guard padding <= 2 else { return nil }
    return output
  }
}
