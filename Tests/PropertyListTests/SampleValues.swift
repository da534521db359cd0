import PropertyList

/// Values that exercise every property-list kind and the encodings' edge cases.
enum SampleValues {
  /// Every kind but null and UID (which XML and plistlib cannot all carry), with dates in whole
  /// seconds so XML keeps them exactly.
  static let portable: PropertyListValue = [
    "ascii": "hello",
    "unicode": "héllo wörld — 日本語 🎉",
    "empty": "",
    "long": .string(String(repeating: "abcdefghij", count: 40)),
    "escapes": "a < b && c > d \"quoted\" 'single'",
    "zero": 0,
    "small": 255,
    "medium": 65_535,
    "large": 4_294_967_295,
    "huge": .integer(Int64.max),
    "negative": -1,
    "mostNegative": .integer(Int64.min),
    "pi": 3.141592653589793,
    "tiny": 1e-300,
    "negativeReal": -2.5,
    "yes": true,
    "no": false,
    "date": .date(PropertyListDate(secondsSinceReferenceDate: 737_057_646)),
    "oldDate": .date(PropertyListDate(secondsSince1970: -86_400 * 365)),
    "data": .data([0, 1, 2, 3, 254, 255]),
    "emptyData": .data([]),
    "bigData": .data((0..<300).map { UInt8($0 % 256) }),
    "array": [1, "two", 3.0, [4, [5]]],
    "emptyArray": [],
    "emptyDict": [:],
    "fifteen": .array((0..<15).map { .integer(Int64($0)) }),
    "nested": ["a": ["b": ["c": "deep"]]],
  ]

  /// A class-tagged record as a backup writes it.
  static func record(_ i: Int) -> PropertyListValue {
    [
      "class": "Book",
      "pk": .integer(Int64(i)),
      "title": .string("Title \(i)"),
      "price": .real(Double(i) * 1.25),
      "published": .date(PropertyListDate(secondsSinceReferenceDate: Double(i) * 86_400)),
      "isbn": .data((0..<16).map { UInt8(($0 + i) % 256) }),
      "inPrint": .bool(i % 2 == 0),
      "author": .integer(Int64(i % 100)),
      "pages": .array((0..<3).map { .integer(Int64(i * 3 + $0)) }),
    ]
  }
}
