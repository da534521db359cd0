import Foundation
import TestSupport
import Testing

/// `scripts/gvread.py`, a reader written in Python from `docs/FORMAT.md` alone, against
/// `graphvault export` of the same store: the format's executable check. Its output must hold
/// the same objects for every fixture store and sample workload, both formats, every
/// compression, encrypted and not, ordered relationships shuffled and values of the wrong
/// storage class included; and readers that get the format wrong must fail the comparison.
@Suite(
  "The reference reader",
  .enabled(
    if: Subprocess.isInstalled("python3") && Subprocess.isInstalled("zstd"),
    "needs python3 and the zstd command"))
struct ReferenceReaderTests {
  static let reader = SharedFixtures.packageRoot.appendingPathComponent("scripts/gvread.py").path
  /// The project's virtualenv has the `cryptography` package (it comes with moto), which
  /// encrypted archives need.
  static let python: String = {
    let venv = MotoServer.venv.appendingPathComponent("bin/python").path
    return FileManager.default.isExecutableFile(atPath: venv) ? venv : "python3"
  }()
  static let canDecrypt =
    ((try? Subprocess.run(python, ["-c", "import cryptography"]).status) == 0)

  /// Exits 0 when the reader's objects are export's: equal JSON, but that the reader shows a
  /// transformable's bytes beside the keyed archive they hold, where export shows only what they
  /// hold because it can write them again byte for byte.
  static let compare = """
    import json, sys
    def same(r, e):
        if isinstance(r, dict) and isinstance(e, dict):
            if set(r) == {"base64", "keyedArchive"} and set(e) == {"keyedArchive"}:
                return r["keyedArchive"] == e["keyedArchive"]
            return set(r) == set(e) and all(same(r[k], e[k]) for k in r)
        if isinstance(r, list) and isinstance(e, list):
            return len(r) == len(e) and all(same(a, b) for a, b in zip(r, e))
        return r == e
    reader, export = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
    a, b = reader["objects"], export["objects"]
    bad = [(x, y) for x, y in zip(a, b) if not same(x, y)]
    if len(a) != len(b) or bad:
        print("objects: %d from the reader, %d from export; %d differ" % (len(a), len(b), len(bad)))
        for x, y in bad[:3]:
            print({k: (x.get(k), y.get(k)) for k in set(x) | set(y) if not same(x.get(k), y.get(k))})
        sys.exit(1)
    print("same %d objects" % len(a))
    """

  let directory: TemporaryDirectory

  init() throws {
    directory = try TemporaryDirectory()
  }

  func path(_ name: String) -> String { directory.path(name).path }

  /// `graphvault export` of `source` into a file; returns its path.
  func export(_ source: String, model: [String] = [], name: String) throws -> String {
    let output = path(name)
    let result = try BuiltTool.run(["export", source, "--output", output, "-q"] + model)
    #expect(result.status == 0, "\(result.stderr)")
    return output
  }

  /// Backs `store` up with `options`; returns the archive.
  func backup(_ store: String, _ options: [String], name: String) throws -> String {
    let archive = path(name)
    let result = try BuiltTool.run(["backup", store, "--output", archive, "-q"] + options)
    #expect(result.status == 0, "\(result.stderr)")
    return archive
  }

  /// The reader's dump of `archive` compared with `exported`.
  func expectSame(
    _ archive: String, as exported: String, reader: String = Self.reader, password: String? = nil,
    _ label: String
  ) throws {
    let dumped = archive + ".reader.json"
    let dump = try Subprocess.run(
      Self.python,
      [reader, "dump", archive, "--output", dumped]
        + (password.map { ["--password-file", $0] } ?? []))
    #expect(dump.status == 0, "\(label): the reader failed: \(dump.stderr)")
    guard dump.status == 0 else { return }
    let comparison = try Subprocess.run(Self.python, ["-c", Self.compare, dumped, exported])
    #expect(comparison.status == 0, "\(label): \(comparison.stdout)\(comparison.stderr)")
  }

  @Test("an incremental archive reads with its chain as export shows its point")
  func incrementalChain() throws {
    let store = path("library.sqlite")
    #expect(try BuiltTool.run(["sample", store, "--objects", "1500", "-q"]).status == 0)
    let folder = path("chain")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    var newest = ""
    for night in 0..<4 {
      try sqlScript(
        store,
        """
        UPDATE ZBOOK SET ZTITLE = 'night \(night)' WHERE Z_PK % 50 = \(night);
        DELETE FROM ZPAGE WHERE Z_PK = (SELECT max(Z_PK) FROM ZPAGE);
        DELETE FROM Z_1TAGS WHERE rowid = (SELECT min(rowid) FROM Z_1TAGS);
        """)
      let result = try BuiltTool.run([
        "backup", store, "--output", folder + "/", "--incremental", "-q", "--time",
        "2026-11-0\(night + 1)T03:00:00Z",
      ])
      #expect(result.status == 0, "\(result.stderr)")
      newest =
        folder + "/"
        + (try FileManager.default.contentsOfDirectory(atPath: folder))
        .filter { $0.hasSuffix(".gvault") }.sorted().last!
    }
    let exported = try export(newest, name: "chain-export.json")
    try expectSame(newest, as: exported, "a chain of four")
    // The chain's point is the store's state: export of the store shows the same.
    try expectSame(newest, as: try export(store, name: "store-export.json"), "the store")
    let verify = try Subprocess.run(Self.python, [Self.reader, "verify", newest])
    #expect(verify.status == 0, "\(verify.stderr)")
  }

  @Test(
    "every fixture store, in every format, reads as export shows it",
    .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote),
    arguments: FixtureStore.all)
  func fixtureStores(fixture: FixtureStore) throws {
    let store = try SharedFixtures.copyStore(fixture.store, into: directory.url).path
    let model = fixture.modelSet.map { ["--model", SharedFixtures.file($0).path] } ?? []
    let exported = try export(store, model: model, name: "export.json")
    for format in ["1", "2", "3", "4"] {
      let archive = try backup(
        store, model + ["--format-version", format], name: "f\(format).gvault")
      try expectSame(archive, as: exported, "\(fixture.store), format \(format)")
    }
  }

  @Test(
    "every sample workload reads as export shows it, in every format, every compression, encrypted and not",
    arguments: ["library", "text", "relationships"])
  func sampleWorkloads(workload: String) throws {
    let store = path("\(workload).sqlite")
    #expect(
      try BuiltTool.run(["sample", store, "--objects", "1500", "--workload", workload, "-q"]).status
        == 0)
    let exported = try export(store, name: "export.json")
    var variants: [[String]] = [
      ["--format-version", "1"], ["--format-version", "2"], ["--format-version", "3"],
      ["--format-version", "4"],
    ]
    if workload == "library" {
      variants += ["xz", "gzip", "none"].map { ["--compression", $0] }
      variants += [["--compression", "none", "--format-version", "1"]]
    }
    for (number, options) in variants.enumerated() {
      let archive = try backup(store, options, name: "\(number).gvault")
      try expectSame(archive, as: exported, "\(workload) \(options)")
    }
    guard Self.canDecrypt else { return }
    let password = path("password")
    try Data("correct horse battery\n".utf8).write(to: URL(fileURLWithPath: password))
    let sealed: [[String]] =
      workload == "library"
      ? [
        ["--format-version", "1"], ["--format-version", "2"], ["--compression", "xz"],
        ["--compression", "gzip", "--format-version", "1"], ["--compression", "none"],
      ] : [["--format-version", "2"], []]
    for (number, options) in sealed.enumerated() {
      let archive = try backup(
        store, options + ["--password-file", password], name: "sealed-\(number).gvault")
      try expectSame(
        archive, as: exported, password: password, "\(workload) encrypted \(options)")
    }
  }

  @Test(
    "binary values holding JSON read as export shows them: as JSON only when written back exactly"
  )
  func binaryJSON() throws {
    let json = path("codable.json")
    // Each value's bytes, given as base64 so that import writes them as they are.
    let script = #"""
      import base64, json, sys
      values = [b'[1,2.5,"x\\n\\"q\\"",{"a":null,"b":[true,false]}]', b'{"a": 1}', b'[1e-07]',
                b'[100.0]', b'[1.0e2]', '["é😀"]'.encode(), b'[1,]', b'{"a":1,"a":2}',
                b'[NaN]', b'[12345678901234567890]', b'[-0.0]', b'[-0]', b'["\\u00e9"]',
                b'["\\/"]', b'{}', b'[]', b'[[[]]]', b'"text"', b'\x00\xff']
      objects = [{"class": "Order", "pk": i + 1, "drinks": {"base64": base64.b64encode(v).decode()}}
                 for i, v in enumerate(values)]
      entity = {"name": "Order", "attributes": [
          {"name": "drinks", "type": "Binary", "optional": True}], "relationships": []}
      json.dump({"model": {"format": 1, "name": "Cafe", "versionIdentifiers": ["1"],
                           "entities": [entity]}, "objects": objects}, open(sys.argv[1], "w"))
      """#
    let made = try Subprocess.python(script, [json])
    #expect(made.status == 0, "\(made.stderr)")
    let store = path("Cafe.sqlite")
    let imported = try BuiltTool.run(["import", json, "--to", store])
    #expect(imported.status == 0, "\(imported.stderr)")
    let exported = try export(store, name: "export.json")
    let text = try String(contentsOfFile: exported, encoding: .utf8)
    // The first, 1e-07, 100.0, the emoji, -0.0, {}, [] and [[[]]]; the rest stay base64.
    #expect(text.components(separatedBy: #""json":"#).count - 1 == 8, "\(text)")
    #expect(text.contains(#""x\n\"q\"""#), "\(text)")
    for format in ["1", "2", "3", "4"] {
      let archive = try backup(store, ["--format-version", format], name: "f\(format).gvault")
      try expectSame(archive, as: exported, "binary JSON, format \(format)")
    }
    // What export shows imports back to the very bytes.
    let copy = path("Copy.sqlite")
    let again = try BuiltTool.run(["import", exported, "--to", copy])
    #expect(again.status == 0, "\(again.stderr)")
    let query = "SELECT Z_PK, hex(ZDRINKS) FROM ZORDER ORDER BY Z_PK"
    #expect(try sqlRows(copy, query) == sqlRows(store, query))
  }

  /// A store of a model with ordered one-to-many and many-to-many relationships, in parents and
  /// sub-entities, whose order keys are then shuffled, with ties, missing and non-integer keys.
  func orderedStore() throws -> String {
    let json = path("ordered.json")
    let script = """
      import json, sys
      def attr(n, t): return {"name": n, "type": t, "optional": True}
      def rel(n, d, inv, most, ordered=False):
          r = {"name": n, "destination": d, "inverse": inv, "minCount": 0, "maxCount": most,
               "deleteRule": "Nullify", "optional": True}
          if ordered: r["ordered"] = True
          return r
      entities = [
          {"name": "Corner", "parent": "Shelf", "attributes": [attr("angle", "Double")], "relationships": []},
          {"name": "Item", "attributes": [attr("name", "String")],
           "relationships": [rel("lists", "List", "items", 0, True), rel("shelf", "Shelf", "items", 1)]},
          {"name": "List", "attributes": [attr("name", "String")],
           "relationships": [rel("items", "Item", "lists", 0, True)]},
          {"name": "Shelf", "attributes": [attr("name", "String")],
           "relationships": [rel("items", "Item", "shelf", 0, True)]},
          {"name": "Special", "parent": "Item", "attributes": [attr("extra", "Integer 32")], "relationships": []},
      ]
      shelves = [{"class": c, "pk": i + 1, "name": "shelf %d" % i} for i, c in enumerate(["Shelf", "Shelf", "Corner", "Corner"])]
      items = [{"class": "Special" if i % 3 == 0 else "Item", "pk": i + 1, "name": "item %d" % i} for i in range(30)]
      for i, shelf in enumerate(shelves):
          shelf["items"] = [{"class": items[j]["class"], "pk": j + 1} for j in range(i, 30, 4)]
      lists = [{"class": "List", "pk": k + 1, "name": "list %d" % k,
                "items": [{"class": items[j]["class"], "pk": j + 1} for j in range(k, 30, 2)]} for k in range(3)]
      json.dump({"model": {"format": 1, "name": "Ordered", "versionIdentifiers": ["1"], "entities": entities},
                 "objects": shelves + items + lists}, open(sys.argv[1], "w"))
      """
    #expect(try Subprocess.python(script, [json]).status == 0)
    let store = path("Ordered.sqlite")
    let imported = try BuiltTool.run(["import", json, "--to", store])
    #expect(imported.status == 0, "\(imported.stderr)")
    let shuffle = try Subprocess.python(
      """
      import sqlite3, sys
      db = sqlite3.connect(sys.argv[1])
      db.execute("UPDATE ZITEM SET Z_FOK_SHELF = CASE WHEN Z_PK % 5 = 0 THEN NULL WHEN Z_PK % 7 = 0 THEN 2.5 ELSE (Z_PK * 7) % 13 END")
      join = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
              if r[0].startswith("Z_") and r[0].endswith("LISTS")][0]
      cols = [c[1] for c in db.execute("PRAGMA table_info(%s)" % join)]
      order = [c for c in cols if c.startswith("Z_FOK_")][0]
      item, lst = cols[0], cols[1]
      db.execute(
          "UPDATE %s SET %s = CASE WHEN %s %% 6 = 0 THEN NULL WHEN %s %% 3 = 1 THEN 100 - %s "
          "ELSE (%s * 5 + %s) %% 11 END" % (join, order, item, item, lst, item, lst))
      db.commit()
      """, [store])
    #expect(shuffle.status == 0, "\(shuffle.stderr)")
    return store
  }

  @Test(
    "shuffled order keys, one-to-many and many-to-many, in parents and sub-entities, read in export's order"
  )
  func orderedRelationships() throws {
    let store = try orderedStore()
    let exported = try export(store, name: "export.json")
    // The order is not the keys' order: a reader that ignored it would be caught.
    let check = try Subprocess.python(
      """
      import json, sys
      out = []
      for o in json.load(open(sys.argv[1]))["objects"]:
          for key in ("items", "lists"):
              keys = [r["pk"] for r in o.get(key, [])]
              if len(keys) > 1 and keys != sorted(keys): out.append(o["class"])
      print(sorted(set(out)))
      """, [exported])
    #expect(check.stdout == "['Corner', 'Item', 'List', 'Shelf', 'Special']\n", "\(check.stdout)")
    for format in ["1", "2", "3", "4"] {
      let archive = try backup(store, ["--format-version", format], name: "f\(format).gvault")
      try expectSame(archive, as: exported, "ordered, format \(format)")
    }
  }

  @Test(
    "values of another storage class than their type's are left out by both, as export leaves them out"
  )
  func valuesOfTheWrongStorageClass() throws {
    let store = path("Library.sqlite")
    #expect(try BuiltTool.run(["sample", store, "--objects", "600", "-q"]).status == 0)
    let damage = try Subprocess.python(
      """
      import sqlite3, sys
      db = sqlite3.connect(sys.argv[1])
      db.execute("UPDATE ZBOOK SET ZINPRINT = 2 WHERE Z_PK % 4 = 0")
      db.execute("UPDATE ZBOOK SET ZTITLE = X'2A00' WHERE Z_PK % 5 = 0")
      db.execute("UPDATE ZBOOK SET ZEDITION = 'third' WHERE Z_PK % 6 = 0")
      db.execute("UPDATE ZBOOK SET ZUNIQUEID = 'id ' || Z_PK WHERE Z_PK % 7 = 0")
      db.execute("UPDATE ZPAGE SET ZNUMBER = 7.5 WHERE Z_PK % 3 = 0")
      db.execute("UPDATE ZWRITER SET ZCOLOR = 'red' WHERE Z_PK % 2 = 0")
      db.commit()
      """, [store])
    #expect(damage.status == 0, "\(damage.stderr)")
    let exported = try export(store, name: "export.json")
    // Export leaves those values out (they travel in the archive's @columns). A TEXT column turns
    // an integer into text, so the wrong title is a blob.
    let left = try Subprocess.python(
      """
      import json, sys
      books = [o for o in json.load(open(sys.argv[1]))["objects"] if o["class"] == "Book"]
      print(all("inPrint" not in o for o in books if o["pk"] % 4 == 0),
            all("title" not in o for o in books if o["pk"] % 5 == 0),
            any("inPrint" in o for o in books))
      """, [exported])
    #expect(left.stdout == "True True True\n", "\(left.stdout)\(left.stderr)")
    for format in ["1", "2", "3", "4"] {
      let archive = try backup(store, ["--format-version", format], name: "f\(format).gvault")
      try expectSame(archive, as: exported, "wrong classes, format \(format)")
    }
  }

  /// The reader with `original` replaced by `mutant` (which must occur `count` times).
  func mutant(_ name: String, _ original: String, _ mutant: String, count: Int = 1) throws
    -> String
  {
    let source = try String(contentsOfFile: Self.reader, encoding: .utf8)
    #expect(
      source.components(separatedBy: original).count - 1 == count,
      "the reader no longer has the code the \(name) mutant changes")
    let path = self.path("gvread-\(name).py")
    try source.replacingOccurrences(of: original, with: mutant).write(
      toFile: path, atomically: false, encoding: .utf8)
    return path
  }

  /// Expects each of `readers` to fail on `archive`, or to dump it other than `exported`.
  func expectCaught(_ readers: [String], reading archive: String, as exported: String) throws {
    for reader in readers {
      let dumped = path(URL(fileURLWithPath: reader).lastPathComponent + ".json")
      let dump = try Subprocess.run(Self.python, [reader, "dump", archive, "--output", dumped])
      let comparison =
        dump.status == 0
        ? try Subprocess.run(Self.python, ["-c", Self.compare, dumped, exported]).status : 1
      #expect(comparison != 0, "\(reader) passed the comparison")
    }
  }

  @Test(
    "readers that ignore order, restart a list column's running difference per list, or skip the index check fail"
  )
  func wrongReadersFail() throws {
    let store = try orderedStore()
    let exported = try export(store, name: "export.json")
    let archive = try backup(store, ["--format-version", "2"], name: "ordered.gvault")
    let readers = [
      try mutant("ignoring-order", #"if relationship.get("ordered"):"#, "if False:", count: 2),
      try mutant(
        "restarting-lists",
        #"""
                flat = list(deltas(values))
                out, at = [], 0
                for size in varints(column.get("lengths", b"")):
                    out.append(flat[at:at + size])
                    at += size
        """#,
        #"""
                codes, flat = list(varints(values)), []
                out, at = [], 0
                for size in varints(column.get("lengths", b"")):
                    previous, items = 0, []
                    for u in codes[at:at + size]:
                        previous += (u >> 1) ^ -(u & 1)
                        items.append(previous)
                    flat += items
                    out.append(items)
                    at += size
        """#),
    ]
    try expectCaught(readers, reading: archive, as: exported)
    // A member changed but still readable: export refuses it, so must a reader; one that
    // skips the index check does not.
    var forger = try ArchiveForger(reading: archive)
    try forger.edit("objects/Item/000001.plist") { chunk in
      try ArchiveForger.editStrings(in: &chunk, key: "name") { $0[0] = "item X" }
    }
    let damaged = path("damaged.gvault")
    try forger.write(to: damaged, fixingIndex: false)
    #expect(try BuiltTool.run(["export", damaged, "--output", path("d.json")]).status == 65)
    #expect(try Subprocess.run(Self.python, [Self.reader, "dump", damaged]).status == 1)
    let skipping = try mutant(
      "skipping-the-index", "def __init__(self, path, password=None, check_index=True):",
      "def __init__(self, path, password=None, check_index=False):")
    #expect(try Subprocess.run(Self.python, [skipping, "dump", damaged]).status == 0)
  }

  @Test("readers that ignore numbered words or number them from the wrong end fail (format 4)")
  func wrongWordReadersFail() throws {
    let store = path("text.sqlite")
    #expect(
      try BuiltTool.run(["sample", store, "--objects", "1500", "--workload", "text", "-q"]).status
        == 0)
    let exported = try export(store, name: "export.json")
    let archive = try backup(store, [], name: "words.gvault")
    let readers = [
      try mutant("ignoring-words", #"    if "words" in column:"#, "    if False:"),
      try mutant(
        "reversed-words", "    numbers = varints(coded)",
        "    words.reverse()\n    numbers = varints(coded)"),
    ]
    try expectCaught(readers, reading: archive, as: exported)
    let dumped = path("words.json")
    #expect(
      try Subprocess.run(Self.python, [Self.reader, "dump", archive, "--output", dumped]).status
        == 0)
    #expect(try Subprocess.run(Self.python, ["-c", Self.compare, dumped, exported]).status == 0)
  }
}
