/// UTC ISO 8601 dates (`2024-05-10T12:34:56Z`) as XML property lists write them, converted with
/// the proleptic Gregorian calendar (days-from-civil arithmetic), without Foundation.
public enum ISO8601 {
  /// Formats a date; with `fractionalSeconds`, a non-integral second is written with up to six
  /// decimals, otherwise the second is rounded down.
  public static func format(_ date: PropertyListDate, fractionalSeconds: Bool) -> String {
    let unix = date.secondsSince1970
    guard unix.isFinite else { return String(unix) }
    let wholeSeconds = unix.rounded(.down)
    var fraction = unix - wholeSeconds
    var total = Int64(wholeSeconds)
    // Round the fraction to microseconds; a carry moves to the next second.
    var micros = Int64((fraction * 1_000_000).rounded())
    if micros == 1_000_000 {
      micros = 0
      total += 1
    }
    fraction = Double(micros) / 1_000_000
    let days = floorDivide(total, 86_400)
    let secondOfDay = total - days * 86_400
    let (year, month, day) = civil(fromDays: days)
    var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    text += "T" + pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay % 3600 / 60, 2) + ":"
    text += pad(secondOfDay % 60, 2)
    if fractionalSeconds && micros != 0 {
      var digits = pad(micros, 6)
      while digits.hasSuffix("0") { digits.removeLast() }
      text += "." + digits
    }
    return text + "Z"
  }

  /// Parses `YYYY-MM-DDTHH:MM:SS[.fff…]Z`; also the shorter forms Apple's parser accepts
  /// (`YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `…THH`, `…THH:MM`), each ending in `Z`.
  public static func parse(_ text: String) -> PropertyListDate? {
    var scalars = Array(text.utf8)
    guard scalars.last == UInt8(ascii: "Z") else { return nil }
    scalars.removeLast()
    var index = 0
    func number(_ digits: Int) -> Int64? {
      guard index + digits <= scalars.count else { return nil }
      var value: Int64 = 0
      for _ in 0..<digits {
        let c = scalars[index]
        guard c >= 48 && c <= 57 else { return nil }
        value = value * 10 + Int64(c - 48)
        index += 1
      }
      return value
    }
    func expect(_ c: Character) -> Bool {
      guard index < scalars.count, scalars[index] == c.asciiValue! else { return false }
      index += 1
      return true
    }
    guard let year = number(4) else { return nil }
    var month: Int64 = 1
    var day: Int64 = 1
    var hour: Int64 = 0
    var minute: Int64 = 0
    var second: Int64 = 0
    var fraction = 0.0
    if index < scalars.count {
      guard expect("-"), let m = number(2) else { return nil }
      month = m
      if index < scalars.count {
        guard expect("-"), let d = number(2) else { return nil }
        day = d
        if index < scalars.count {
          guard expect("T"), let h = number(2) else { return nil }
          hour = h
          if index < scalars.count {
            guard expect(":"), let mi = number(2) else { return nil }
            minute = mi
            if index < scalars.count {
              guard expect(":"), let s = number(2) else { return nil }
              second = s
              if index < scalars.count {
                guard expect("."), index < scalars.count else { return nil }
                var scale = 0.1
                while index < scalars.count {
                  let c = scalars[index]
                  guard c >= 48 && c <= 57 else { return nil }
                  fraction += Double(c - 48) * scale
                  scale /= 10
                  index += 1
                }
              }
            }
          }
        }
      }
    }
    guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
    else { return nil }
    let days = self.days(fromCivil: year, month, day)
    let unix = Double(days * 86_400 + hour * 3600 + minute * 60 + second) + fraction
    return PropertyListDate(secondsSince1970: unix)
  }

  static func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
    a >= 0 ? a / b : -((-a + b - 1) / b)
  }

  // Howard Hinnant's civil-date algorithms (public domain descriptions of the arithmetic).
  static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
    let y = month <= 2 ? year - 1 : year
    let era = floorDivide(y, 400)
    let yearOfEra = y - era * 400
    let monthIndex = month > 2 ? month - 3 : month + 9
    let dayOfYear = (153 * monthIndex + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
    let z = days + 719_468
    let era = floorDivide(z, 146_097)
    let dayOfEra = z - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
  }

  static func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(abs(value))
    let padded = String(repeating: "0", count: max(0, width - digits.count)) + digits
    return value < 0 ? "-" + padded : padded
  }
}
