import Foundation
import JSON
import TestSupport
import Testing

@Suite struct JSONTests {
  private func parse(_ text: String) throws -> JSONValue {
    let reader = JSONReader(bytes: Array(text.utf8))
    let value = try reader.value()
    try reader.end()
    return value
  }

  private func text(_ value: JSONValue, _ style: JSONWriter.Style = .pretty) -> String {
    String(decoding: JSONWriter.encode(value, style: style), as: UTF8.self)
  }

  @Test func integersAndRealsStayApartAndRoundTrip() throws {
    let value = try parse(
      #"[0, -7, 9223372036854775807, 1.0, -0.5, 2.5e-07, 1e300, 12345678901234567890]"#)
    #expect(
      value
        == .array([
          .integer(0), .integer(-7), .integer(.max), .real(1), .real(-0.5), .real(2.5e-07),
          .real(1e300), .real(12_345_678_901_234_567_890),
        ]))
    #expect(try parse(text(value)) == value)
    #expect(JSONWriter.spelling(of: 1) == "1.0")
    #expect(JSONWriter.spelling(of: 0.1) == "0.1")
    #expect(JSONWriter.spelling(of: .nan) == "null")
  }

  @Test func membersKeepTheirOrderAndStringsTheirEscapes() throws {
    let value = JSONValue.object([
      ("zeta", .string("quote \" backslash \\ newline \n tab \t bell \u{07} é 😀")),
      ("alpha", .null), ("mid", .bool(false)),
    ])
    let written = text(value)
    #expect(written.contains(#"\u0007"#))
    #expect(try parse(written) == value)
    #expect(try parse(text(value, .compact)) == value)
    #expect(value.objectMembers?.map(\.key) == ["zeta", "alpha", "mid"])
    #expect(try parse(#""\ud83d\ude00 \u00e9 \/""#) == .string("😀 é /"))
  }

  @Test func prettyTextPutsShortPlainContainersOnOneLine() {
    let value = JSONValue.object([
      ("author", .object([("class", .string("Author")), ("pk", .integer(3))])),
      ("tags", .array([.string("a"), .string("b")])),
      ("pages", .array([.object([("class", .string("Page")), ("pk", .integer(40))])])),
    ])
    #expect(
      text(value) == """
        {
          "author": {"class": "Author", "pk": 3},
          "tags": ["a", "b"],
          "pages": [
            {"class": "Page", "pk": 40}
          ]
        }
        """)
    #expect(
      text(value, .compact)
        == #"{"author":{"class":"Author","pk":3},"tags":["a","b"],"pages":[{"class":"Page","pk":40}]}"#
    )
  }

  @Test func aLongArrayIsWalkedElementByElementAcrossChunks() throws {
    let text = Array(#"{"model": {"v": 1}, "objects": [{"n": 1}, {"n": 2}, {"n": 3}]}"#.utf8)
    var offset = 0
    // Chunks of three bytes: every token crosses a chunk boundary somewhere.
    let reader = JSONReader { () -> [UInt8]? in
      guard offset < text.count else { return nil }
      defer { offset += 3 }
      return Array(text[offset..<min(offset + 3, text.count)])
    }
    try reader.beginObject()
    var seen: [Int64] = []
    var model: JSONValue?
    while let key = try reader.nextKey() {
      if key == "objects" {
        try reader.beginArray()
        while try reader.nextElement() { seen.append(try reader.value()["n"]?.integerValue ?? -1) }
      } else {
        model = try reader.value()
      }
    }
    try reader.end()
    #expect(seen == [1, 2, 3])
    #expect(model == .object([("v", .integer(1))]))
  }

  @Test(arguments: [
    (#"{"a": 1,}"#, 1, 9, "expected a member name in double quotes"),
    ("[1 2]", 1, 4, "expected ',' or ']' after an array element"),
    ("{\n  \"a\" 1}", 2, 7, "expected ':' after a member name"),
    ("[01]", 1, 3, "a number cannot start with 0"),
    ("[\"tab\u{09}here\"]", 1, 6, "a control character in a string must be escaped"),
    (#"["\x"]"#, 1, 4, "unknown escape '\\x'"),
    ("[tru]", 1, 5, "expected 'true'"),
    (#"{"a": 1} x"#, 1, 10, "expected the end of the text"),
    ("[1.]", 1, 4, "expected a digit after '.'"),
    (#""abc"#, 1, 5, "the string does not end"),
  ])
  func malformedTextIsRefusedWithItsPlace(
    text: String, line: Int, column: Int, detail: String
  ) {
    #expect {
      _ = try parse(text)
    } throws: { error in
      guard let error = error as? JSONError else { return false }
      return error.line == line && error.column == column && error.detail == detail
    }
  }

  @Test func nestingDeeperThanTheLimitIsRefused() {
    let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
    #expect(throws: JSONError.self) { _ = try parse(deep) }
  }

  @Test func pythonReadsWhatWeWriteAsTheSameValues() throws {
    guard Subprocess.isInstalled("python3") else {
      Issue.record("python3 is not installed; the independent check did not run")
      return
    }
    let value = JSONValue.object([
      ("text", .string("line\nbreak \"q\" \u{1} ü 😀")), ("big", .integer(-9_007_199_254_740_993)),
      ("real", .real(0.1 + 0.2)), ("tiny", .real(5e-324)), ("list", .array([.null, .bool(true)])),
    ])
    let script = """
      import json, sys
      v = json.loads(sys.stdin.read())
      assert v["text"] == "line\\nbreak \\"q\\" \\u0001 ü 😀", v["text"]
      assert v["big"] == -9007199254740993 and isinstance(v["big"], int)
      assert v["real"] == 0.1 + 0.2 and v["tiny"] == 5e-324
      assert v["list"] == [None, True]
      print(json.dumps(v, sort_keys=True))
      """
    for style in [JSONWriter.Style.pretty, .compact] {
      let result = try Subprocess.python(script, input: JSONWriter.encode(value, style: style))
      #expect(result.status == 0, "\(result.stderr)")
      // And what Python writes reads back here as the same values.
      let back = try parse(result.stdout)
      #expect(back["text"] == value["text"])
      #expect(back["big"] == value["big"])
      #expect(back["real"] == value["real"])
      #expect(back["tiny"] == value["tiny"])
    }
  }
}
