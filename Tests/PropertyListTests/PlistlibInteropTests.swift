import PropertyList
import TestSupport
import Testing

/// Python's `plistlib` is an independent implementation of both formats: what we write must
/// read back in it as equal values, and we must read what it writes.
@Suite(
  "Interop with Python's plistlib", .enabled(if: Subprocess.isInstalled("python3"), "needs python3")
)
struct PlistlibInteropTests {
  /// Loads a plist from stdin with plistlib and writes it back out in the named format.
  static let redump = """
    import plistlib, sys
    value = plistlib.loads(sys.stdin.buffer.read())
    fmt = plistlib.FMT_BINARY if sys.argv[1] == 'binary' else plistlib.FMT_XML
    sys.stdout.buffer.write(plistlib.dumps(value, fmt=fmt, sort_keys=True))
    """

  func redumped(_ bytes: [UInt8], as format: String) throws -> PropertyListValue {
    let result = try Subprocess.python(Self.redump, [format], input: bytes)
    #expect(result.status == 0, "plistlib failed: \(result.stderr)")
    return try PropertyListValue(propertyList: result.stdoutBytes)
  }

  @Test func plistlibReadsOurBinaryListsAsEqualValues() throws {
    let ours = SampleValues.portable.binaryPropertyList()
    #expect(try redumped(ours, as: "binary") == SampleValues.portable)
    #expect(try redumped(ours, as: "xml") == SampleValues.portable)
  }

  @Test func plistlibReadsOurXmlListsAsEqualValues() throws {
    let ours = try XMLPropertyList.encode(SampleValues.portable)
    #expect(try redumped(ours, as: "binary") == SampleValues.portable)
    #expect(try redumped(ours, as: "xml") == SampleValues.portable)
  }

  @Test func plistlibReadsUidsAndSubSecondDatesFromOurBinaryLists() throws {
    let value: PropertyListValue = [
      "uid": .uid(300), "when": .date(PropertyListDate(secondsSinceReferenceDate: 12.25)),
    ]
    #expect(try redumped(value.binaryPropertyList(), as: "binary") == value)
  }

  @Test func plistlibReadsAChunkOfRecordsWithEveryClassTag() throws {
    let chunk: PropertyListValue = .array((0..<2_000).map(SampleValues.record))
    let script = """
      import plistlib, sys
      records = plistlib.loads(sys.stdin.buffer.read())
      assert all(r['class'] == 'Book' for r in records)
      print(len(records), sum(r['pk'] for r in records))
      """
    let result = try Subprocess.python(script, input: chunk.binaryPropertyList())
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "2000 1999000")
  }

  @Test func plistlibReadsOurThreeByteReferenceWidths() throws {
    let value: PropertyListValue = .array((0..<70_000).map { .string("item \($0)") })
    #expect(try redumped(value.binaryPropertyList(), as: "binary") == value)
  }

  @Test func weReadWhatPlistlibWritesInBothFormats() throws {
    let script = """
      import plistlib, sys, datetime
      value = {
        'name': 'plistlib', 'unicode': 'ünïcødé ✓', 'n': -42, 'big': 2**62, 'r': 0.5,
        't': True, 'f': False, 'when': datetime.datetime(2020, 2, 29, 23, 59, 58),
        'blob': bytes(range(40)), 'list': [1, [2, {'k': 'v'}]], 'empty': {},
      }
      fmt = plistlib.FMT_BINARY if sys.argv[1] == 'binary' else plistlib.FMT_XML
      sys.stdout.buffer.write(plistlib.dumps(value, fmt=fmt))
      """
    let expected: PropertyListValue = [
      "name": "plistlib", "unicode": "ünïcødé ✓", "n": -42, "big": .integer(1 << 62), "r": 0.5,
      "t": true, "f": false,
      "when": .date(PropertyListDate(secondsSince1970: 1_583_020_798)),
      "blob": .data(Array(0..<40)), "list": [1, [2, ["k": "v"]]], "empty": [:],
    ]
    for format in ["binary", "xml"] {
      let result = try Subprocess.python(script, [format])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(
        try PropertyListValue(propertyList: result.stdoutBytes) == expected, "format \(format)")
    }
  }
}
