extension ISO8601 {
  /// The seconds since 1970 of Core Data's reference date, 2001-01-01T00:00:00Z.
  static let referenceUnixSeconds: Int64 = 978_307_200

  /// A date as UTC ISO 8601 text that reads back as exactly the same double: the second's
  /// fraction carries every digit of the double's shortest decimal spelling
  /// (`2024-05-10T12:34:56.1234567Z`), none when the second is whole. Nil for dates that four
  /// year digits cannot hold, and for NaN and the infinities.
  public static func exactText(_ date: PropertyListDate) -> String? {
    let seconds = date.secondsSinceReferenceDate
    guard seconds.isFinite, abs(seconds) < 1e12 else { return nil }
    guard let (whole, fraction) = decimalParts(of: abs(seconds)) else { return nil }
    var total = whole
    var digits = fraction
    if seconds < 0 {
      total = -whole
      if !digits.isEmpty {
        total -= 1
        digits = complement(digits)
      }
    }
    let unix = total + referenceUnixSeconds
    let days = floorDivide(unix, 86_400)
    let secondOfDay = unix - days * 86_400
    let (year, month, day) = civil(fromDays: days)
    guard (0...9999).contains(year) else { return nil }
    var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    text += "T" + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay % 3600 / 60, 2) + ":"
    text += pad(secondOfDay % 60, 2)
    if !digits.isEmpty { text += "." + digits }
    return text + "Z"
  }

  /// Reads `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fff…]]` with `Z` or a `±HH:MM` offset, giving
  /// the double whose shortest spelling has the fraction's digits: the inverse of
  /// ``exactText(_:)``. Nil when the text is not such a time.
  public static func exactDate(_ text: String) -> PropertyListDate? {
    let bytes = Array(text.utf8)
    var index = 0
    func number(_ count: Int) -> Int64? {
      guard index + count <= bytes.count else { return nil }
      var value: Int64 = 0
      for byte in bytes[index..<index + count] {
        guard byte >= 48 && byte <= 57 else { return nil }
        value = value * 10 + Int64(byte - 48)
      }
      index += count
      return value
    }
    func skip(_ character: Character) -> Bool {
      guard index < bytes.count, bytes[index] == character.asciiValue! else { return false }
      index += 1
      return true
    }
    guard let year = number(4), skip("-"), let month = number(2), skip("-"), let day = number(2),
      (1...12).contains(month), (1...31).contains(day)
    else { return nil }
    var secondOfDay: Int64 = 0
    var digits = ""
    var offset: Int64 = 0
    if skip("T") || skip(" ") {
      guard let hour = number(2), hour < 24, skip(":"), let minute = number(2), minute < 60 else {
        return nil
      }
      var second: Int64 = 0
      if skip(":") {
        guard let s = number(2), s < 60 else { return nil }
        second = s
        if skip(".") {
          while index < bytes.count, bytes[index] >= 48 && bytes[index] <= 57 {
            digits.append(Character(Unicode.Scalar(bytes[index])))
            index += 1
          }
          guard !digits.isEmpty else { return nil }
        }
      }
      secondOfDay = hour * 3600 + minute * 60 + second
      if skip("Z") {
      } else if index < bytes.count, bytes[index] == 43 || bytes[index] == 45 {
        let sign: Int64 = bytes[index] == 43 ? 1 : -1
        index += 1
        guard let hours = number(2), skip(":"), let minutes = number(2) else { return nil }
        offset = sign * (hours * 3600 + minutes * 60)
      } else {
        return nil
      }
    }
    guard index == bytes.count else { return nil }
    while digits.hasSuffix("0") { digits.removeLast() }
    let total =
      days(fromCivil: year, month, day) * 86_400 + secondOfDay - offset - referenceUnixSeconds
    if digits.isEmpty { return PropertyListDate(secondsSinceReferenceDate: Double(total)) }
    let spelled = total >= 0 ? "\(total).\(digits)" : "-\(-total - 1).\(complement(digits))"
    guard let seconds = Double(spelled) else { return nil }
    return PropertyListDate(secondsSinceReferenceDate: seconds)
  }

  /// The whole part and the fraction's digits (no trailing zeros) of a non-negative double's
  /// shortest decimal spelling (`1.25` → 1 and "25"; `5e-05` → 0 and "00005").
  static func decimalParts(of value: Double) -> (Int64, String)? {
    let spelled = "\(value)"
    var mantissa = Substring(spelled)
    var exponent = 0
    if let e = spelled.firstIndex(where: { $0 == "e" || $0 == "E" }) {
      guard let parsed = Int(spelled[spelled.index(after: e)...]) else { return nil }
      exponent = parsed
      mantissa = spelled[..<e]
    }
    let point = mantissa.firstIndex(of: ".")
    let integerDigits = point.map { mantissa.distance(from: mantissa.startIndex, to: $0) }
    let allDigits = mantissa.filter { $0 != "." }
    let pointPosition = (integerDigits ?? allDigits.count) + exponent
    var whole: String
    var fraction: String
    if pointPosition <= 0 {
      whole = "0"
      fraction = String(repeating: "0", count: -pointPosition) + allDigits
    } else if pointPosition >= allDigits.count {
      whole = allDigits + String(repeating: "0", count: pointPosition - allDigits.count)
      fraction = ""
    } else {
      whole = String(allDigits.prefix(pointPosition))
      fraction = String(allDigits.dropFirst(pointPosition))
    }
    while fraction.hasSuffix("0") { fraction.removeLast() }
    if whole.isEmpty { whole = "0" }
    guard let integer = Int64(whole) else { return nil }
    return (integer, fraction)
  }

  /// `1 - 0.digits` as digits of the same length (`"25"` → `"75"`), for negative times.
  static func complement(_ digits: String) -> String {
    var result: [UInt8] = []
    var borrow = 0
    for byte in digits.utf8.reversed() {
      var value = (result.isEmpty ? 10 : 9) - Int(byte - 48) - borrow
      borrow = 0
      if value < 0 {
        value += 10
        borrow = 1
      }
      result.append(UInt8(48 + value))
    }
    var text = String(decoding: result.reversed(), as: UTF8.self)
    while text.hasSuffix("0") { text.removeLast() }
    return text
  }
}
