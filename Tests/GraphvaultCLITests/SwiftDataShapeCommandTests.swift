import Foundation
import TestSupport
import Testing

/// The built binary on a store shaped as SwiftData writes them: a composite attribute (a
/// Codable struct: elements flattened into columns, one clashing with the entity's own `id`,
/// one a nested composite), a to-many relationship without an inverse (kept as `Z1SPEC` in the
/// destination's table) and a to-one without one. The model is an `.xcdatamodel` as Xcode 15
/// writes composites; the store is made by `create` and filled with SQL (Python's `sqlite3`),
/// and every check reads the store back with Python's `sqlite3`, not with graphvault.
@Suite(
  "SwiftData-shaped stores",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct SwiftDataShapeCommandTests {
  let workspace: TemporaryDirectory
  let store: String
  let archive: String

  static let model = """
    <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
    <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="1.0.0">
        <entity name="Cocktail" representedClassName="Cocktail" syncable="YES">
            <attribute name="id" optional="YES" attributeType="String"/>
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="author" optional="YES" attributeType="Composite" composite="Author"/>
            <relationship name="spec" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Ingredient"/>
            <relationship name="garnish" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Ingredient"/>
        </entity>
        <entity name="Ingredient" representedClassName="Ingredient" syncable="YES">
            <attribute name="name" optional="YES" attributeType="String"/>
            <attribute name="amount" optional="YES" attributeType="Double"/>
        </entity>
        <composite name="Author">
            <attribute name="id" optional="YES" attributeType="String"/>
            <attribute name="person" optional="YES" attributeType="String"/>
            <attribute name="year" optional="YES" attributeType="Integer 64"/>
            <attribute name="origin" optional="YES" attributeType="Composite" composite="Place"/>
        </composite>
        <composite name="Place">
            <attribute name="city" optional="YES" attributeType="String"/>
            <attribute name="country" optional="YES" attributeType="String"/>
        </composite>
    </model>
    """

  /// The columns of the two tables, as Python's sqlite3 lists them, in a fixed order.
  static let cocktailColumns =
    "Z_PK, Z_ENT, Z_OPT, ZID, ZNAME, ZGARNISH, ZID1, ZPERSON, ZYEAR, ZCITY, ZCOUNTRY"
  static let ingredientColumns = "Z_PK, Z_ENT, Z_OPT, ZNAME, ZAMOUNT, Z1SPEC"

  init() throws {
    workspace = try TemporaryDirectory()
    let folder = workspace.path("Bar.xcdatamodel")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Self.model.write(
      to: folder.appendingPathComponent("contents"), atomically: false, encoding: .utf8)
    store = workspace.path("Bar.sqlite").path
    archive = workspace.path("before.gvault").path
    let created = try BuiltTool.run(["create", store, "--model", folder.path, "-q"])
    #expect(created.status == 0, "\(created.stderr)")
    try sqlScript(
      store,
      """
      INSERT INTO ZINGREDIENT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZAMOUNT, Z1SPEC) VALUES
        (1, 2, 1, 'gin', 2.0, 1), (2, 2, 1, 'vermouth', 1.0, 1), (3, 2, 1, 'olive', NULL, NULL),
        (4, 2, 1, 'lime', 0.5, 2), (5, 2, 1, 'bitters', 0.1, 1);
      INSERT INTO ZCOCKTAIL (Z_PK, Z_ENT, Z_OPT, ZID, ZNAME, ZGARNISH, ZID1, ZPERSON, ZYEAR, ZCITY, ZCOUNTRY) VALUES
        (1, 1, 1, 'c-1', 'Martini', 3, 'a-9', 'Harry', 1922, 'Paris', NULL),
        (2, 1, 1, 'c-2', 'Gimlet', NULL, NULL, NULL, NULL, NULL, NULL),
        (3, 1, 1, 'c-3', 'Sour', NULL, NULL, 'Jerry', NULL, NULL, 'US');
      UPDATE Z_PRIMARYKEY SET Z_MAX = 5 WHERE Z_NAME = 'Ingredient';
      UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_NAME = 'Cocktail';
      """)
    let backup = try BuiltTool.run(["backup", store, "--output", archive, "-q"])
    #expect(backup.status == 0, "\(backup.stderr)")
  }

  @Test func createGivesEachElementItsColumnAndTheInverseLessToManyAColumnInItsDestination()
    throws
  {
    #expect(
      try sqlRows(store, "SELECT name FROM pragma_table_info('ZCOCKTAIL') ORDER BY name")
        == [
          "ZCITY", "ZCOUNTRY", "ZGARNISH", "ZID", "ZID1", "ZNAME", "ZPERSON", "ZYEAR", "Z_ENT",
          "Z_OPT", "Z_PK",
        ])
    #expect(
      try sqlRows(store, "SELECT name FROM pragma_table_info('ZINGREDIENT') ORDER BY name")
        == ["Z1SPEC", "ZAMOUNT", "ZNAME", "Z_ENT", "Z_OPT", "Z_PK"])
    #expect(
      try sqlRows(store, "SELECT name FROM sqlite_master WHERE name = 'ZINGREDIENT_Z1SPEC_INDEX'")
        == ["ZINGREDIENT_Z1SPEC_INDEX"])
  }

  @Test func exportShowsEveryStoredValueOfEveryColumn() throws {
    for source in [store, archive] {
      let export = try BuiltTool.run(["export", source, "--format", "jsonl"])
      #expect(export.status == 0, "\(export.stderr)")
      let lines = export.stdout.split(separator: "\n").dropFirst()
      let objects = try lines.map {
        try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
      }
      // Column by column, against what SQL reads.
      for row in try sqlRows(store, "SELECT \(Self.cocktailColumns) FROM ZCOCKTAIL") {
        let fields = row.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        let object = try #require(
          objects.first {
            $0["class"] as? String == "Cocktail" && $0["pk"] as? Int == Int(fields[0])
          })
        let author = object["author"] as? [String: Any]
        let origin = author?["origin"] as? [String: Any]
        func text(_ value: Any?) -> String { value.map { "\($0)" } ?? "None" }
        #expect(text(object["id"]) == fields[3])
        #expect(text(object["name"]) == fields[4])
        #expect(text((object["garnish"] as? [String: Any])?["pk"]) == fields[5])
        #expect(text(author?["id"]) == fields[6])
        #expect(text(author?["person"]) == fields[7])
        #expect(text(author?["year"]) == fields[8])
        #expect(text(origin?["city"]) == fields[9])
        #expect(text(origin?["country"]) == fields[10])
        // A composite none of whose elements has a value is absent, as in the store.
        #expect((author == nil) == fields[6...10].allSatisfy { $0 == "None" })
        // The inverse-less to-many: the ingredients whose Z1SPEC holds this cocktail's key.
        let spec = (object["spec"] as? [[String: Any]] ?? []).compactMap { $0["pk"] as? Int }
        #expect(
          spec.map(String.init)
            == (try sqlRows(
              store, "SELECT Z_PK FROM ZINGREDIENT WHERE Z1SPEC = \(fields[0]) ORDER BY Z_PK")))
      }
    }
  }

  @Test func restoreGivesBackTheStoreRowForRow() throws {
    let restored = workspace.path("Restored.sqlite").path
    let result = try BuiltTool.run(["restore", archive, "--to", restored, "-q"])
    #expect(result.status == 0, "\(result.stderr)")
    for table in ["ZCOCKTAIL", "ZINGREDIENT"] {
      #expect(
        try sqlRows(restored, "SELECT * FROM \(table) ORDER BY Z_PK")
          == (try sqlRows(store, "SELECT * FROM \(table) ORDER BY Z_PK")))
    }
  }

  @Test func aDeletedObjectMergedBackHasEveryColumnAsTheBackupHad() throws {
    let before = try sqlRows(store, "SELECT \(Self.cocktailColumns) FROM ZCOCKTAIL ORDER BY Z_PK")
    let ingredientsBefore = try sqlRows(
      store, "SELECT \(Self.ingredientColumns) FROM ZINGREDIENT ORDER BY Z_PK")
    // The app deletes the Martini; its spec cascades, its garnish stays.
    try sqlScript(
      store,
      "DELETE FROM ZINGREDIENT WHERE Z1SPEC = 1; DELETE FROM ZCOCKTAIL WHERE Z_PK = 1;")
    let selection = [
      "--entity", "Cocktail", "--where",
      "author.person == 'Harry' AND author.origin.city BEGINSWITH 'Par'",
      "--include", "spec",
    ]
    let dryRun = try BuiltTool.run(["merge", archive, "--into", store, "--dry-run"] + selection)
    #expect(dryRun.status == 0, "\(dryRun.stderr)")
    #expect(dryRun.stdout.contains("Cocktail: 1 to insert"), "\(dryRun.stdout)")
    let merged = try BuiltTool.run(["merge", archive, "--into", store] + selection)
    #expect(merged.status == 0, "\(merged.stderr)")
    #expect(
      !merged.stderr.contains("graphvault-"), "a message names a private file: \(merged.stderr)")
    #expect(
      try sqlRows(store, "SELECT \(Self.cocktailColumns) FROM ZCOCKTAIL ORDER BY Z_PK") == before)
    #expect(
      try sqlRows(store, "SELECT \(Self.ingredientColumns) FROM ZINGREDIENT ORDER BY Z_PK")
        == ingredientsBefore)
    #expect(try sqlRows(store, "PRAGMA integrity_check") == ["ok"])
  }

  @Test func diffNamesTheElementThatChanged() throws {
    let other = workspace.path("Changed.sqlite").path
    try FileManager.default.copyItem(atPath: store, toPath: other)
    try sqlScript(other, "UPDATE ZCOCKTAIL SET ZPERSON = 'Harry M.', Z_OPT = 2 WHERE Z_PK = 1")
    let diff = try BuiltTool.run(["diff", store, other])
    #expect(diff.status == 1, "\(diff.stderr)")
    #expect(diff.stdout.contains("author.person: \"Harry\" -> \"Harry M.\""), "\(diff.stdout)")
  }

  @Test func aFixtureSelectsAndScrubsByElementKeyPath() throws {
    let fixture = workspace.path("fixture.gvault").path
    let cut = try BuiltTool.run([
      "fixture", store, "--entity", "Cocktail", "--where", "author.year > 1900", "--scrub",
      "Cocktail.author.person=value:Anonymous", "--output", fixture, "-q",
    ])
    #expect(cut.status == 0, "\(cut.stderr)")
    let restored = workspace.path("FromFixture.sqlite").path
    let restore = try BuiltTool.run(["restore", fixture, "--to", restored, "-q"])
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(
      try sqlRows(restored, "SELECT ZNAME, ZPERSON, ZYEAR, ZCITY FROM ZCOCKTAIL")
        == ["Martini|Anonymous|1922|Paris"])
  }

  @Test(
    "both formats hold a composite as its record's dictionary; the reference reader reads what export shows",
    .enabled(if: Subprocess.isInstalled("zstd"), "needs the zstd command"))
  func bothFormatsAndTheReferenceReader() throws {
    let exported = workspace.path("export.json").path
    let export = try BuiltTool.run(["export", store, "--output", exported, "-q"])
    #expect(export.status == 0, "\(export.stderr)")
    for format in ["1", "2"] {
      let archive = workspace.path("f\(format).gvault").path
      let backup = try BuiltTool.run([
        "backup", store, "--output", archive, "--format-version", format, "-q",
      ])
      #expect(backup.status == 0, "\(backup.stderr)")
      let restored = workspace.path("f\(format).sqlite").path
      let restore = try BuiltTool.run(["restore", archive, "--to", restored, "-q"])
      #expect(restore.status == 0, "\(restore.stderr)")
      #expect(
        try sqlRows(restored, "SELECT * FROM ZCOCKTAIL ORDER BY Z_PK")
          == (try sqlRows(store, "SELECT * FROM ZCOCKTAIL ORDER BY Z_PK")))
      let dumped = archive + ".reader.json"
      let dump = try Subprocess.run(
        ReferenceReaderTests.python,
        [ReferenceReaderTests.reader, "dump", archive, "--output", dumped])
      #expect(dump.status == 0, "format \(format): \(dump.stderr)")
      let comparison = try Subprocess.run(
        ReferenceReaderTests.python, ["-c", ReferenceReaderTests.compare, dumped, exported])
      #expect(comparison.status == 0, "format \(format): \(comparison.stdout)\(comparison.stderr)")
    }
    // Format 1, read by Python's plistlib: the Martini's record holds `author` as a
    // dictionary with `origin` inside, and no key path of its own.
    let members = try TestSupport.members(of: workspace.path("f1.gvault").path)
    let chunk = try #require(members.first { $0.path.hasPrefix("objects/Cocktail/") })
    let file = workspace.path("chunk.plist").path
    try Data(chunk.bytes).write(to: URL(fileURLWithPath: file))
    let read = try Subprocess.python(
      """
      import plistlib, sys
      records = plistlib.load(open(sys.argv[1], 'rb'))
      martini = next(r for r in records if r['pk'] == 1)
      print(sorted(martini), martini['author']['origin'], martini['author']['person'])
      """, [file])
    #expect(read.status == 0, "\(read.stderr)")
    #expect(
      read.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        == "['author', 'class', 'garnish', 'id', 'name', 'opt', 'pk'] {'city': 'Paris'} Harry")
  }

  /// A model version that adds an attribute with a default: a migrating restore of a format 1
  /// archive (object by object) and of a format 2 one (by columns) write the same rows, the
  /// composite's element columns and the inverse-less to-many's owner column as the store had
  /// them, and the new attribute's default in every row.
  @Test func aMigratingRestoreKeepsCompositesAndOwnerColumnsInEitherFormat() throws {
    let set = workspace.path("Bar.xcdatamodeld")
    for (version, model) in [
      ("Bar", Self.model),
      (
        "Bar 2",
        Self.model.replacingOccurrences(of: #""1.0.0""#, with: #""2.0.0""#)
          .replacingOccurrences(
            of: #"<attribute name="author""#,
            with:
              #"<attribute name="rating" optional="YES" attributeType="Integer 32" defaultValueString="3" usesScalarValueType="YES"/><attribute name="author""#
          )
      ),
    ] {
      let folder = set.appendingPathComponent("\(version).xcdatamodel")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      try model.write(
        to: folder.appendingPathComponent("contents"), atomically: false, encoding: .utf8)
    }
    try """
    <?xml version="1.0" encoding="UTF-8"?>
    <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Bar 2.xcdatamodel</string></dict></plist>
    """.write(
      to: set.appendingPathComponent(".xccurrentversion"), atomically: false, encoding: .utf8)
    var tables: [[String]] = []
    for format in ["1", "2"] {
      let archive = workspace.path("m\(format).gvault").path
      let backup = try BuiltTool.run([
        "backup", store, "--output", archive, "--format-version", format, "-q",
      ])
      #expect(backup.status == 0, "\(backup.stderr)")
      let restored = workspace.path("m\(format).sqlite").path
      let restore = try BuiltTool.run(["restore", archive, "--to", restored, "--model", set.path])
      #expect(restore.status == 0, "\(restore.stderr)")
      tables.append(
        try sqlRows(
          restored, "SELECT \(Self.cocktailColumns), ZRATING FROM ZCOCKTAIL ORDER BY Z_PK")
          + sqlRows(restored, "SELECT \(Self.ingredientColumns) FROM ZINGREDIENT ORDER BY Z_PK"))
    }
    #expect(tables[0] == tables[1])
    let before =
      try sqlRows(store, "SELECT \(Self.cocktailColumns), 3 FROM ZCOCKTAIL ORDER BY Z_PK")
      + sqlRows(store, "SELECT \(Self.ingredientColumns) FROM ZINGREDIENT ORDER BY Z_PK")
    #expect(tables[1] == before)
  }

  @Test func anUnknownElementInAPredicateIsAUsageErrorNamingTheKeys() throws {
    let result = try BuiltTool.run([
      "fixture", store, "--entity", "Cocktail", "--where", "author.nickname == 'x'", "--output",
      workspace.path("none.gvault").path,
    ])
    #expect(result.status == 64, "\(result.stderr)")
    #expect(result.stderr.contains("author.person"), "\(result.stderr)")
  }
}
