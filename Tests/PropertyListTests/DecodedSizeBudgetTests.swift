import Foundation
import PropertyList
import TestSupport
import Testing

/// A small property list or keyed archive cannot decode to a large tree: an object referenced
/// from many places costs each time it is met, and a decode that would pass the documented
/// factor of the list's own size is refused, naming the budget, before it has grown. Sharing
/// within that budget (Apple's writer uniques strings and numbers) decodes as Python's
/// `plistlib` decodes it.
@Suite("Decoding within a budget")
struct DecodedSizeBudgetTests {
  func isBudgetError(_ error: any Error) -> Bool {
    "\(error)".contains("decoding would take more than")
  }

  @Test func anArrayRepeatingOneLargeStringIsRefused() throws {
    var list = SharingPropertyList()
    let big = list.add(.string(String(repeating: "é", count: 30_000)))
    let top = list.add(.array(Array(repeating: big, count: 15_000)))
    let bytes = list.bytes(top: top)
    #expect(bytes.count < 200_000)
    #expect(performing: { try PropertyListValue(binaryPropertyList: bytes) }, throws: isBudgetError)
  }

  @Test func aDictionaryOfScalarsRepeatingOneLargeStringIsRefused() throws {
    // The decoder's flat road (a container of scalars only) counts too.
    var list = SharingPropertyList()
    let big = list.add(.data([UInt8](repeating: 7, count: 50_000)))
    let pairs = (0..<5_000).map { (key: list.add(.string("k\($0)")), value: big) }
    let top = list.add(.dictionary(pairs))
    let bytes = list.bytes(top: top)
    #expect(performing: { try PropertyListValue(binaryPropertyList: bytes) }, throws: isBudgetError)
    let reader = try BinaryPropertyListReader(bytes: bytes)
    #expect(
      performing: { try reader.forEachDictionaryEntry { _, _ in } }, throws: isBudgetError)
  }

  @Test func arraysNestingSharedArraysAreRefusedAtAnyDepth() throws {
    for levels in [30, 60, 400] {
      var list = SharingPropertyList()
      let top = list.doublingChain(levels: levels, above: list.add(.string("leaf")))
      let bytes = list.bytes(top: top)
      #expect(
        performing: { try PropertyListValue(binaryPropertyList: bytes) }, throws: isBudgetError)
    }
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3's plistlib"))
  func sharingWithinTheBudgetDecodesAsPlistlibDecodesIt() throws {
    var list = SharingPropertyList()
    let word = list.add(.string("shared"))
    let number = list.add(.integer(42))
    let inner = list.add(.array([word, number, word]))
    let middle = list.doublingChain(levels: 6, above: inner)
    let keys = (0..<20).map { list.add(.string("key\($0)")) }
    let top = list.add(.dictionary(keys.map { (key: $0, value: middle) }))
    let bytes = list.bytes(top: top)
    let ours = try PropertyListValue(binaryPropertyList: bytes)
    let python = try Subprocess.python(
      """
      import json, plistlib, sys
      print(json.dumps(plistlib.loads(sys.stdin.buffer.read()), sort_keys=True))
      """, input: bytes)
    #expect(python.status == 0, "\(python.stderr)")
    func json(_ value: PropertyListValue) -> Any {
      switch value {
      case .string(let text): return text
      case .integer(let number): return number
      case .array(let elements): return elements.map(json)
      case .dictionary(let entries): return entries.mapValues(json)
      default: return "?"
      }
    }
    let mine = try JSONSerialization.data(withJSONObject: json(ours), options: [.sortedKeys])
    let theirs = try JSONSerialization.jsonObject(with: Data(python.stdout.utf8))
    #expect(try JSONSerialization.data(withJSONObject: theirs, options: [.sortedKeys]) == mine)
  }

  /// An `NSKeyedArchiver` archive whose arrays each hold the next one twice, `levels` deep,
  /// above one string.
  func keyedArchiveChain(levels: Int) -> PropertyListValue {
    var objects: [PropertyListValue] = [.string("$null")]
    let classUID = UInt64(levels + 2)
    for level in 0..<levels {
      let next = UInt64(level + 2)
      objects.append(
        .dictionary(["NS.objects": .array([.uid(next), .uid(next)]), "$class": .uid(classUID)]))
    }
    objects.append(.string("leaf"))
    objects.append(
      .dictionary([
        "$classname": .string("NSArray"),
        "$classes": .array([.string("NSArray"), .string("NSObject")]),
      ]))
    return .dictionary([
      "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100_000),
      "$top": .dictionary(["root": .uid(1)]), "$objects": .array(objects),
    ])
  }

  @Test func aKeyedArchiveWhoseArraysShareArraysIsRefused() throws {
    let archive = try KeyedArchive(keyedArchiveChain(levels: 60))
    #expect(performing: { try archive.topValue() }, throws: isBudgetError)
  }

  @Test func aKeyedArchiveSharingWithinTheBudgetDecodesEveryCopy() throws {
    let archive = try KeyedArchive(keyedArchiveChain(levels: 4))
    var leaves = 0
    func count(_ value: KeyedArchiveValue) {
      switch value {
      case .array(let elements): elements.forEach(count)
      case .string("leaf"): leaves += 1
      default: break
      }
    }
    count(try archive.topValue())
    #expect(leaves == 16)
  }
}
