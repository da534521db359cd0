/// Decimals are REAL in Core Data's stores: read as the shortest decimal text that reads back
/// as the same double (`10.11`, `5`, `-0.05`), the text `Double.description` gives.
enum DecimalText {
  /// The text of `value`: an integer's digits when it is one (below 10^15), else the shortest
  /// text that reads back as `value`.
  static func format(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return fewPlaces(value) ?? String(value)
  }

  /// The double `text` (UTF-8) spells, as `Double(String)` reads it; nil when it spells none.
  ///
  /// Plain decimals (an optional `-`, digits, and a point with more digits after it) of at
  /// most 15 digits are read without making a string: the digits as an integer, exact as a
  /// double below 2^53, divided by a power of ten up to 10^22, exact too, so that the one
  /// rounding of the division gives the double nearest the decimal, as `strtod` does. Other
  /// texts (exponents, more digits, `nan`) go to `Double(String)`.
  static func double(_ text: UnsafeRawBufferPointer) -> Double? {
    var index = 0
    let negative = text.first == UInt8(ascii: "-")
    if negative { index = 1 }
    var digits: UInt64 = 0
    var count = 0
    var places = -1
    while index < text.count {
      let byte = text[index]
      if byte == UInt8(ascii: "."), places < 0 {
        places = 0
      } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), count < 15 {
        digits = digits * 10 + UInt64(byte - UInt8(ascii: "0"))
        count += 1
        if places >= 0 { places += 1 }
      } else {
        return Double(String(decoding: text, as: UTF8.self))
      }
      index += 1
    }
    // Digits before the point, and after it when there is one.
    guard count > 0, count > places, places != 0 else {
      return Double(String(decoding: text, as: UTF8.self))
    }
    let magnitude = Double(digits) / exactPowers[max(places, 0)]
    return negative ? -magnitude : magnitude
  }

  /// 10^0 to 10^22, each exact as a double.
  private static let exactPowers: [Double] = (0...22).map { power in
    (0..<power).reduce(1.0) { value, _ in value * 10 }
  }

  /// The most decimal places the quick path tries (prices, rates, measures).
  private static let mostPlaces = 4

  /// The text of `value` with the fewest decimal places, one to ``mostPlaces``, that reads
  /// back as `value`; nil when it needs more, or it is not between 10^-4 and 10^11 in size.
  ///
  /// With `k` places the candidate is `n / 10^k` for `n`, the integer nearest `value·10^k`.
  /// Dividing the double of `n` by `10^k` (both exact) rounds correctly, as reading the text
  /// does, so it reads back as `value` exactly when the quotient is `value`. With products
  /// below 2^50 (10^11·10^4 is), each is within far less than ½ of the exact one, so a text
  /// with fewer places that reads back as `value` would have been found first: the first
  /// found is the shortest, the one `Double.description` prints (which writes such values
  /// without an exponent).
  @inline(__always)
  static func fewPlaces(_ value: Double) -> String? {
    let magnitude = abs(value)
    guard magnitude >= 1e-4, magnitude < 1e11 else { return nil }
    for places in 1...mostPlaces {
      let scaled = (magnitude * exactPowers[places]).rounded()
      guard scaled / exactPowers[places] == magnitude else { continue }
      return text(UInt64(scaled), places: places, negative: value < 0)
    }
    return nil
  }

  /// `digits` written with `places` decimal places (at least one digit before the point).
  private static func text(_ digits: UInt64, places: Int, negative: Bool) -> String {
    // Sign, up to 16 digits, the point and a leading zero: 19 bytes at most.
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
      var end = buffer.count
      var rest = digits
      var written = 0
      while rest > 0 || written <= places {
        if written == places {
          end -= 1
          buffer[end] = UInt8(ascii: ".")
        }
        end -= 1
        buffer[end] = UInt8(ascii: "0") + UInt8(rest % 10)
        rest /= 10
        written += 1
      }
      if negative {
        end -= 1
        buffer[end] = UInt8(ascii: "-")
      }
      return String(decoding: UnsafeBufferPointer(rebasing: buffer[end...]), as: UTF8.self)
    }
  }
}
