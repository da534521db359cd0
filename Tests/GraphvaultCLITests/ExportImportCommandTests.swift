import Foundation
import TestSupport
import Testing

/// `graphvault export` and `graphvault import` on the built binary: round trips through JSON for
/// every fixture store, the JSON read by Python, hand-written files, and bad input.
@Suite(
  "graphvault export and import",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (json, sqlite3)"))
struct ExportImportCommandTests {
  let workspace: TemporaryDirectory

  init() throws {
    workspace = try TemporaryDirectory()
  }

  func run(_ arguments: [String], input: [UInt8] = []) throws -> ProcessResult {
    try BuiltTool.run(arguments, input: input)
  }

  /// The rows of every table of `store` the model keeps (bookkeeping aside), `Z_OPT` left out,
  /// as sorted text: what an import must reproduce.
  func modelRows(_ store: String) throws -> String {
    let script = """
      import sqlite3, sys
      db = sqlite3.connect(sys.argv[1])
      skip = {"Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE", "ACHANGE", "ATRANSACTION", "ATRANSACTIONSTRING"}
      for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name"):
          if name in skip or name.startswith("sqlite_"): continue
          cols = sorted(c[1] for c in db.execute(f"PRAGMA table_info({name})") if c[1] != "Z_OPT")
          rows = sorted(repr(r) for r in db.execute(f"SELECT {', '.join(cols)} FROM {name}"))
          print(name, cols, len(rows))
          for r in rows: print(" ", r)
      """
    let result = try Subprocess.python(script, [store])
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout
  }

  @Test(
    "export, import and export again give the same JSON and the same rows",
    .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote),
    arguments: FixtureStore.all)
  func roundTripThroughJSON(fixture: FixtureStore) throws {
    let store = try SharedFixtures.copyStore(fixture.store, into: workspace.url).path
    let model = fixture.modelSet.map { ["--model", SharedFixtures.file($0).path] } ?? []
    let first = workspace.path("first.json").path
    let exported = try run(["export", store, "--output", first, "-q"] + model)
    #expect(exported.status == 0, "\(exported.stderr)")
    let imported = workspace.path("imported.sqlite").path
    let load = try run(["import", first, "--to", imported, "-q"])
    #expect(load.status == 0, "\(load.stderr)")
    let second = try run(["export", imported] + model)
    #expect(second.status == 0, "\(second.stderr)")
    #expect(second.stdoutBytes == Array(try Data(contentsOf: URL(fileURLWithPath: first))))
    #expect(try modelRows(imported) == modelRows(store))
    // Persistent history is not objects: the imported store has none of its tables.
    let tables = try Subprocess.python(
      "import sqlite3,sys\nprint(sorted(r[0] for r in sqlite3.connect(sys.argv[1]).execute(\"SELECT name FROM sqlite_master WHERE type='table'\")))",
      [imported])
    #expect(!tables.stdout.contains("ATRANSACTION"))
    // JSON Lines carry the same objects.
    let lines = try run(["export", imported, "--format", "jsonl"] + model)
    let fromLines = workspace.path("lines.sqlite").path
    let loadLines = try run(["import", "-", "--to", fromLines, "-q"], input: lines.stdoutBytes)
    #expect(loadLines.status == 0, "\(loadLines.stderr)")
    #expect(try run(["export", fromLines] + model).stdoutBytes == second.stdoutBytes)
  }

  @Test func pythonReadsClassTaggedDictionariesWhoseReferencesAllResolve() throws {
    let store = workspace.path("Library.sqlite").path
    #expect(try run(["sample", store, "--objects", "300", "-q"]).status == 0)
    let exported = try run(["export", store])
    #expect(exported.status == 0, "\(exported.stderr)")
    let script = """
      import json, sys, sqlite3, base64, uuid, datetime
      doc = json.load(sys.stdin)
      objs = doc["objects"]
      keys = {(o["class"], o["pk"]) for o in objs}
      classes = {e["name"]: e.get("parent") for e in doc["model"]["entities"]}
      def lineage(c):
          while c: yield c; c = classes.get(c)
      refs = 0
      for o in objs:
          assert list(o)[:2] == ["class", "pk"], list(o)
          assert list(o)[2:] == sorted(list(o)[2:]), list(o)
          for k, v in o.items():
              for r in (v if isinstance(v, list) else [v]):
                  if isinstance(r, dict) and "pk" in r:
                      assert (r["class"], r["pk"]) in keys, r
                      refs += 1
      db = sqlite3.connect(sys.argv[1])
      books = {o["pk"]: o for o in objs if "Book" in lineage(o["class"])}
      ref = datetime.datetime(2001, 1, 1, tzinfo=datetime.timezone.utc)
      for pk, title, price, when, uid, cover in db.execute("SELECT Z_PK, ZTITLE, ZPRICE, ZPUBLISHEDAT, ZUNIQUEID, ZCOVER FROM ZBOOK"):
          b = books[pk]
          assert b["title"] == title
          if when is not None:
              t = datetime.datetime.fromisoformat(b["publishedAt"].replace("Z", "+00:00"))
              assert abs((t - ref).total_seconds() - when) < 1e-6, (b["publishedAt"], when)
          if uid is not None: assert uuid.UUID(b["uniqueID"]).bytes == uid
          if cover is not None: assert base64.b64decode(b["cover"]["base64"]) == cover
          assert float(b["price"]) == float(price)
      print(len(objs), refs)
      """
    let checked = try Subprocess.python(script, [store], input: exported.stdoutBytes)
    #expect(checked.status == 0, "\(checked.stderr)")
    let counts = checked.stdout.split(separator: " ").compactMap {
      Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    #expect(counts.count == 2 && counts[0] >= 300 && counts[1] >= 300, "\(checked.stdout)")
    // The same store gives the same bytes, whatever its file is called.
    let renamed = workspace.path("Other.sqlite").path
    try FileManager.default.copyItem(atPath: store, toPath: renamed)
    #expect(try run(["export", renamed]).stdoutBytes == exported.stdoutBytes)
  }

  @Test func anArchiveExportsAsItsStoreAndEntitiesCanBeChosen() throws {
    let store = workspace.path("Library.sqlite").path
    #expect(try run(["sample", store, "--objects", "200", "-q"]).status == 0)
    let archive = workspace.path("library.gvault").path
    #expect(try run(["backup", store, "--output", archive, "-q"]).status == 0)
    let fromStore = try run(["export", store, "--entity", "Writer", "--entity", "Tag"])
    let fromArchive = try run(["export", archive, "--entity", "Writer", "--entity", "Tag"])
    #expect(fromStore.status == 0, "\(fromStore.stderr)")
    #expect(fromArchive.stdoutBytes == fromStore.stdoutBytes)
    let classes = try Subprocess.python(
      "import json,sys\nprint(sorted({o['class'] for o in json.load(sys.stdin)['objects']}))",
      input: fromStore.stdoutBytes)
    #expect(classes.stdout == "['Author', 'Tag']\n")
    let unknown = try run(["export", store, "--entity", "Publisher"])
    #expect(unknown.status == 64)
    #expect(unknown.stderr.contains("--entity Publisher: the model has no such entity"))
    // The file appears whole and private.
    let file = workspace.path("out.json").path
    #expect(try run(["export", store, "--output", file, "-q"]).status == 0)
    let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
    #expect(mode == 0o600)
  }

  /// A model-carrying header for hand-written objects: the sample model, exported.
  func header() throws -> String {
    let store = workspace.path("Model.sqlite").path
    #expect(try run(["sample", store, "--objects", "10", "-q"]).status == 0)
    let text = try run(["export", store]).stdout
    let end = try #require(text.range(of: "\"objects\": [")).lowerBound
    return String(text[..<end]) + "\"objects\": [\n"
  }

  @Test func handWrittenObjectsMayLeaveOutKeysAndReferByNaturalKeys() throws {
    let file = workspace.path("hand.json").path
    try
      (header() + """
          {"class": "Book", "title": "Emma", "author": {"class": "Author", "alias": "austen"},
           "pages": [{"class": "Page", "pk": 3}, {"class": "Page", "pk": 1}]},
          {"class": "Author", "alias": "austen", "age": 41},
          {"class": "Page", "pk": 1, "number": 1},
          {"class": "Page", "pk": 3, "number": 3},
          {"class": "Book", "pk": 2, "title": "Persuasion", "author": {"class": "Writer", "alias": "austen"}}
        ]}
        """).write(toFile: file, atomically: false, encoding: .utf8)
    let store = workspace.path("hand.sqlite").path
    let result = try run(["import", file, "--to", store, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.contains("\"Book\" : 2"))
    let rows = try Subprocess.python(
      """
      import sqlite3, sys
      db = sqlite3.connect(sys.argv[1])
      print(list(db.execute("SELECT b.Z_PK, b.ZTITLE, a.ZALIAS FROM ZBOOK b JOIN ZWRITER a ON b.ZAUTHOR = a.Z_PK ORDER BY b.Z_PK")))
      print(list(db.execute("SELECT Z_PK, ZBOOK FROM ZPAGE ORDER BY Z_FOK_BOOK")))
      """, [store])
    // The given key 2 is kept; the book without one gets the next key after it.
    #expect(
      rows.stdout == "[(2, 'Persuasion', 'austen'), (3, 'Emma', 'austen')]\n[(3, 3), (1, 3)]\n")
  }

  @Test(arguments: [
    (
      #"{"class": "Publisher", "name": "x"}"#, "object 2 (line ",
      "class: the model has no entity Publisher"
    ),
    (
      #"{"class": "Tag", "label": "x"}"#, "object 2 (line ",
      "label: Tag has no attribute or relationship label"
    ),
    (
      #"{"class": "Book", "title": 7}"#, "object 2 (line ",
      "title: String expects a string, found an integer"
    ),
    (
      #"{"class": "Book", "title": "T", "publishedAt": "last year"}"#, "object 2 (line ",
      #"publishedAt: "last year" is not an ISO 8601 time"#
    ),
    (
      #"{"class": "Book", "title": "T", "author": {"class": "Author", "alias": "nobody"}}"#,
      "object 2 (line ", #"no Author(alias: "nobody") (Book.author)"#
    ),
    (
      #"{"class": "Book", "title": "T", "author": {"class": "Tag", "pk": 1}}"#, "object 2 (line ",
      "author: a Tag cannot be a Writer"
    ),
    (
      #"{"class": "Book", "title": "T", "tags": {"class": "Tag", "pk": 1}}"#, "object 2 (line ",
      "tags: expected an array of references, found an object"
    ),
    (#"{"class": "Writer", "alias": "x"}"#, "object 2 (line ", "entity Writer is abstract"),
    (
      #"{"class": "Tag", "pk": 1, "name": "again"}"#, "object 2 (line ",
      "primary key 1 of Tag's hierarchy is already used"
    ),
    (#"{"class": "Book"}"#, "object 2 (line ", "the objects do not make a valid store"),
    (#"{"class": "Tag", "name": "x",}"#, "line ", "expected a member name in double quotes"),
  ])
  func badObjectsAreRefusedWithTheirPlaceAndKey(object: String, place: String, message: String)
    throws
  {
    let file = workspace.path("bad.json").path
    try (header() + "{\"class\": \"Tag\", \"pk\": 1, \"name\": \"first\"},\n" + object + "\n]}")
      .write(toFile: file, atomically: false, encoding: .utf8)
    let store = workspace.path("bad.sqlite").path
    let result = try run(["import", file, "--to", store])
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stderr.contains(place), "\(result.stderr)")
    #expect(result.stderr.contains(message), "\(result.stderr)")
    #expect(result.stderr.contains(file), "\(result.stderr)")
    // Nothing under the store's name, nothing left beside it.
    #expect(!FileManager.default.fileExists(atPath: store))
    let left = try FileManager.default.contentsOfDirectory(atPath: workspace.url.path)
    #expect(!left.contains { $0.hasPrefix(".bad.sqlite.tmp") }, "\(left)")
  }

  @Test func importNeedsAModelAndRefusesAnExistingStoreWithoutForce() throws {
    let bare = workspace.path("bare.json").path
    try #"[{"class": "Tag", "name": "x"}]"#.write(toFile: bare, atomically: false, encoding: .utf8)
    let store = workspace.path("tags.sqlite").path
    let noModel = try run(["import", bare, "--to", store])
    #expect(noModel.status == 78, "\(noModel.stderr)")
    #expect(noModel.stderr.contains("the file carries no model"))
    let file = workspace.path("one.json").path
    try (header() + #"{"class": "Tag", "name": "x"}]}"#).write(
      toFile: file, atomically: false, encoding: .utf8)
    #expect(try run(["import", file, "--to", store, "-q"]).status == 0)
    let again = try run(["import", file, "--to", store])
    #expect(again.status == 73, "\(again.stderr)")
    #expect(try run(["import", file, "--to", store, "--force", "-q"]).status == 0)
    let missing = try run(["import", workspace.path("nothing.json").path, "--to", store])
    #expect(missing.status == 66)
  }
}

/// What an outside reader of the format found wrong with `export`.
@Suite(
  "export of ordered relationships and of archives without a model cache",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (json, sqlite3)"))
struct ExportOrderAndModelTests {
  @Test(
    "a sub-entity's inherited ordered to-many comes out in its order keys' order, from a store and from its archive"
  )
  func inheritedOrderedRelationshipsKeepTheirOrder() throws {
    let workspace = try TemporaryDirectory()
    let store = workspace.path("Library.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "300", "-q"]).status == 0)
    // Every object's pages in the reverse of their primary keys' order, graphic novels included.
    let shuffle = try Subprocess.python(
      """
      import sqlite3, sys
      db = sqlite3.connect(sys.argv[1])
      db.execute("UPDATE ZPAGE SET Z_FOK_BOOK = 1000000 - Z_PK")
      db.commit()
      """, [store])
    #expect(shuffle.status == 0, "\(shuffle.stderr)")
    let archive = workspace.path("library.gvault").path
    #expect(try BuiltTool.run(["backup", store, "--output", archive, "-q"]).status == 0)
    for source in [store, archive] {
      let exported = try BuiltTool.run(["export", source])
      #expect(exported.status == 0, "\(exported.stderr)")
      let check = try Subprocess.python(
        """
        import json, sys
        objects = json.load(sys.stdin)["objects"]
        seen = {}
        for o in objects:
            pages = [p["pk"] for p in o.get("pages", [])]
            if len(pages) > 1:
                seen[o["class"]] = seen.get(o["class"], 0) + 1
                assert pages == sorted(pages, reverse=True), (o["class"], o["pk"], pages)
        print(sorted(seen))
        """, input: exported.stdoutBytes)
      #expect(check.status == 0, "\(source): \(check.stderr)")
      #expect(check.stdout == "['Book', 'GraphicNovel']\n", "\(source): \(check.stdout)")
    }
  }

  @Test(
    "an archive of a store without a model cache exports with the model it carries",
    .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func anArchiveCarriesTheModelExportNeeds() throws {
    let workspace = try TemporaryDirectory()
    let store = try SharedFixtures.copyStore(
      "BookMigration/Stores/Model1.sqlite", into: workspace.url)
    let model = SharedFixtures.file("BookMigration/Model.xcdatamodeld").path
    let archive = workspace.path("model1.gvault").path
    let backup = try BuiltTool.run(["backup", store.path, "--model", model, "--output", archive])
    #expect(backup.status == 0, "\(backup.stderr)")
    let fromArchive = try BuiltTool.run(["export", archive])
    #expect(fromArchive.status == 0, "\(fromArchive.stderr)")
    let fromStore = try BuiltTool.run(["export", store.path, "--model", model])
    let objects = try Subprocess.python(
      "import json,sys\na,b=sys.stdin.read().split('\\x00')\nprint(json.loads(a)['objects']==json.loads(b)['objects'], len(json.loads(a)['objects']))",
      input: fromArchive.stdoutBytes + [0] + fromStore.stdoutBytes)
    #expect(objects.stdout == "True 7\n", "\(objects.stdout)\(objects.stderr)")
  }
}
