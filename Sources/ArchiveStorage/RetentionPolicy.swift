import Foundation

/// Which archives of one store to keep, with restic's `forget --keep-*` semantics.
///
/// The archives are walked newest first. `last` keeps the newest `last` archives. Each period
/// policy (hourly, daily, weekly, monthly, yearly; UTC, ISO weeks) keeps an archive whenever
/// its period differs from that of the archive the policy kept before, until the policy has
/// kept its count. `within` keeps every archive made less than that long before the newest.
/// An archive kept by any policy stays. When a period policy finds fewer periods than its
/// count, the oldest archive is kept as well (restic 0.17 does the same), so that a young
/// folder never loses its first backup.
public struct RetentionPolicy: Sendable, Equatable {
  /// A period a policy keeps one archive of.
  public enum Period: String, Sendable, CaseIterable {
    case hourly, daily, weekly, monthly, yearly
  }

  /// Keep the newest this many.
  public var last = 0
  /// Keep the newest archive of each of this many periods, by period.
  public var periods: [Period: Int] = [:]
  /// Keep every archive made within this span before the newest.
  public var within: Span?

  /// A policy that keeps nothing until counts are set.
  public init() {}

  /// Whether the policy keeps anything (a policy that keeps nothing would remove everything).
  public var isEmpty: Bool {
    last == 0 && periods.values.allSatisfy { $0 == 0 } && within == nil
  }

  /// Why an archive is kept: the policies that keep it.
  public typealias Reasons = [String]

  /// Applies the policy to archives made at `times` (any order).
  /// - Returns: for each archive, the policies that keep it (empty when it goes).
  public func apply(to times: [Date]) -> [Reasons] {
    var reasons = [Reasons](repeating: [], count: times.count)
    let newestFirst = times.indices.sorted { (times[$0], $1) > (times[$1], $0) }
    guard let newest = newestFirst.first else { return reasons }
    var keptLast = 0
    var remaining = periods
    var previous: [Period: Int64] = [:]
    let cutoff = within.map { $0.subtracted(from: times[newest]) }
    for index in newestFirst {
      let time = times[index]
      if keptLast < last {
        keptLast += 1
        reasons[index].append("last")
      }
      for period in Period.allCases {
        guard let count = remaining[period], count > 0 else { continue }
        let value = Self.bucket(period, of: time)
        if value != previous[period] {
          previous[period] = value
          remaining[period] = count - 1
          reasons[index].append(period.rawValue)
        }
      }
      if let cutoff, time > cutoff {
        reasons[index].append("within")
      }
    }
    if let oldest = newestFirst.last {
      for period in Period.allCases where (remaining[period] ?? 0) > 0 {
        if !reasons[oldest].contains(period.rawValue) {
          reasons[oldest].append("oldest \(period.rawValue)")
        }
      }
    }
    return reasons
  }

  /// The period `time` falls in, as one number (UTC; ISO 8601 weeks).
  static func bucket(_ period: Period, of time: Date) -> Int64 {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let parts = calendar.dateComponents([.year, .month, .day, .hour], from: time)
    let (year, month, day, hour) = (
      Int64(parts.year!), Int64(parts.month!), Int64(parts.day!), Int64(parts.hour!)
    )
    switch period {
    case .hourly: return ((year * 100 + month) * 100 + day) * 100 + hour
    case .daily: return (year * 100 + month) * 100 + day
    case .weekly:
      var iso = Calendar(identifier: .iso8601)
      iso.timeZone = calendar.timeZone
      let week = iso.dateComponents([.yearForWeekOfYear, .weekOfYear], from: time)
      return Int64(week.yearForWeekOfYear!) * 100 + Int64(week.weekOfYear!)
    case .monthly: return year * 100 + month
    case .yearly: return year
    }
  }

  /// A span of calendar time, as restic writes it: `1y5m7d2h` (years, months, days, hours, in
  /// that order, each optional).
  public struct Span: Sendable, Equatable, CustomStringConvertible {
    /// The parts.
    public let years, months, days, hours: Int

    /// Parses `1y5m7d2h`; `nil` when the text is not such a span, or is zero.
    public init?(_ text: String) {
      var values: [Character: Int] = [:]
      var digits = ""
      var order = Array("ymdh")
      for character in text {
        if character.isASCII && character.isNumber {
          digits.append(character)
          continue
        }
        guard let position = order.firstIndex(of: character), let value = Int(digits) else {
          return nil
        }
        values[character] = value
        order.removeFirst(position + 1)
        digits = ""
      }
      guard digits.isEmpty, !values.isEmpty, values.values.contains(where: { $0 > 0 }) else {
        return nil
      }
      years = values["y"] ?? 0
      months = values["m"] ?? 0
      days = values["d"] ?? 0
      hours = values["h"] ?? 0
    }

    /// `time` moved back by the span as restic (Go's `AddDate`, in UTC) does: years and months
    /// first, a day past the month's end rolling over into the next (31 March less a month is
    /// 3 March), then days, then hours.
    public func subtracted(from time: Date) -> Date {
      var calendar = Calendar(identifier: .gregorian)
      calendar.timeZone = TimeZone(identifier: "UTC")!
      let parts = calendar.dateComponents([.year, .month, .day], from: time)
      let startOfDay = calendar.startOfDay(for: time)
      var month = parts.month! - 1 - months
      let year = parts.year! - years + month.floorDivided(by: 12)
      month = month - 12 * month.floorDivided(by: 12)
      let first = calendar.date(from: DateComponents(year: year, month: month + 1, day: 1))!
      let days = parts.day! - 1 - self.days
      return first.addingTimeInterval(
        Double(days) * 86_400 + time.timeIntervalSince(startOfDay) - Double(hours) * 3_600)
    }

    /// `1y5m7d2h`, with the parts that are set.
    public var description: String {
      [(years, "y"), (months, "m"), (days, "d"), (hours, "h")].filter { $0.0 > 0 }
        .map { "\($0.0)\($0.1)" }.joined()
    }
  }
}

extension Int {
  /// The quotient rounded toward minus infinity.
  fileprivate func floorDivided(by divisor: Int) -> Int {
    let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
    return remainder < 0 ? quotient - 1 : quotient
  }
}
