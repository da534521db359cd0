/// A point in time as property lists store it: seconds since 2001-01-01 00:00:00 UTC (the Cocoa
/// reference date; Core Data stores dates the same way).
public struct PropertyListDate: Hashable, Comparable, Sendable, CustomStringConvertible {
  /// Seconds since 2001-01-01 00:00:00 UTC.
  public var secondsSinceReferenceDate: Double

  /// The Unix time of the reference date.
  public static let referenceDateUnixTime: Double = 978_307_200

  /// A date the given number of seconds after 2001-01-01 00:00:00 UTC.
  public init(secondsSinceReferenceDate: Double) {
    self.secondsSinceReferenceDate = secondsSinceReferenceDate
  }

  /// A date the given number of seconds after 1970-01-01 00:00:00 UTC.
  public init(secondsSince1970: Double) {
    self.secondsSinceReferenceDate = secondsSince1970 - Self.referenceDateUnixTime
  }

  /// Seconds since 1970-01-01 00:00:00 UTC.
  public var secondsSince1970: Double { secondsSinceReferenceDate + Self.referenceDateUnixTime }

  /// Orders dates by time.
  public static func < (lhs: Self, rhs: Self) -> Bool {
    lhs.secondsSinceReferenceDate < rhs.secondsSinceReferenceDate
  }

  /// The date in ISO 8601 form, UTC (`2024-05-10T12:34:56Z`, with fractional seconds when it
  /// has them).
  public var description: String { ISO8601.format(self, fractionalSeconds: true) }
}
