import Foundation
import SQLite
import TestSupport
import Testing
import Zlib

@testable import PropertyList

/// Whether two keyed archives hold the same graph: from `$top`, the same classes, keys, inline
/// values and plain entries, and objects that correspond one to one (so sharing and cycles are
/// kept). Plain entries (strings, numbers, data) compare by value, as Foundation's uniquing of
/// them is by identity, which an archive does not record.
func equivalent(_ a: KeyedArchive, _ b: KeyedArchive) throws -> String? {
  guard a.topKeys == b.topKeys else { return "$top keys \(a.topKeys) vs \(b.topKeys)" }
  var forward: [UInt64: UInt64] = [0: 0]
  var backward: [UInt64: UInt64] = [0: 0]
  var queue: [(UInt64, UInt64, String)] = []
  func pair(_ x: PropertyListValue, _ y: PropertyListValue, _ path: String) -> String? {
    switch (x, y) {
    case (.uid(let u), .uid(let v)):
      guard u < a.objects.count, v < b.objects.count else { return "\(path): UID out of range" }
      if case .dictionary(let fields) = a.objects[Int(u)], fields["$class"] != nil {
        if let known = forward[u] { return known == v ? nil : "\(path): sharing differs" }
        if backward[v] != nil { return "\(path): sharing differs" }
        forward[u] = v
        backward[v] = u
        queue.append((u, v, path))
        return nil
      }
      if u == 0 || v == 0 { return u == v ? nil : "\(path): $null vs an entry" }
      return a.objects[Int(u)] == b.objects[Int(v)]
        ? nil : "\(path): \(a.objects[Int(u)]) vs \(b.objects[Int(v)])"
    case (.array(let xs), .array(let ys)) where xs.contains(where: \.isReference):
      guard xs.count == ys.count else { return "\(path): \(xs.count) vs \(ys.count) elements" }
      for (index, (x, y)) in zip(xs, ys).enumerated() {
        if let problem = pair(x, y, "\(path)[\(index)]") { return problem }
      }
      return nil
    default:
      return x == y ? nil : "\(path): \(x) vs \(y)"
    }
  }
  for key in a.topKeys {
    if let problem = pair(a.top[key]!, b.top[key]!, "$top.\(key)") { return problem }
  }
  while let (u, v, path) = queue.popLast() {
    guard case .dictionary(let x) = a.objects[Int(u)],
      case .dictionary(let y) = b.objects[Int(v)],
      case .uid(let cx)? = x["$class"], case .uid(let cy)? = y["$class"]
    else { return "\(path): not an object on both sides" }
    let (nameX, classesX) = try a.classInfo(cx, path: path)
    let (nameY, classesY) = try b.classInfo(cy, path: path)
    guard nameX == nameY, classesX == classesY else { return "\(path): \(nameX) vs \(nameY)" }
    guard Set(x.keys) == Set(y.keys) else {
      return "\(path) (\(nameX)): keys \(x.keys.sorted()) vs \(y.keys.sorted())"
    }
    for key in x.keys.sorted() where key != "$class" {
      if let problem = pair(x[key]!, y[key]!, "\(path).\(key)") { return problem }
    }
  }
  return nil
}

extension PropertyListValue {
  fileprivate var isReference: Bool {
    if case .uid = self { return true }
    return false
  }
}

@Suite("Writing NSKeyedArchiver archives")
struct KeyedArchiveBuilderTests {
  @Test func objectsAreLaidOutAsNSKeyedArchiverLaysThemOut() throws {
    // As in Apple's caches: the object first, its values depth first, its class after them,
    // each class once.
    var builder = KeyedArchiveBuilder()
    let names = builder.array([.string("Author"), .string("Book")])
    let plist = builder.archivePropertyList(top: [("root", names)])
    let expected: PropertyListValue = [
      "$archiver": "NSKeyedArchiver", "$version": 100_000, "$top": ["root": .uid(1)],
      "$objects": [
        "$null",
        ["NS.objects": [.uid(2), .uid(3)], "$class": .uid(4)],
        "Author", "Book",
        ["$classname": "NSArray", "$classes": ["NSArray", "NSObject"]],
      ],
    ]
    #expect(plist == expected)
  }

  @Test func sharedObjectsAreWrittenOnceAndCyclesClose() throws {
    var builder = KeyedArchiveBuilder()
    let model = builder.makeObject(classes: ["Model", "NSObject"])
    let first = builder.makeObject(classes: ["Entity", "NSObject"])
    let second = builder.makeObject(classes: ["Entity", "NSObject"])
    for (entity, name) in [(first, "A"), (second, "B")] {
      builder.set(.value(.string(name)), forKey: "name", of: entity)
      builder.set(.value(.object(model)), forKey: "model", of: entity)
      builder.set(.inline(.integer(7)), forKey: "flags", of: entity)
    }
    builder.set(.value(.object(second)), forKey: "peer", of: first)
    builder.set(.value(.object(first)), forKey: "peer", of: second)
    builder.set(
      .values([.object(first), .object(second), .object(first)]), forKey: "all", of: model)
    builder.set(
      .value(builder.date(PropertyListDate(secondsSinceReferenceDate: 1.5))), forKey: "at",
      of: model)
    let bytes = builder.archive(root: .object(model))
    let archive = try KeyedArchive(bytes: bytes)
    let root = try archive.rootObject()
    let all = try #require(try root.value(forKey: "all").arrayValue).compactMap(\.objectValue)
    #expect(all.count == 3 && all[0].uid == all[2].uid && all[0].uid != all[1].uid)
    #expect(try all[0].object(forKey: "peer")?.uid == all[1].uid)
    #expect(try all[1].object(forKey: "peer")?.object(forKey: "peer")?.uid == all[1].uid)
    #expect(try all[1].object(forKey: "model")?.uid == root.uid)
    #expect(try all[1].string(forKey: "name") == "B")
    #expect(all[0].rawValue(forKey: "flags") == .integer(7))
    if case .date(let date) = try root.value(forKey: "at") {
      #expect(date.secondsSinceReferenceDate == 1.5)
    } else {
      Issue.record("expected a date")
    }
    // $null, three objects, two names, one date, three classes.
    #expect(archive.objectCount == 10)
  }

  @Test func decodedFoundationValuesAreWrittenBackEqual() throws {
    let original = try KeyedArchive(KeyedArchiveTests.archive)
    var builder = KeyedArchiveBuilder()
    let items = try builder.value(try original.rootObject().value(forKey: "items"))
    let copy = try KeyedArchive(bytes: builder.archive(root: items))
    let values = try #require(try copy.topValue().arrayValue)
    #expect(values.count == 5)
    #expect(values[0].stringValue == "a string")
    #expect(values[2].isNull)
    #expect(try copy.topValue().kindName == "array")
    #expect(try #require(values[4].stringKeyedDictionary)["a string"]?.dataValue == [1, 2, 3])
  }

  @Test func aCopiedArchiveIsEquivalentAndTheCheckCanTellADifference() throws {
    let original = try KeyedArchive(KeyedArchiveTests.archive)
    let copy = try KeyedArchive(bytes: KeyedArchiveBuilder.rewritten(original))
    #expect(try equivalent(original, copy) == nil)
    #expect(try equivalent(copy, original) == nil)
    // A changed inline value, and a lost sharing, are both seen.
    var changed = KeyedArchiveTests.archive
    var objects = changed["$objects"]!.arrayValue!
    objects[1] = [
      "$class": .uid(2), "items": .uid(3), "owner": .uid(10), "count": 4, "name": .uid(4),
    ]
    changed = [
      "$archiver": "NSKeyedArchiver", "$version": 100_000, "$top": ["root": .uid(1)],
      "$objects": .array(objects),
    ]
    #expect(try equivalent(original, KeyedArchive(changed)) != nil)
  }

  /// Random graphs: objects of a few classes holding every kind of value, shared, in cycles.
  @Test(arguments: 0..<40)
  func randomGraphsReadBackAsBuilt(seed: Int) throws {
    var random = SeededRandom(seed: UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1)
    var builder = KeyedArchiveBuilder()
    let count = 1 + Int(random.next() % 30)
    let ids = (0..<count).map { builder.makeObject(classes: ["Node\($0 % 3)", "NSObject"]) }
    var expected: [[String: String]] = Array(repeating: [:], count: count)
    for (index, id) in ids.enumerated() {
      for field in 0..<Int(random.next() % 6) {
        let key = "k\(field)"
        switch random.next() % 8 {
        case 0:
          builder.set(.inline(.integer(Int64(bitPattern: random.next()))), forKey: key, of: id)
        case 1:
          let target = Int(random.next() % UInt64(count))
          builder.set(.value(.object(ids[target])), forKey: key, of: id)
          expected[index][key] = "→\(target)"
        case 2:
          let text = String(repeating: "é", count: Int(random.next() % 4)) + "\(random.next())"
          builder.set(.value(.string(text)), forKey: key, of: id)
          expected[index][key] = text
        case 3:
          builder.set(.value(.real(Double(random.next() % 1000) / 8)), forKey: key, of: id)
        case 4:
          builder.set(
            .value(.data((0..<Int(random.next() % 9)).map { UInt8($0) })), forKey: key, of: id)
        case 5:
          let members = (0..<Int(random.next() % 4)).map { _ in
            KeyedArchiveBuilder.Value.object(ids[Int(random.next() % UInt64(count))])
          }
          builder.set(.value(builder.set(members)), forKey: key, of: id)
        case 6:
          builder.set(.value(.null), forKey: key, of: id)
          expected[index][key] = "null"
        default:
          builder.set(.inline(.bool(random.next() % 2 == 0)), forKey: key, of: id)
        }
      }
    }
    let archive = try KeyedArchive(bytes: builder.archive(root: .object(ids[0])))
    // Walk every object reachable from the root and check what was set on it.
    var seen: [UInt64: Int] = [:]
    var pending: [(KeyedArchiveObject, Int)] = [(try archive.rootObject(), 0)]
    while let (object, index) = pending.popLast() {
      if let known = seen[object.uid] {
        #expect(known == index, "one UID for two objects")
        continue
      }
      seen[object.uid] = index
      #expect(object.className == "Node\(index % 3)")
      for (key, value) in expected[index] {
        if value.hasPrefix("→") {
          let target = Int(value.dropFirst())!
          let reached = try #require(try object.object(forKey: key))
          pending.append((reached, target))
        } else if value == "null" {
          #expect(try object.value(forKey: key).isNull)
        } else {
          #expect(try object.string(forKey: key) == value)
        }
      }
    }
    // Objects reached twice kept one UID each: as many distinct UIDs as objects reached.
    #expect(Set(seen.keys).count == Set(seen.values).count)
    // Read, copied, written: the same graph.
    let copy = try KeyedArchive(bytes: KeyedArchiveBuilder.rewritten(archive))
    #expect(try equivalent(archive, copy) == nil)
  }

  @Test func aLongChainOfObjectsIsWrittenWithoutExhaustingTheStack() throws {
    var builder = KeyedArchiveBuilder()
    let ids = (0..<50_000).map { _ in builder.makeObject(classes: ["Link", "NSObject"]) }
    for (current, next) in zip(ids, ids.dropFirst()) {
      builder.set(.value(.object(next)), forKey: "next", of: current)
    }
    let archive = try KeyedArchive(bytes: builder.archive(root: .object(ids[0])))
    #expect(archive.objectCount == 50_002)
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
  func pythonsPlistlibReadsTheArchive() throws {
    var builder = KeyedArchiveBuilder()
    let root = builder.makeObject(classes: ["Thing", "NSObject"])
    builder.set(.value(.string("naïve")), forKey: "name", of: root)
    builder.set(.value(.object(root)), forKey: "me", of: root)
    let result = try Subprocess.python(
      """
      import plistlib, sys
      p = plistlib.loads(sys.stdin.buffer.read())
      o = p['$objects']; r = o[p['$top']['root'].data]
      print(p['$archiver'], o[r['name'].data], r['me'].data == p['$top']['root'].data, o[r['$class'].data]['$classname'])
      """, input: builder.archive(root: .object(root)))
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        == "NSKeyedArchiver naïve True Thing")
  }
}

@Suite(
  "Core Data's keyed archives written again",
  .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
struct FixtureKeyedArchiveRewriteTests {
  /// Every keyed archive in the fixtures: model caches, compiled models, and the stores' blob
  /// values that are keyed archives (transformable attributes, history tokens).
  static func archives() throws -> [(String, [UInt8])] {
    var found: [(String, [UInt8])] = []
    for url in SharedFixtures.files(endingWith: ".mom") {
      found.append((url.lastPathComponent, [UInt8](try Data(contentsOf: url))))
    }
    let directory = try TemporaryDirectory()
    for path in CoreDataFixtureTests.storePaths {
      let db = try CoreDataFixtureTests.openCopy(path, in: directory)
      let tables = try db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .allRows().compactMap { $0[0].textValue }
      for table in tables {
        let columns = try db.prepare("PRAGMA table_info(\"\(table)\")").allRows().compactMap {
          $0[1].textValue
        }
        for column in columns {
          let rows = try db.prepare(
            "SELECT \"\(column)\" FROM \"\(table)\" WHERE typeof(\"\(column)\") = 'blob'"
          ).allRows()
          for row in rows {
            guard var bytes = row[0].blobValue else { continue }
            if table == "Z_MODELCACHE" { bytes = try RawDeflate.decompress(bytes, limit: 64 << 20) }
            guard bytes.starts(with: Array("bplist00".utf8)),
              case .dictionary(let root)? = try? PropertyListValue(binaryPropertyList: bytes),
              root["$archiver"] != nil
            else { continue }
            found.append(("\(path) \(table).\(column)", bytes))
          }
        }
      }
    }
    return found
  }

  @Test func everyKeyedArchiveReadsTheSameAfterBeingWrittenAgain() throws {
    let archives = try Self.archives()
    let caches = archives.filter { $0.0.hasSuffix("Z_MODELCACHE.Z_CONTENT") }.count
    let moms = archives.filter { $0.0.hasSuffix(".mom") }.count
    #expect(caches == 10 && moms == 6, "caches \(caches), compiled models \(moms)")
    #expect(archives.count > caches + moms, "no transformable values found")
    var identical = 0
    for (name, bytes) in archives {
      let original = try KeyedArchive(bytes: bytes)
      let written = try KeyedArchiveBuilder.rewritten(original)
      let again = try KeyedArchive(bytes: written)
      let problem = try equivalent(original, again)
      #expect(problem == nil, "\(name): \(problem ?? "")")
      if written == bytes { identical += 1 }
      // Written twice, the bytes are the same: the writer is deterministic.
      #expect(try KeyedArchiveBuilder.rewritten(again) == written)
    }
    // Not Apple's bytes: see docs/DEVELOPMENT.md (key order, uniquing by identity).
    #expect(identical == 0)
  }
}
