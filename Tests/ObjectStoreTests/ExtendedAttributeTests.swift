import Foundation
import ObjectModel
import ObjectStore
import PropertyList
import SQLite
import TestSupport
import Testing

@Suite("Extended attributes, refresh and merge", .serialized)
struct ExtendedAttributeTests {
  let directory: TemporaryDirectory
  let path: String
  let model: ObjectModel

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Notes.sqlite").path
    model = try BucketModel.make()
    try StoreCreator.create(at: path, model: model)
  }

  func context() throws -> ObjectContext { try ObjectContext(storePath: path, model: model) }

  /// The bucket column of note `pk` as stored: nil for NULL, else the decoded dictionary.
  func storedBucket(_ pk: Int64) throws -> [String: PropertyListValue]? {
    let database = try Database(path: path, mode: .readOnly)
    let statement = try database.prepare("SELECT ZEXTENDEDDATA FROM ZNOTE WHERE Z_PK = ?")
    try statement.bind(.integer(pk), at: 1)
    guard let row = try statement.allRows().first, case .blob(let bytes) = row[0] else {
      return nil
    }
    return try PropertyListValue(binaryPropertyList: bytes).dictionaryValue
  }

  func newNote(_ context: ObjectContext, title: String = "first") throws -> ManagedObject {
    let note = try context.insert("Note")
    try note.setValue(.string(title), for: "title")
    return note
  }

  @Test func extendedValuesAreSavedAsOneBinaryPlistAndANullBucketWhenEmpty() throws {
    let context = try context()
    let note = try newNote(context)
    try note.setValue(.string("blue"), forExtendedKey: "shade")
    try note.setValue(.array([.integer(1), .string("two")]), forExtendedKey: "list")
    #expect(try storedBucket(note.primaryKey) == nil)  // nothing written before the save
    try context.save()
    // Read by an independent decoder: Python's plistlib.
    let database = try Database(path: path, mode: .readOnly)
    let blob = try database.prepare("SELECT hex(ZEXTENDEDDATA) FROM ZNOTE").allRows()[0][0]
    let python = try Subprocess.python(
      "import plistlib,sys\nprint(sorted(plistlib.loads(bytes.fromhex(sys.argv[1])).items()))",
      [blob.textValue ?? ""])
    #expect(python.stdout == "[('list', [1, 'two']), ('shade', 'blue')]\n", "\(python.stderr)")
    // A key set to nil is a marker until saved, then gone; nothing left: NULL, not an empty plist.
    try note.setValue(nil, forExtendedKey: "shade")
    #expect(try note.value(forExtendedKey: "shade") == nil)
    #expect(try storedBucket(note.primaryKey)?["shade"] == .string("blue"))
    try context.save()
    #expect(try storedBucket(note.primaryKey) == ["list": .array([.integer(1), .string("two")])])
    try note.setValue(nil, forExtendedKey: "list")
    try context.save()
    #expect(try storedBucket(note.primaryKey) == nil)
    let reread = try self.context()
    let again = try reread.object(with: note.reference)
    #expect(try again.extendedValues().isEmpty)
  }

  /// Stores `bytes` as note `pk`'s bucket, as another program would.
  func storeBucket(_ bytes: [UInt8], of pk: Int64) throws {
    let database = try Database(path: path, mode: .readWrite)
    let statement = try database.prepare("UPDATE ZNOTE SET ZEXTENDEDDATA = ? WHERE Z_PK = ?")
    try statement.bind(.blob(bytes), at: 1)
    try statement.bind(.integer(pk), at: 2)
    try statement.run()
  }

  @Test func aBucketAnotherProgramWroteWithKeysUnsortedReadsAsPythonReadsItAndIsSavedSorted()
    throws
  {
    let setup = try context()
    let note = try newNote(setup)
    try setup.save()
    // Forty keys in a shuffled order (plistlib keeps the order it is given): more than a
    // lookup compares one by one.
    let written = try Subprocess.python(
      """
      import plistlib, random, sys
      keys = [f"key{i:02d}" for i in range(40)]
      random.Random(5).shuffle(keys)
      d = {k: (int(k[3:]) if int(k[3:]) % 2 else "v" + k) for k in keys}
      sys.stdout.write(plistlib.dumps(d, fmt=plistlib.FMT_BINARY, sort_keys=False).hex())
      """)
    #expect(written.status == 0, "\(written.stderr)")
    try storeBucket(try #require(Self.bytes(hex: written.stdout)), of: note.primaryKey)
    let reader = try context()
    let stored = try reader.object(with: note.reference)
    for index in 0..<40 {
      let key = "key" + (index < 10 ? "0" : "") + "\(index)"
      let expected: PropertyListValue = index % 2 == 1 ? .integer(Int64(index)) : .string("v\(key)")
      #expect(try stored.value(forExtendedKey: key) == expected, "\(key)")
    }
    #expect(try stored.value(forExtendedKey: "key40") == nil)
    #expect(try stored.value(forExtendedKey: "") == nil)
    #expect(try stored.extendedValues().count == 40)
    // One key changed, one removed, one added between two others: saved with its keys sorted.
    try stored.setValue(.string("changed"), forExtendedKey: "key07")
    try stored.setValue(nil, forExtendedKey: "key12")
    try stored.setValue(.bool(true), forExtendedKey: "key12a")
    try reader.save()
    let database = try Database(path: path, mode: .readOnly)
    let blob = try database.prepare("SELECT hex(ZEXTENDEDDATA) FROM ZNOTE").allRows()[0][0]
    let python = try Subprocess.python(
      """
      import plistlib, sys
      d = plistlib.loads(bytes.fromhex(sys.argv[1]))
      print(list(d) == sorted(d), len(d), d["key07"], "key12" in d, d["key12a"], d["key13"])
      """, [blob.textValue ?? ""])
    #expect(python.stdout == "True 40 changed False True 13\n", "\(python.stderr)")
  }

  @Test func aBucketHoldingOneKeyTwiceReadsAsItsWholeDecodingDoesTheLastValue() throws {
    let setup = try context()
    let note = try newNote(setup)
    try setup.save()
    var writer = BinaryPropertyListWriter()
    let start = writer.stackCount
    for (key, value) in [("shade", "first"), ("size", "large"), ("shade", "last")] {
      writer.push(writer.string(key))
      writer.push(writer.string(value))
    }
    let root = writer.makeDictionary(fromStackIndex: start)
    let bytes = writer.serialized(root: root)
    try storeBucket(bytes, of: note.primaryKey)
    let whole = try #require(try PropertyListValue(binaryPropertyList: bytes).dictionaryValue)
    let reader = try context()
    let stored = try reader.object(with: note.reference)
    #expect(try stored.value(forExtendedKey: "shade") == whole["shade"])
    #expect(try stored.value(forExtendedKey: "shade") == .string("last"))
    #expect(try stored.extendedValues() == whole)
  }

  @Test func extendedChangesAreWrittenByTheSaveThatFollowsThemWhateverCameBetween() throws {
    let setup = try context()
    let kept = try newNote(setup, title: "kept")
    let rolledBack = try newNote(setup, title: "rolled back")
    let undone = try newNote(setup, title: "undone")
    let refreshed = try newNote(setup, title: "refreshed")
    try setup.save()
    let context = try self.context()
    context.undoManager = ContextUndoManager()
    func note(_ object: ManagedObject) throws -> ManagedObject {
      try context.object(with: object.reference)
    }
    // A save that fails keeps the change for the next one.
    try note(kept).setValue(.integer(1), forExtendedKey: "k")
    let broken = try context.insert("Note")  // its required title left nil
    #expect(throws: StoreError.self) { try context.save() }
    try broken.setValue(.string("fixed"), for: "title")
    try context.save()
    #expect(try storedBucket(kept.primaryKey) == ["k": 1])
    // A rollback drops it, and the save after writes nothing of it.
    try note(rolledBack).setValue(.integer(2), forExtendedKey: "k")
    context.rollback()
    try note(kept).setValue(.string("after rollback"), for: "color")
    try context.save()
    #expect(try storedBucket(rolledBack.primaryKey) == nil)
    // An undone change, a refresh that drops it, a deleted object's change: none written.
    try note(undone).setValue(.integer(3), forExtendedKey: "k")
    try context.undoManager?.undo()
    try note(refreshed).setValue(.integer(4), forExtendedKey: "k")
    try context.refresh(try note(refreshed), mergeChanges: false)
    let deleted = try newNote(context, title: "deleted")
    try deleted.setValue(.integer(5), forExtendedKey: "k")
    try context.delete(deleted)
    try note(kept).setValue(.integer(6), forExtendedKey: "k")
    try context.save()
    #expect(try storedBucket(undone.primaryKey) == nil)
    #expect(try storedBucket(refreshed.primaryKey) == nil)
    #expect(try storedBucket(kept.primaryKey) == ["k": 6])
    // A second key beside the one there, then the first removed.
    try note(kept).setValue(.string("j"), forExtendedKey: "j")
    try context.save()
    #expect(try storedBucket(kept.primaryKey) == ["j": "j", "k": 6])
    try note(kept).setValue(nil, forExtendedKey: "j")
    try context.save()
    #expect(try storedBucket(kept.primaryKey) == ["k": 6])
    // Undoing the delete of an object with extended changes brings them back, and a save
    // writes them.
    let again = try newNote(context, title: "again")
    try again.setValue(.integer(7), forExtendedKey: "k")
    try context.save()
    try again.setValue(.integer(8), forExtendedKey: "k")
    try context.delete(again)
    try context.undoManager?.undo()
    try context.save()
    #expect(try storedBucket(again.primaryKey) == ["k": 8])
  }

  static func bytes(hex: String) -> [UInt8]? {
    var result: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex {
      let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) ?? hex.endIndex
      guard let byte = UInt8(hex[index..<next], radix: 16) else { return nil }
      result.append(byte)
      index = next
    }
    return result
  }

  @Test func unknownKeysFallThroughToTheBucketOnlyWhenTheModelSaysSo() throws {
    let context = try context()
    let note = try newNote(context)
    try note.setValue(.string("teal"), for: "mood")  // Note has no attribute "mood"
    #expect(try note.value(for: "mood") == .string("teal"))
    #expect(try note.value(forExtendedKey: "mood") == .string("teal"))
    try note.setValue(.string("native"), for: "color")  // a real attribute stays one
    #expect(try note.value(forExtendedKey: "color") == nil)
    let memo = try context.insert("Memo")
    // Without fall-through an unknown key is an error both ways, as in Core Data.
    #expect(throws: StoreError.self) { try memo.setValue(.string("x"), for: "mood") }
    #expect(throws: StoreError.self) { try memo.value(for: "mood") }
    try memo.setValue(.integer(3), forExtendedKey: "mood")  // the explicit call still works
    let folder = try context.insert("Folder")
    #expect(throws: StoreError.self) { try folder.setValue(.string("x"), forExtendedKey: "mood") }
    try context.save()
    let reread = try self.context()
    #expect(try reread.object(with: note.reference).value(for: "mood") == .string("teal"))
  }

  /// The write-up's sequence: local "blue" over a stored "red", then another context stores
  /// "green", "blue" and "red", refreshing with merge after each.
  @Test(arguments: [
    (ObjectContext.MergeSemantics.coreData, ["blue", "blue", "blue", "red"]),
    (ObjectContext.MergeSemantics.stable, ["blue", "blue", "blue", "blue"]),
  ])
  func aMergingRefreshKeepsLocalChangesAsEachSemanticsSays(
    semantics: ObjectContext.MergeSemantics, expected: [String]
  ) throws {
    for extended in [false, true] {
      let setup = try context()
      let note = try newNote(setup)
      func set(_ object: ManagedObject, _ color: String) throws {
        if extended {
          try object.setValue(.string(color), forExtendedKey: "shade")
        } else {
          try object.setValue(.string(color), for: "color")
        }
      }
      func get(_ object: ManagedObject) throws -> PropertyListValue? {
        extended
          ? try object.value(forExtendedKey: "shade")
          : try object.value(for: "color").flatMap {
            if case .string(let text) = $0 { return .string(text) } else { return nil }
          }
      }
      try set(note, "red")
      try setup.save()

      let mine = try context()
      mine.mergeSemantics = semantics
      let local = try mine.object(with: note.reference)
      try set(local, "blue")
      try mine.refresh(local, mergeChanges: true)
      var seen: [String] = []
      let other = try context()
      for stored in ["green", "blue", "red"] {
        let theirs = try other.object(with: note.reference)
        try other.refresh(theirs, mergeChanges: false)
        try set(theirs, stored)
        try other.save()
        try mine.refresh(local, mergeChanges: true)
        seen.append(try get(local).flatMap(\.stringValue) ?? "nil")
      }
      // The first "blue" is the value right after setting and refreshing once.
      #expect(["blue"] + seen == expected, "extended: \(extended)")
    }
  }

  @Test func extendedChangesMergePerKeyWhileAnotherContextChangesOtherKeys() throws {
    let setup = try context()
    let note = try newNote(setup)
    try note.setValue(.string("a"), forExtendedKey: "one")
    try note.setValue(.string("b"), forExtendedKey: "two")
    try setup.save()
    let mine = try context()
    let local = try mine.object(with: note.reference)
    try local.setValue(.string("mine"), forExtendedKey: "one")
    let other = try context()
    let theirs = try other.object(with: note.reference)
    try theirs.setValue(.string("theirs"), forExtendedKey: "two")
    try theirs.setValue(.string("new"), forExtendedKey: "three")
    try other.save()
    try mine.refresh(local, mergeChanges: true)
    try mine.save()
    #expect(
      try storedBucket(note.primaryKey)
        == ["one": .string("mine"), "two": .string("theirs"), "three": .string("new")])
    // Without merge, local changes are dropped.
    try local.setValue(.string("dropped"), forExtendedKey: "one")
    try mine.refresh(local, mergeChanges: false)
    #expect(try local.value(forExtendedKey: "one") == .string("mine"))
    #expect(!mine.hasChanges)
  }

  @Test(arguments: [
    (ObjectContext.MergePolicy.storeWins, "theirs", "theirs title"),
    (ObjectContext.MergePolicy.objectWins, "mine", "first"),
    (ObjectContext.MergePolicy.mergeByKey, "mine", "theirs title"),
  ])
  func aConflictOnSaveFollowsTheMergePolicy(
    policy: ObjectContext.MergePolicy, color: String, title: String
  ) throws {
    let setup = try context()
    let note = try newNote(setup)
    try setup.save()
    let mine = try context()
    let local = try mine.object(with: note.reference)
    try local.setValue(.string("mine"), for: "color")
    let other = try context()
    let theirs = try other.object(with: note.reference)
    try theirs.setValue(.string("theirs"), for: "color")
    try theirs.setValue(.string("theirs title"), for: "title")
    try other.save()
    #expect {
      try mine.save()
    } throws: { error in
      (error as? StoreError)?.kind == .conflict && "\(error)".contains("Note/p\(note.primaryKey)")
    }
    mine.mergePolicy = policy
    try mine.save()
    let check = try context()
    let stored = try check.object(with: note.reference)
    #expect(try stored.value(for: "color") == .string(color))
    #expect(try stored.value(for: "title") == .string(title))
  }

  @Test func predicatesOnExtendedKeysSelectWhatPythonSelectsFromTheStoredBuckets() throws {
    let context = try context()
    for index in 0..<60 {
      let note = try newNote(context, title: index % 3 == 0 ? "note \(index)" : "memo \(index)")
      if index % 4 != 0 { try note.setValue(.integer(Int64(index % 7)), forExtendedKey: "stars") }
      if index % 5 == 0 { try note.setValue(.string("tag\(index % 3)"), forExtendedKey: "tag") }
    }
    try context.save()
    let predicate =
      "title BEGINSWITH 'note' AND (extended.stars > 2 OR extended.tag == 'tag0') AND NOT extended.stars == 5"
    let reader = try self.context()
    let found = try reader.fetch(FetchRequest(entity: "Note", predicate: .format(predicate)))
      .map(\.primaryKey).sorted()
    let python = try Subprocess.python(
      """
      import plistlib, sqlite3, sys
      db = sqlite3.connect(sys.argv[1])
      for pk, title, blob in db.execute("SELECT Z_PK, ZTITLE, ZEXTENDEDDATA FROM ZNOTE ORDER BY Z_PK"):
          b = plistlib.loads(blob) if blob else {}
          stars, tag = b.get("stars"), b.get("tag")
          if title.startswith("note") and ((stars is not None and stars > 2) or tag == "tag0") and not stars == 5:
              print(pk)
      """, [path])
    #expect(python.status == 0, "\(python.stderr)")
    let expected = python.stdout.split(separator: "\n").compactMap { Int64($0) }
    #expect(!expected.isEmpty)
    #expect(found == expected)
    // Unsaved extended changes count too, as for native attributes.
    let first = try #require(try reader.fetch(FetchRequest(entity: "Note")).first)
    try first.setValue(.string("tag0"), forExtendedKey: "tag")
    try first.setValue(.string("note zero"), for: "title")
    #expect(
      try reader.fetch(
        FetchRequest(entity: "Note", predicate: "extended.tag == 'tag0' AND title == 'note zero'")
      )
      .map(\.primaryKey) == [first.primaryKey])
    // An entity without a bucket has no extended keys.
    #expect(throws: StoreError.self) {
      try reader.fetch(FetchRequest(entity: "Folder", predicate: "extended.x == 1"))
    }
  }

  @Test func extendedKeysAppearInTheClassTaggedDictionaryAndComeBackFromIt() throws {
    let context = try context()
    let note = try newNote(context)
    try note.setValue(.dictionary(["a": .integer(1)]), forExtendedKey: "nested")
    try note.setValue(.string("x"), forExtendedKey: "plain")
    try context.save()
    let dictionary = try note.dictionary()
    #expect(dictionary.attributes["extendedData"] == nil)
    #expect(
      dictionary.extended == ["nested": .dictionary(["a": .integer(1)]), "plain": .string("x")])
    let copy = try context.insert(
      ObjectDictionary(
        entity: "Note", attributes: dictionary.attributes, extended: dictionary.extended))
    try context.save()
    #expect(try copy.extendedValues() == note.extendedValues())
  }

  @Test func hooksRunInOrderAndDidTurnIntoFaultWhenStateIsDropped() throws {
    let context = try context()
    var events: [String] = []
    try context.addHook(.willSave, for: "Note") { note in
      events.append("willSave")
      // A required attribute written here passes validation, which runs after.
      if try note.value(for: "title") == nil {
        try note.setValue(.string("from hook"), for: "title")
      }
    }
    try context.addHook(.didSave, for: "Note") { _ in events.append("didSave") }
    try context.addHook(.didTurnIntoFault, for: "Note") { _ in events.append("fault") }
    let note = try context.insert("Note")
    try context.save()
    #expect(events == ["willSave", "didSave"])
    try context.refresh(note, mergeChanges: false)
    try context.refresh(note, mergeChanges: true)
    try context.reset()
    #expect(events == ["willSave", "didSave", "fault", "fault", "fault"])
  }
}
