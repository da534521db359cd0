import ArchiveStorage
import Foundation
import Testing

@Suite("Retention policies (restic's forget rules)")
struct RetentionPolicyTests {
  static func utc(_ text: String) -> Date {
    ISO8601DateFormatter().date(from: text)!
  }

  @Test func spansAreParsedAsResticWritesThem() {
    #expect(RetentionPolicy.Span("1y5m7d2h")?.description == "1y5m7d2h")
    #expect(RetentionPolicy.Span("3m")?.months == 3)
    #expect(RetentionPolicy.Span("36h")?.hours == 36)
    for bad in ["", "3x", "1d2y", "y", "0d", "1.5d", "-1d", "5"] {
      #expect(RetentionPolicy.Span(bad) == nil, "\(bad)")
    }
  }

  @Test func aSpanIsSubtractedAsGosAddDateDoes() {
    // 31 March less a month is "31 February", which Go rolls over into 3 March.
    let span = RetentionPolicy.Span("1m")!
    #expect(
      span.subtracted(from: Self.utc("2026-03-31T12:00:00Z")) == Self.utc("2026-03-03T12:00:00Z"))
    #expect(
      RetentionPolicy.Span("1y2m3d4h")!.subtracted(from: Self.utc("2026-01-02T01:00:00Z"))
        == Self.utc("2024-10-29T21:00:00Z"))
  }

  @Test func periodsAreUTCHoursDaysISOWeeksMonthsAndYears() {
    var policy = RetentionPolicy()
    policy.periods[.weekly] = 10
    // 2027-01-01 is in ISO week 53 of 2026, with 2026-12-28; 2027-01-04 starts week 1.
    let times = ["2026-12-28T00:00:00Z", "2027-01-01T23:00:00Z", "2027-01-04T00:00:00Z"].map(
      Self.utc)
    #expect(policy.apply(to: times) == [["oldest weekly"], ["weekly"], ["weekly"]])
  }

  @Test func everyPolicyKeepsWhatItKeepsAndTheOldestStaysWhenPeriodsRunShort() {
    var policy = RetentionPolicy()
    policy.last = 1
    policy.periods[.daily] = 5
    let times = [
      "2026-11-20T03:00:00Z", "2026-11-21T03:00:00Z", "2026-11-21T15:00:00Z",
      "2026-11-22T03:00:00Z",
    ].map(Self.utc)
    // Three days for five: the oldest of 21 November stays only as a day's newest; the
    // oldest archive (20 November) is kept by its day anyway.
    #expect(policy.apply(to: times) == [["daily"], [], ["daily"], ["last", "daily"]])
    var monthly = RetentionPolicy()
    monthly.periods[.monthly] = 3
    #expect(monthly.apply(to: times) == [["oldest monthly"], [], [], ["monthly"]])
    #expect(RetentionPolicy().isEmpty)
  }
}
