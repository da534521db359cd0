import PropertyList

/// `NSDecimalNumber` as `NSKeyedArchiver` keeps it: a mantissa of up to eight 16-bit words
/// (`NS.mantissa`, little-endian bytes, `NS.mantissa.bo` 1), `NS.length` words used, a base-10
/// `NS.exponent` and `NS.isNegative`; here for decimal default values in compiled models.
enum DecimalArchive {
  static let classes = ["NSDecimalNumber", "NSNumber", "NSValue", "NSObject"]

  /// Encodes decimal text (`12.50`, `-0.001`, `3e2`); text that does not fit a 64-bit mantissa
  /// is written as an `NSNumber` double.
  static func encode(_ text: String, into builder: inout KeyedArchiveBuilder)
    -> KeyedArchiveBuilder.Value
  {
    guard let (negative, mantissa, exponent) = parse(text) else {
      return .real(Double(text) ?? 0)
    }
    var bytes = [UInt8](repeating: 0, count: 16)
    var rest = mantissa
    var length = 0
    for index in 0..<8 where rest > 0 {
      bytes[2 * index] = UInt8(rest & 0xFF)
      bytes[2 * index + 1] = UInt8((rest >> 8) & 0xFF)
      rest >>= 16
      length = index + 1
    }
    let object = builder.makeObject(classes: classes)
    builder.set(.inline(.integer(Int64(exponent))), forKey: "NS.exponent", of: object)
    builder.set(.inline(.integer(Int64(length))), forKey: "NS.length", of: object)
    builder.set(.inline(.bool(negative)), forKey: "NS.isNegative", of: object)
    builder.set(.inline(.bool(true)), forKey: "NS.compact", of: object)
    builder.set(.inline(.integer(1)), forKey: "NS.mantissa.bo", of: object)
    builder.set(.inline(.data(bytes)), forKey: "NS.mantissa", of: object)
    return .object(object)
  }

  /// The decimal text of an archived `NSDecimalNumber` (`nil` when it is not one, or its
  /// mantissa does not fit 64 bits).
  static func decode(_ object: KeyedArchiveObject) throws(PropertyListError) -> String? {
    guard object.classHierarchy.contains("NSDecimalNumber"),
      let bytes = try object.value(forKey: "NS.mantissa").dataValue,
      let exponent = try object.value(forKey: "NS.exponent").integerValue,
      abs(exponent) <= 128
    else { return nil }
    let length = Int(try object.value(forKey: "NS.length").integerValue ?? 8)
    var mantissa: UInt64 = 0
    for index in stride(from: min(length, bytes.count / 2) - 1, through: 0, by: -1) {
      let word = UInt64(bytes[2 * index]) | UInt64(bytes[2 * index + 1]) << 8
      guard index < 4 else {
        if word != 0 { return nil }
        continue
      }
      mantissa = mantissa << 16 | word
    }
    let negative = try object.value(forKey: "NS.isNegative").boolValue ?? false
    var digits = String(mantissa)
    if exponent > 0 {
      digits += String(repeating: "0", count: Int(exponent))
    } else if exponent < 0 {
      let places = Int(-exponent)
      if digits.count <= places {
        digits = String(repeating: "0", count: places - digits.count + 1) + digits
      }
      digits.insert(".", at: digits.index(digits.endIndex, offsetBy: -places))
    }
    return (negative && mantissa != 0 ? "-" : "") + digits
  }

  /// Sign, mantissa and exponent of decimal text, when the mantissa fits 64 bits.
  static func parse(_ text: String) -> (Bool, UInt64, Int)? {
    var characters = Substring(text)
    var negative = false
    if characters.first == "-" || characters.first == "+" {
      negative = characters.removeFirst() == "-"
    }
    var exponent = 0
    if let marker = characters.firstIndex(where: { $0 == "e" || $0 == "E" }) {
      guard let power = Int(characters[characters.index(after: marker)...]),
        abs(power) <= 128
      else { return nil }
      exponent = power
      characters = characters[..<marker]
    }
    var mantissa: UInt64 = 0
    var seenDigit = false
    var seenPoint = false
    for character in characters {
      if character == "." && !seenPoint {
        seenPoint = true
        continue
      }
      guard let digit = character.wholeNumberValue, character.isASCII else { return nil }
      let (times, overflow) = mantissa.multipliedReportingOverflow(by: 10)
      let (sum, carry) = times.addingReportingOverflow(UInt64(digit))
      guard !overflow, !carry else { return nil }
      mantissa = sum
      seenDigit = true
      if seenPoint { exponent -= 1 }
    }
    return seenDigit ? (negative, mantissa, exponent) : nil
  }
}
