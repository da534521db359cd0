import PropertyList
import TestSupport
import Testing

@Suite struct ExactISO8601Tests {
  // Expected texts as Python's datetime gives them.
  @Test(arguments: [
    (0.0, "2001-01-01T00:00:00Z"),
    (0.5, "2001-01-01T00:00:00.5Z"),
    (-0.25, "2000-12-31T23:59:59.75Z"),
    (-1.25, "2000-12-31T23:59:58.75Z"),
    (5e-05, "2001-01-01T00:00:00.00005Z"),
    (737_000_000.123456789, "2024-05-10T02:13:20.1234568Z"),
    (-31_536_000.5, "2000-01-01T23:59:59.5Z"),
    (-63_113_904_000.0, "0001-01-01T00:00:00Z"),
  ])
  func aDateIsWrittenWithEveryDigitItsDoubleNeeds(seconds: Double, text: String) throws {
    let date = PropertyListDate(secondsSinceReferenceDate: seconds)
    #expect(ISO8601.exactText(date) == text)
    #expect(ISO8601.exactDate(text)?.secondsSinceReferenceDate == seconds)
  }

  @Test func randomDatesReadBackAsTheSameDouble() {
    var random = SystemRandomNumberGenerator()
    for _ in 0..<20_000 {
      let seconds: Double
      switch Int.random(in: 0..<3, using: &random) {
      case 0: seconds = Double.random(in: -3e10...3e10, using: &random)
      case 1: seconds = Double(Int.random(in: -1_000_000...1_000_000, using: &random)) / 1000
      default: seconds = Double.random(in: -1...1, using: &random)
      }
      let date = PropertyListDate(secondsSinceReferenceDate: seconds)
      guard let text = ISO8601.exactText(date) else {
        Issue.record("no text for \(seconds)")
        continue
      }
      #expect(ISO8601.exactDate(text)?.secondsSinceReferenceDate == seconds, "\(seconds) → \(text)")
    }
  }

  @Test func offsetsDatesAndOutOfRangeTimesAreRead() {
    #expect(ISO8601.exactDate("2001-01-01T02:00:00+02:00")?.secondsSinceReferenceDate == 0)
    #expect(ISO8601.exactDate("2001-01-02")?.secondsSinceReferenceDate == 86_400)
    #expect(ISO8601.exactDate("2001-01-01T00:01Z")?.secondsSinceReferenceDate == 60)
    for bad in ["2001-13-01", "2001-01-01T25:00:00Z", "2001-01-01T00:00:00", "yesterday", ""] {
      #expect(ISO8601.exactDate(bad) == nil, "\(bad)")
    }
    #expect(ISO8601.exactText(PropertyListDate(secondsSinceReferenceDate: 1e13)) == nil)
    #expect(ISO8601.exactText(PropertyListDate(secondsSinceReferenceDate: .nan)) == nil)
  }

  @Test func pythonReadsTheSameInstants() throws {
    guard Subprocess.isInstalled("python3") else {
      Issue.record("python3 is not installed; the independent check did not run")
      return
    }
    let samples: [Double] = [0, 0.5, -0.25, 737_000_000.125, -31_536_000.5, 1e9 + 0.001]
    let texts = samples.map { ISO8601.exactText(PropertyListDate(secondsSinceReferenceDate: $0))! }
    let script = """
      import sys, datetime
      ref = datetime.datetime(2001, 1, 1, tzinfo=datetime.timezone.utc)
      for t in sys.argv[1:]:
          d = datetime.datetime.fromisoformat(t.replace("Z", "+00:00"))
          print(repr((d - ref).total_seconds()))
      """
    let result = try Subprocess.python(script, texts)
    #expect(result.status == 0, "\(result.stderr)")
    let read = result.stdout.split(separator: "\n").compactMap { Double($0) }
    // Python keeps microseconds: equal to that precision.
    #expect(read.count == samples.count)
    for (mine, theirs) in zip(samples, read) { #expect(abs(mine - theirs) < 1e-6) }
  }
}
