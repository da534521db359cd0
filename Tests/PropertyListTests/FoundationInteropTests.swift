import Foundation
import PropertyList
import Testing

/// Foundation's `PropertyListSerialization` and `NSKeyedArchiver` as a second independent
/// implementation.
@Suite("Interop with Foundation")
struct FoundationInteropTests {
  /// Converts what `PropertyListSerialization` returns into our value type.
  static func convert(_ any: Any) throws -> PropertyListValue {
    switch any {
    case let string as String: return .string(string)
    case let data as Data: return .data([UInt8](data))
    case let date as Date:
      return .date(PropertyListDate(secondsSince1970: date.timeIntervalSince1970))
    case let array as [Any]: return .array(try array.map(convert))
    case let dictionary as [String: Any]: return .dictionary(try dictionary.mapValues(convert))
    case let number as NSNumber:
      // Foundation keeps the binary plist's kind in the number's type encoding.
      switch String(cString: number.objCType) {
      case "c", "B": return .bool(number.boolValue)
      case "d", "f": return .real(number.doubleValue)
      default: return .integer(number.int64Value)
      }
    default:
      throw PropertyListError(.unsupportedValue, "unexpected Foundation value \(type(of: any))")
    }
  }

  @Test func propertyListSerializationReadsOurBinaryOutput() throws {
    let ours = Data(SampleValues.portable.binaryPropertyList())
    var format = PropertyListSerialization.PropertyListFormat.xml
    let decoded = try PropertyListSerialization.propertyList(
      from: ours, options: [], format: &format)
    #expect(format == .binary)
    #expect(try Self.convert(decoded) == SampleValues.portable)
  }

  @Test func propertyListSerializationReadsAChunkOfRecords() throws {
    let chunk: PropertyListValue = .array((0..<500).map(SampleValues.record))
    let decoded = try PropertyListSerialization.propertyList(
      from: Data(chunk.binaryPropertyList()), options: [], format: nil)
    #expect(try Self.convert(decoded) == chunk)
  }

  @Test func weReadPropertyListSerializationsBinaryOutput() throws {
    let source: [String: Any] = [
      "name": "Foundation", "count": 42, "ratio": 0.25, "flag": true, "blob": Data([9, 8, 7]),
      "list": ["a", 1], "unicode": "ça va ✓",
    ]
    let bytes = try PropertyListSerialization.data(
      fromPropertyList: source, format: .binary, options: 0)
    let expected: PropertyListValue = [
      "name": "Foundation", "count": 42, "ratio": 0.25, "flag": true, "blob": .data([9, 8, 7]),
      "list": ["a", 1], "unicode": "ça va ✓",
    ]
    #expect(try PropertyListValue(binaryPropertyList: [UInt8](bytes)) == expected)
  }

  @Test func weReadNSKeyedArchiverOutput() throws {
    let graph: NSDictionary = [
      "title": "Archived", "numbers": [1, 2, 3] as NSArray, "when": Date(timeIntervalSince1970: 0),
      "nothing": NSNull(),
    ]
    let bytes = try NSKeyedArchiver.archivedData(
      withRootObject: graph, requiringSecureCoding: false)
    let archive = try KeyedArchive(bytes: [UInt8](bytes))
    #expect(archive.archiver == "NSKeyedArchiver")
    let root = try #require(try archive.topValue().stringKeyedDictionary)
    #expect(root["title"]?.stringValue == "Archived")
    #expect(root["numbers"]?.arrayValue?.compactMap(\.integerValue) == [1, 2, 3])
    if case .date(let date)? = root["when"] {
      #expect(date.secondsSince1970 == 0)
    } else {
      Issue.record("expected a date, got \(root["when"]?.kindName ?? "nothing")")
    }
    #expect(root["nothing"]?.isNull == true)
  }
}
