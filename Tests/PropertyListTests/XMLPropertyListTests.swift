import PropertyList
import Testing

@Suite("XML property lists")
struct XMLPropertyListTests {
  @Test func everyPortableKindRoundTripsThroughXml() throws {
    let xml = try XMLPropertyList.encode(SampleValues.portable)
    #expect(try XMLPropertyList.decode(xml) == SampleValues.portable)
  }

  @Test func uidsRoundTripAsCFUIDDictionaries() throws {
    let value: PropertyListValue = ["ref": .uid(12)]
    let xml = try XMLPropertyList.encode(value)
    #expect(String(decoding: xml, as: UTF8.self).contains("<key>CF$UID</key>"))
    #expect(try XMLPropertyList.decode(xml) == value)
  }

  @Test func datesAreWrittenInWholeSecondsAndReadWithFractions() throws {
    let value: PropertyListValue = .date(
      PropertyListDate(secondsSinceReferenceDate: 737_057_646.84))
    let xml = String(decoding: try XMLPropertyList.encode(value), as: UTF8.self)
    #expect(xml.contains("<date>2024-05-10T18:14:06Z</date>"))
    let fractional = Array(
      "<plist version=\"1.0\"><date>2024-05-10T18:14:06.84Z</date></plist>".utf8)
    let decoded = try XMLPropertyList.decode(fractional).dateValue
    #expect(abs((decoded?.secondsSinceReferenceDate ?? 0) - 737_057_646.84) < 1e-6)
  }

  @Test func datesBeforeNineteenSeventyAndLeapDaysConvertExactly() throws {
    let xml = Array(
      "<plist><array><date>1900-03-01T00:00:00Z</date><date>2000-02-29T12:00:00Z</date></array></plist>"
        .utf8)
    let dates = try XMLPropertyList.decode(xml).arrayValue?.compactMap(\.dateValue)
    #expect(dates?[0].secondsSince1970 == -2_203_891_200)
    #expect(dates?[1].secondsSince1970 == 951_825_600)
  }

  @Test func markupCharactersAreEscapedAndEntitiesResolved() throws {
    let value: PropertyListValue = ["<key & more>": "a < b > c & \"d\""]
    let xml = try XMLPropertyList.encode(value)
    #expect(try XMLPropertyList.decode(xml) == value)
    let handWritten = Array(
      """
      <?xml version="1.0"?>
      <!DOCTYPE plist [ <!ENTITY x "ignored"> ]>
      <!-- a comment -->
      <plist version="1.0"><string>&#65;&#x42;&lt;<![CDATA[<raw & text>]]></string></plist>
      """.utf8)
    #expect(try XMLPropertyList.decode(handWritten) == "AB<<raw & text>")
  }

  @Test func aNullCannotBeWrittenAsXml() {
    #expect(throws: PropertyListError.self) { try XMLPropertyList.encode(["x": .null]) }
  }

  @Test func controlCharactersXmlCannotHoldAreRefusedWithTheirPath() {
    do {
      _ = try XMLPropertyList.encode(["bell": "ding\u{07}"])
      Issue.record("expected an error")
    } catch {
      #expect(error.kind == .unsupportedValue)
      #expect(error.description.contains("root.bell"))
    }
  }

  @Test func malformedXmlIsReportedWithItsLine() {
    let cases: [(String, String)] = [
      ("<plist>\n<dict>\n<key>a</key>\n</plist>", "line 4"),
      ("<plist><integer>12x</integer></plist>", "not a 64-bit integer"),
      ("<plist><dict><string>a</string><string>b</string></dict></plist>", "expected <key>"),
      ("<plist><data>!!!</data></plist>", "base64"),
      ("<plist><date>yesterday</date></plist>", "ISO 8601"),
      ("<notplist/>", "not <plist>"),
      ("<plist><string>&bogus;</string></plist>", "unknown entity"),
      ("<plist><string>unterminated", "unterminated"),
    ]
    for (text, expected) in cases {
      do {
        _ = try XMLPropertyList.decode(Array(text.utf8))
        Issue.record("\(text) decoded")
      } catch {
        #expect(error.description.contains(expected), "\(error) should mention \(expected)")
      }
    }
  }

  @Test func deeplyNestedXmlIsRefusedWithoutExhaustingTheStack() {
    let depth = 10_000
    let text =
      "<plist>" + String(repeating: "<array>", count: depth)
      + String(repeating: "</array>", count: depth) + "</plist>"
    #expect(throws: PropertyListError.self) { try XMLPropertyList.decode(Array(text.utf8)) }
  }

  @Test func theFormatIsDetectedFromTheFirstBytes() throws {
    let value: PropertyListValue = ["k": [1, 2]]
    #expect(try PropertyListValue(propertyList: value.binaryPropertyList()) == value)
    #expect(try PropertyListValue(propertyList: XMLPropertyList.encode(value)) == value)
  }
}
