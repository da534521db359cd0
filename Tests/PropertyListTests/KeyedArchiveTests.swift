import PropertyList
import Testing

@Suite("NSKeyedArchiver archives")
struct KeyedArchiveTests {
  /// A hand-made archive: a custom object whose `items` is an NSArray of a string, an NSDate, an
  /// NSNull, an NSSet and an NSDictionary; its `owner` points to another custom object whose
  /// `back` points at the first (a cycle, as in a model's entity ↔ model links).
  static let archive: PropertyListValue = [
    "$archiver": "NSKeyedArchiver",
    "$version": 100_000,
    "$top": ["root": .uid(1)],
    "$objects": [
      "$null",
      ["$class": .uid(2), "items": .uid(3), "owner": .uid(10), "count": 3, "name": .uid(4)],
      ["$classname": "Library", "$classes": ["Library", "NSObject"]],
      ["$class": .uid(5), "NS.objects": [.uid(4), .uid(6), .uid(8), .uid(11), .uid(13)]],
      "a string",
      ["$classname": "NSMutableArray", "$classes": ["NSMutableArray", "NSArray", "NSObject"]],
      ["$class": .uid(7), "NS.time": 86_400.5],
      ["$classname": "NSDate", "$classes": ["NSDate", "NSObject"]],
      ["$class": .uid(9)],
      ["$classname": "NSNull", "$classes": ["NSNull", "NSObject"]],
      ["$class": .uid(2), "back": .uid(1), "name": "owner"],
      ["$class": .uid(12), "NS.objects": [.uid(4)]],
      ["$classname": "NSSet", "$classes": ["NSSet", "NSObject"]],
      ["$class": .uid(14), "NS.keys": [.uid(4)], "NS.objects": [.uid(15)]],
      ["$classname": "NSDictionary", "$classes": ["NSDictionary", "NSObject"]],
      ["$class": .uid(16), "NS.data": .data([1, 2, 3])],
      ["$classname": "NSMutableData", "$classes": ["NSMutableData", "NSData", "NSObject"]],
    ],
  ]

  @Test func foundationClassesDecodeToPlainValues() throws {
    let archive = try KeyedArchive(Self.archive)
    let root = try archive.rootObject()
    #expect(root.className == "Library")
    #expect(root.classHierarchy == ["Library", "NSObject"])
    #expect(root.keys == ["count", "items", "name", "owner"])
    #expect(try root.string(forKey: "name") == "a string")
    #expect(try root.value(forKey: "count").integerValue == 3)
    let items = try #require(try root.value(forKey: "items").arrayValue)
    #expect(items.count == 5)
    #expect(items[0].stringValue == "a string")
    if case .date(let date) = items[1] {
      #expect(date.secondsSinceReferenceDate == 86_400.5)
    } else {
      Issue.record("expected a date, got \(items[1].kindName)")
    }
    #expect(items[2].isNull)
    if case .set(let members) = items[3] {
      #expect(members.first?.stringValue == "a string")
    } else {
      Issue.record("expected a set")
    }
    let dictionary = try #require(items[4].stringKeyedDictionary)
    #expect(dictionary["a string"]?.dataValue == [1, 2, 3])
  }

  @Test func objectGraphsWithCyclesAreWalkedLazily() throws {
    let root = try KeyedArchive(Self.archive).rootObject()
    let owner = try #require(try root.object(forKey: "owner"))
    #expect(try owner.string(forKey: "name") == "owner")
    let back = try #require(try owner.object(forKey: "back"))
    #expect(back.uid == root.uid)
    #expect(try root.value(forKey: "missing").isNull)
  }

  @Test func aCollectionThatContainsItselfIsACycleError() throws {
    var objects = Self.archive["$objects"]!.arrayValue!
    objects[3] = ["$class": .uid(5), "NS.objects": [.uid(3)]]
    var archive = Self.archive.dictionaryValue!
    archive["$objects"] = .array(objects)
    let root = try KeyedArchive(.dictionary(archive)).rootObject()
    #expect(throws: PropertyListError.self) { try root.value(forKey: "items") }
  }

  @Test func badUidsAndMissingClassesAreClearErrors() throws {
    var objects = Self.archive["$objects"]!.arrayValue!
    objects[1] = ["$class": .uid(2), "items": .uid(999)]
    var archive = Self.archive.dictionaryValue!
    archive["$objects"] = .array(objects)
    let root = try KeyedArchive(.dictionary(archive)).rootObject()
    do {
      _ = try root.value(forKey: "items")
      Issue.record("expected an error")
    } catch {
      #expect(error.description.contains("UID 999 is outside $objects"))
      #expect(error.description.contains("Library(UID 1).items"))
    }
    #expect(throws: PropertyListError.self) { try KeyedArchive(["$objects": []]) }
    #expect(throws: PropertyListError.self) {
      try KeyedArchive(Self.archive).topValue(forKey: "nope")
    }
  }

  @Test func anArchiveReadsTheSameFromBinaryAndXml() throws {
    let binary = try KeyedArchive(bytes: Self.archive.binaryPropertyList())
    let xml = try KeyedArchive(bytes: XMLPropertyList.encode(Self.archive))
    #expect(
      try binary.rootObject().string(forKey: "name") == xml.rootObject().string(forKey: "name"))
    #expect(binary.objectCount == 17)
  }
}
