import Foundation
import Testing

@testable import ObjectStore

/// A decimal read from a store (a REAL) becomes the text `Double.description` gives, whether
/// the quick path for a few decimal places wrote it or not: the archive of a store must not
/// depend on which path ran. Checked against Swift's own formatting, which is independent of
/// the quick path's arithmetic.
@Suite("Text of a decimal read as a double")
struct DecimalTextTests {
  /// What the text must be: Swift's shortest text that reads back, or an integer's digits.
  private func expected(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return String(value)
  }

  @Test("prices and other values of up to four places read as Swift prints them")
  func fewPlaces() {
    var generator = SystemRandomNumberGenerator()
    for places in 1...4 {
      let scale = pow(10, Double(places))
      for _ in 0..<20_000 {
        let digits = Int64.random(in: -100_000_000...100_000_000, using: &generator)
        let value = Double(digits) / scale
        #expect(DecimalText.format(value) == expected(value), "\(digits) / \(scale)")
      }
    }
  }

  @Test("the quick path answers for values of a few places and leaves the rest to Swift")
  func quickPathTakesOnlyWhatItCan() {
    #expect(DecimalText.fewPlaces(73.93) == "73.93")
    #expect(DecimalText.fewPlaces(-0.05) == "-0.05")
    #expect(DecimalText.fewPlaces(0.0001) == "0.0001")
    #expect(DecimalText.fewPlaces(12_345.6789) == "12345.6789")
    // More places, too small, too large, not a number: Swift's formatting.
    #expect(DecimalText.fewPlaces(0.1 + 0.2) == nil)
    #expect(DecimalText.fewPlaces(0.00001) == nil)
    #expect(DecimalText.fewPlaces(2e11 + 0.5) == nil)
    #expect(DecimalText.fewPlaces(.nan) == nil)
    #expect(DecimalText.fewPlaces(.infinity) == nil)
    #expect(DecimalText.format(0.1 + 0.2) == "0.30000000000000004")
  }

  @Test("random doubles of every size read as Swift prints them")
  func anyDouble() {
    var generator = SystemRandomNumberGenerator()
    var values: [Double] = [
      0, -0.0, 1e-4, 9.99999e-5, 1e11, 99_999_999_999.9999, 0.5, 1.5, 2.675, 1.005, 8.325,
      .ulpOfOne, .leastNormalMagnitude, .greatestFiniteMagnitude, -.infinity,
    ]
    for _ in 0..<50_000 {
      values.append(Double(bitPattern: generator.next()))
      values.append(Double.random(in: -1e6...1e6, using: &generator))
      // Near a value of few places, one ulp either side.
      let near = Double(Int.random(in: -1_000_000...1_000_000, using: &generator)) / 100
      values.append(near.nextUp)
      values.append(near.nextDown)
    }
    for value in values where !value.isNaN {
      #expect(DecimalText.format(value) == expected(value), "\(value.bitPattern)")
    }
    #expect(DecimalText.format(.nan) == "nan")
  }

  /// What `DecimalText.double` reads of `text`, and what `Double(String)` (strtod) reads.
  private func bothReadings(_ text: String) -> (Double?, Double?) {
    var copy = text
    let quick = copy.withUTF8 { DecimalText.double(UnsafeRawBufferPointer($0)) }
    return (quick, Double(text))
  }

  @Test("decimal texts read as the doubles strtod reads, to the bit")
  func readingAsStrtodDoes() {
    var generator = SystemRandomNumberGenerator()
    var texts = [
      "0", "-0", "0.0", "-0.0", "12.50", "0012.5", "73.93", "1.005", "2.675", "0.1", "-7",
      "999999999999999", "9999999999999999", "123456789012345.6", "0.000000000000001",
      "1.0000000000000000000001", "1e5", "1.5E-3", "+1.5", ".5", "5.", "-", "", ".", "1.2.3",
      "nan", "inf", "-infinity", " 1", "1 ", "0x1p3", "١٢", "12,5",
    ]
    for _ in 0..<100_000 {
      let digits = String(UInt64.random(in: 0...999_999_999_999_999, using: &generator))
      let point = Int.random(in: 0...digits.count, using: &generator)
      var text = digits
      if point < digits.count {
        text.insert(".", at: text.index(text.startIndex, offsetBy: max(point, 1)))
      }
      if Bool.random(using: &generator) { text = "-" + text }
      texts.append(text)
      texts.append(String(Double(Int64.random(in: -10_000_000...10_000_000)) / 100))
    }
    for text in texts {
      let (quick, strtod) = bothReadings(text)
      #expect(quick?.bitPattern == strtod?.bitPattern, "\(text)")
    }
  }
}
