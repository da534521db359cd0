import Foundation
import TestSupport
import Testing

/// `graphvault migrate` of a change Core Data makes in SQL (attributes and an index added, an
/// attribute dropped): done on the store file itself, in one transaction, and holding exactly
/// what the migrating restore of the same store's backup holds (every table's rows, bookkeeping
/// included, and `storediff.py` when `../shared` is there; the two reports are equal).
@Suite(
  "graphvault migrate (in SQL)",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct MigrateInSQLCommandTests {
  static let library = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Library.xcdatamodeld")

  let workspace: TemporaryDirectory
  /// The sample model's versions and a fourth one made here.
  let model: String
  let store: String
  let archive: String

  /// Writes `Library.xcdatamodeld` with a version `Library 4` whose Book is `Library 3`'s with
  /// `replacing` applied to its attribute list, current.
  static func writeModel(
    at path: String, _ edit: (String) -> String
  ) throws {
    try FileManager.default.copyItem(atPath: library.path, toPath: path)
    let third = try String(
      contentsOfFile: path + "/Library 3.xcdatamodel/contents", encoding: .utf8)
    let fourth = path + "/Library 4.xcdatamodel"
    try FileManager.default.createDirectory(atPath: fourth, withIntermediateDirectories: false)
    try edit(third).write(toFile: fourth + "/contents", atomically: false, encoding: .utf8)
    let current = try String(contentsOfFile: path + "/.xccurrentversion", encoding: .utf8)
    try current.replacingOccurrences(of: "Library 3.xcdatamodel", with: "Library 4.xcdatamodel")
      .write(toFile: path + "/.xccurrentversion", atomically: false, encoding: .utf8)
  }

  /// Writes the model set with a version whose new entity `Shelf` (a label, and a to-many to
  /// Book whose to-one inverse Book gains) comes before Tag, Writer and Author in Core Data's
  /// numbering.
  static func writeShelvedModel(at path: String) throws {
    try writeModel(at: path) {
      $0.replacingOccurrences(
        of: #"<entity name="Tag" "#,
        with: """
          <entity name="Shelf" representedClassName="Shelf" syncable="YES" codeGenerationType="class">
                  <attribute name="label" optional="YES" attributeType="String"/>
                  <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/>
              </entity>
              <entity name="Tag" 
          """
      ).replacingOccurrences(
        of: #"<relationship name="tags" "#,
        with: """
          <relationship name="shelf" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/>
                  <relationship name="tags" 
          """)
    }
  }

  static let uniqueID =
    #"<attribute name="uniqueID" optional="YES" attributeType="UUID" usesScalarValueType="NO"/>"#

  init() throws {
    workspace = try TemporaryDirectory()
    model = workspace.path("Library.xcdatamodeld").path
    store = workspace.path("Library.sqlite").path
    archive = workspace.path("before.gvault").path
    try Self.writeModel(at: model) { text in
      let weight = try? Regex(#"\s*<attribute name="weight"[^>]*/>"#)
      return text.replacingOccurrences(
        of: Self.uniqueID,
        with: Self.uniqueID + """

                  <attribute name="subtitle" optional="YES" attributeType="String"/>
                  <fetchIndex name="bySubtitle"><fetchIndexElement property="subtitle" type="Binary" order="ascending"/></fetchIndex>
                  <attribute name="printRun" optional="YES" attributeType="Integer 32" defaultValueString="1000" usesScalarValueType="YES"/>
          """
      ).replacing(weight!, with: "")
    }
    let made = try BuiltTool.run(["sample", store, "--objects", "3000", "-q"])
    #expect(made.status == 0, "\(made.stderr)")
  }

  func inode(_ path: String) throws -> UInt64 {
    try (FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? NSNumber)?
      .uint64Value ?? 0
  }

  /// The migration report of a `--json` run.
  func migration(_ json: String) throws -> NSDictionary? {
    let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
    return object?["migration"] as? NSDictionary
  }

  /// Every table's rows with their columns in name order (a column added in place comes last
  /// in its table, one made with the table in its place), sorted.
  func rowsByColumnName(_ path: String) throws -> [String] {
    var rows: [String] = []
    for table in try sqlRows(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1")
    {
      let columns = try sqlRows(path, "SELECT name FROM pragma_table_info('\(table)') ORDER BY 1")
      rows += try sqlRows(
        path,
        "SELECT '\(table)', \(columns.map { "quote(\($0))" }.joined(separator: ", ")) FROM \(table)"
      ).sorted()
    }
    return rows
  }

  /// The names of the store's indexes.
  func indexes(_ path: String) throws -> [String] {
    try sqlRows(path, "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY 1")
  }

  /// Backs the store up, restores it migrating into `model` (`--json`), then migrates the
  /// store itself into it: the store must be changed in place and hold what the restore wrote,
  /// to the row and index, with the same report.
  func expectMigratedInPlaceAsARestoreMigrates(into model: String) throws {
    let backup = try BuiltTool.run(["backup", store, "--output", archive, "-q"])
    #expect(backup.status == 0, "\(backup.stderr)")
    let restored = workspace.path("restored.sqlite").path
    let restore = try BuiltTool.run([
      "restore", archive, "--to", restored, "--model", model, "--json",
    ])
    #expect(restore.status == 0, "\(restore.stderr)")
    let before = try inode(store)
    let result = try BuiltTool.run(["migrate", store, "--model", model, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try inode(store) == before, "the store was replaced, not changed in place")
    #expect(try rowsByColumnName(store) == rowsByColumnName(restored))
    if SharedFixtures.isAvailable {
      let compared = try SharedFixtures.storediff([restored, store])
      #expect(compared.status == 0, "\(compared.stdout)\(compared.stderr)")
    }
    #expect(try sqlRows(store, "PRAGMA integrity_check") == ["ok"])
    #expect(try indexes(store) == indexes(restored))
    let migrated = try migration(result.stdout)
    #expect(migrated != nil)
    #expect(migrated == (try migration(restore.stdout)))
  }

  @Test(arguments: ["wal", "delete"])
  func aStoreMigratedInSQLHoldsWhatAMigratingRestoreWrites(journalMode: String) throws {
    _ = try sqlRows(store, "PRAGMA journal_mode = \(journalMode)")
    let original = workspace.path("original.sqlite").path
    try FileManager.default.copyItem(atPath: store, toPath: original)
    try expectMigratedInPlaceAsARestoreMigrates(into: model)
    #expect(try sqlRows(store, "PRAGMA journal_mode") == [journalMode])
    #expect(
      try sqlRows(store, "SELECT count(*) FROM ZBOOK WHERE ZPRINTRUN = 1000")
        == sqlRows(store, "SELECT count(*) FROM ZBOOK"))
    #expect(
      try sqlRows(store, "SELECT count(*) FROM pragma_table_info('ZBOOK') WHERE name = 'ZWEIGHT'")
        == ["0"])
    #expect(try indexes(store).count == indexes(original).count + 1)
  }

  /// Format 1 archives travel as records and are migrated object by object; format 2's batches
  /// go by columns where the hop allows: the same store backed up in each, restored through a
  /// hop that renames, adds and drops attributes, gives the same rows.
  @Test func aMigratingRestoreByColumnsWritesTheRowsOfOneObjectByObject() throws {
    let renamed = workspace.path("Renamed.xcdatamodeld").path
    try Self.writeModel(at: renamed) {
      $0.replacingOccurrences(
        of: #"<attribute name="sales" "#,
        with: #"<attribute name="copiesSold" elementID="sales" "#
      ).replacingOccurrences(
        of: Self.uniqueID,
        with: Self.uniqueID
          + #"<attribute name="shelfMark" optional="YES" attributeType="String" defaultValueString="A1"/>"#
      )
    }
    var stores: [String] = []
    for format in ["1", "2"] {
      let archive = workspace.path("format\(format).gvault").path
      let backup = try BuiltTool.run([
        "backup", store, "--output", archive, "--format-version", format, "-q",
      ])
      #expect(backup.status == 0, "\(backup.stderr)")
      let restored = workspace.path("format\(format).sqlite").path
      let restore = try BuiltTool.run([
        "restore", archive, "--to", restored, "--model", renamed, "-q",
      ])
      #expect(restore.status == 0, "\(restore.stderr)")
      stores.append(restored)
    }
    #expect(try rowsByColumnName(stores[0]) == rowsByColumnName(stores[1]))
    #expect(
      try sqlRows(stores[1], "SELECT count(*) FROM ZBOOK WHERE ZSHELFMARK = 'A1'")
        == sqlRows(stores[1], "SELECT count(*) FROM ZBOOK"))
    #expect(
      try sqlRows(stores[1], "SELECT ZCOPIESSOLD FROM ZBOOK ORDER BY Z_PK")
        == sqlRows(store, "SELECT ZSALES FROM ZBOOK ORDER BY Z_PK"))
  }

  @Test func anObjectWithoutAValueTheNewVersionRequiresStopsTheMigrationAndTheStoreStaysAsItWas()
    throws
  {
    let strict = workspace.path("Strict.xcdatamodeld").path
    try Self.writeModel(at: strict) {
      $0.replacingOccurrences(
        of: #"<attribute name="rating" optional="YES""#, with: #"<attribute name="rating""#
      )
      .replacingOccurrences(
        of: #"attributeType="Double" defaultValueString="0.0""#, with: #"attributeType="Double""#)
    }
    try sqlScript(store, "UPDATE ZBOOK SET ZRATING = NULL WHERE Z_PK = 7;")
    let schema = try sqlRows(store, "SELECT sql FROM sqlite_master ORDER BY name")
    let result = try BuiltTool.run(["migrate", store, "--model", strict])
    #expect(result.status == 78, "\(result.stderr)")
    #expect(result.stderr.contains("p7 has no value for Book.rating"), "\(result.stderr)")
    #expect(try sqlRows(store, "SELECT sql FROM sqlite_master ORDER BY name") == schema)
    #expect(try sqlRows(store, "PRAGMA integrity_check") == ["ok"])
  }

  /// An entity added (`Shelf`, with a to-many to Book and its to-one inverse) whose place in
  /// Core Data's numbering comes before Tag, Writer and Author: its table made, Book's new
  /// column added, and the entities after it renumbered in SQL (their rows' `Z_ENT`, Book's
  /// author entity column, renamed and rewritten, the books–tags join table and its columns
  /// renamed), holding what the migrating restore writes.
  @Test func anEntityAddedIsAddedInSQLRenumberingTheEntitiesAfterIt() throws {
    let shelved = workspace.path("Shelved.xcdatamodeld").path
    try Self.writeShelvedModel(at: shelved)
    let before = try sqlRows(store, "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT")
    #expect(before.contains("4|Tag") && before.contains("6|Author"))
    let authors = try sqlRows(store, "SELECT count(*) FROM ZBOOK WHERE Z5_AUTHOR = 6")
    try expectMigratedInPlaceAsARestoreMigrates(into: shelved)
    #expect(
      try sqlRows(store, "SELECT Z_ENT, Z_NAME FROM Z_PRIMARYKEY ORDER BY Z_ENT") == [
        "1|Book", "2|GraphicNovel", "3|Page", "4|Shelf", "5|Tag", "6|Writer", "7|Author",
      ])
    #expect(try sqlRows(store, "SELECT DISTINCT Z_ENT FROM ZTAG") == ["5"])
    #expect(try sqlRows(store, "SELECT count(*) FROM ZBOOK WHERE Z6_AUTHOR = 7") == authors)
    #expect(try sqlRows(store, "SELECT count(*) FROM ZSHELF") == ["0"])
    #expect(
      try sqlRows(store, "SELECT name FROM pragma_table_info('Z_1TAGS') ORDER BY 1") == [
        "Z_1BOOKS", "Z_5TAGS",
      ])
  }

  /// `migrate` in SQL of a change that renumbers entities (an entity added before others),
  /// killed at random moments: the store holds the old rows or the new ones, whole, and the
  /// next run finishes the job.
  @Test func aMigrationInSQLKilledAtAnyMomentLeavesTheOldStoreOrTheNewOne() throws {
    let shelved = workspace.path("Shelved.xcdatamodeld").path
    try Self.writeShelvedModel(at: shelved)
    let original = try rowsByColumnName(store)
    let reference = workspace.path("reference.sqlite").path
    try FileManager.default.copyItem(atPath: store, toPath: reference)
    let done = try BuiltTool.run(["migrate", reference, "--model", shelved, "-q"])
    #expect(done.status == 0, "\(done.stderr)")
    let migrated = try rowsByColumnName(reference)
    #expect(migrated != original)
    var outcomes: [Bool: Int] = [:]
    var generator = SystemRandomNumberGenerator()
    for round in 0..<8 {
      let copy = workspace.path("killed-\(round).sqlite").path
      try FileManager.default.copyItem(atPath: store, toPath: copy)
      let running = try BuiltTool.start(["migrate", copy, "--model", shelved, "-q"])
      usleep(UInt32.random(in: 0..<120_000, using: &generator))
      running.send(SIGKILL)
      _ = running.wait()
      let rows = try rowsByColumnName(copy)
      #expect(rows == original || rows == migrated, "round \(round)")
      outcomes[rows == original, default: 0] += 1
      #expect(try sqlRows(copy, "PRAGMA integrity_check") == ["ok"])
      let next = try BuiltTool.run(["migrate", copy, "--model", shelved, "-q"])
      #expect(next.status == 0, "\(next.stderr)")
      #expect(try rowsByColumnName(copy) == migrated, "round \(round)")
    }
    print(
      "killed migrations in SQL: \(outcomes[true, default: 0]) left the old store, \(outcomes[false, default: 0]) the new one"
    )
  }

  /// A sub-entity added inside a hierarchy (`Manga`, under GraphicNovel, with a many-to-many to
  /// Tag): its attribute's column added to Book's table, a join table made for it, and Page,
  /// Tag, Writer and Author renumbered after it, holding what the migrating restore writes.
  @Test func aSubentityAddedWithAManyToManyIsAddedInSQL() throws {
    let manga = workspace.path("Manga.xcdatamodeld").path
    try Self.writeModel(at: manga) {
      $0.replacingOccurrences(
        of: #"<entity name="Page" "#,
        with: """
          <entity name="Manga" representedClassName="Manga" parentEntity="GraphicNovel" syncable="YES" codeGenerationType="class">
                  <attribute name="volume" optional="YES" attributeType="Integer 16" defaultValueString="1" usesScalarValueType="YES"/>
                  <relationship name="genres" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Tag" inverseName="mangas" inverseEntity="Tag"/>
              </entity>
              <entity name="Page" 
          """
      ).replacingOccurrences(
        of:
          #"<relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="tags""#,
        with: """
          <relationship name="mangas" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Manga" inverseName="genres" inverseEntity="Manga"/>
                  <relationship name="books" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Book" inverseName="tags"
          """)
    }
    try expectMigratedInPlaceAsARestoreMigrates(into: manga)
    #expect(
      try sqlRows(store, "SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT") == [
        "1|Book|0", "2|GraphicNovel|1", "3|Manga|2", "4|Page|0", "5|Tag|0", "6|Writer|0",
        "7|Author|6",
      ])
    #expect(try sqlRows(store, "SELECT DISTINCT Z_ENT FROM ZPAGE") == ["4"])
    #expect(try sqlRows(store, "SELECT count(*) FROM ZBOOK WHERE ZVOLUME IS NOT NULL") == ["0"])
    #expect(
      try sqlRows(store, "SELECT name FROM sqlite_master WHERE name LIKE 'Z\\_%MANGAS' ESCAPE '\\'")
        .count == 1)
  }

  /// An entity renamed by its renaming identifier (Tag → Label, which Core Data's numbering
  /// puts before Page): its table renamed, Page renumbered, the books–tags join table's Tag
  /// column renamed, holding what the migrating restore writes.
  @Test func anEntityRenamedIsRenamedInSQL() throws {
    let labelled = workspace.path("Labelled.xcdatamodeld").path
    try Self.writeModel(at: labelled) {
      $0.replacingOccurrences(
        of: #"<entity name="Tag" representedClassName="Tag""#,
        with: #"<entity name="Label" representedClassName="Label" elementID="Tag""#
      ).replacingOccurrences(of: #"destinationEntity="Tag""#, with: #"destinationEntity="Label""#)
        .replacingOccurrences(of: #"inverseEntity="Tag""#, with: #"inverseEntity="Label""#)
    }
    let tags = try sqlRows(store, "SELECT Z_PK, ZNAME FROM ZTAG ORDER BY Z_PK")
    let links = try sqlRows(store, "SELECT Z_1BOOKS, Z_4TAGS FROM Z_1TAGS ORDER BY 1, 2")
    try expectMigratedInPlaceAsARestoreMigrates(into: labelled)
    #expect(try sqlRows(store, "SELECT Z_PK, ZNAME FROM ZLABEL ORDER BY Z_PK") == tags)
    #expect(try sqlRows(store, "SELECT Z_1BOOKS, Z_3TAGS FROM Z_1TAGS ORDER BY 1, 2") == links)
    #expect(try sqlRows(store, "SELECT DISTINCT Z_ENT FROM ZLABEL") == ["3"])
    #expect(try sqlRows(store, "SELECT DISTINCT Z_ENT FROM ZPAGE") == ["4"])
  }

  /// Relationships renamed by their renaming identifiers (Book.tags → genres, a many-to-many;
  /// Page.book → volume, a to-one to a hierarchy whose inverse is ordered): the join table and
  /// its column, and the to-one's key, entity and order columns renamed, holding what the
  /// migrating restore writes.
  @Test func relationshipsRenamedAreRenamedInSQL() throws {
    let renamed = workspace.path("Relinked.xcdatamodeld").path
    try Self.writeModel(at: renamed) {
      $0.replacingOccurrences(
        of: #"<relationship name="tags" "#, with: #"<relationship name="genres" "#
      ).replacingOccurrences(of: #"inverseName="tags""#, with: #"inverseName="genres""#)
        .replacingOccurrences(
          of: #"<relationship name="book" optional="YES""#,
          with: #"<relationship name="volume" elementID="book" optional="YES""#
        ).replacingOccurrences(of: #"inverseName="book""#, with: #"inverseName="volume""#)
    }
    let links = try sqlRows(store, "SELECT Z_1BOOKS, Z_4TAGS FROM Z_1TAGS ORDER BY 1, 2")
    let pages = try sqlRows(store, "SELECT Z_PK, ZBOOK, Z1_BOOK, Z_FOK_BOOK FROM ZPAGE ORDER BY 1")
    try expectMigratedInPlaceAsARestoreMigrates(into: renamed)
    #expect(try sqlRows(store, "SELECT Z_1BOOKS, Z_4GENRES FROM Z_1GENRES ORDER BY 1, 2") == links)
    #expect(
      try sqlRows(store, "SELECT Z_PK, ZVOLUME, Z1_VOLUME, Z_FOK_VOLUME FROM ZPAGE ORDER BY 1")
        == pages)
  }

  /// Entities removed: their objects dropped and counted, the relationships to them removed and
  /// their links counted, as the migrating restore reports them. Tag's removal renumbers
  /// Writer and Author (Book's author entity column renamed and rewritten); the Writer
  /// hierarchy's removal drops Book's to-one author with its columns.
  @Test(arguments: [["Tag"], ["Writer", "Author"]])
  func entitiesRemovedAreRemovedInSQLAndCountedAsTheRestoreCountsThem(removed: [String]) throws {
    let smaller = workspace.path("Smaller.xcdatamodeld").path
    try Self.writeModel(at: smaller) { text in
      var text = text
      for entity in removed {
        text = text.replacing(
          try! Regex(#"\s*<entity name="\#(entity)" .*?</entity>"#).dotMatchesNewlines(), with: "")
        text = text.replacing(
          try! Regex(#"\s*<relationship [^>]*destinationEntity="\#(entity)"[^>]*/>"#), with: "")
      }
      return text
    }
    try expectMigratedInPlaceAsARestoreMigrates(into: smaller)
    let tables = try sqlRows(store, "SELECT name FROM sqlite_master WHERE type = 'table'")
    for entity in removed { #expect(!tables.contains("Z" + entity.uppercased())) }
    #expect(tables.contains("Z_1TAGS") == !removed.contains("Tag"))
    #expect(try sqlRows(store, "SELECT count(*) FROM Z_PRIMARYKEY") == ["\(6 - removed.count)"])
  }

  /// An attribute renamed (by its renaming identifier) keeps its values in its column under the
  /// new name: `ALTER TABLE … RENAME COLUMN`, in place, holding what the migrating restore
  /// writes, report included.
  @Test func anAttributeRenamedIsRenamedInSQLAndHoldsWhatAMigratingRestoreWrites() throws {
    let renamed = workspace.path("Renamed.xcdatamodeld").path
    try Self.writeModel(at: renamed) {
      $0.replacingOccurrences(
        of: #"<attribute name="sales" "#,
        with: #"<attribute name="copiesSold" elementID="sales" "#)
    }
    let sales = try sqlRows(store, "SELECT ZSALES FROM ZBOOK ORDER BY Z_PK")
    try expectMigratedInPlaceAsARestoreMigrates(into: renamed)
    #expect(try sqlRows(store, "SELECT ZCOPIESSOLD FROM ZBOOK ORDER BY Z_PK") == sales)
  }

  @Test func aChangeSQLCannotMakeIsMigratedByCopyAsBefore() throws {
    // A type changed, even without loss, is a conversion of every value.
    let widened = workspace.path("Widened.xcdatamodeld").path
    try Self.writeModel(at: widened) {
      $0.replacingOccurrences(
        of: #"<attribute name="edition" optional="YES" attributeType="Integer 32""#,
        with: #"<attribute name="edition" optional="YES" attributeType="Integer 64""#)
    }
    let editions = try sqlRows(store, "SELECT ZEDITION FROM ZBOOK ORDER BY Z_PK")
    let before = try inode(store)
    let result = try BuiltTool.run(["migrate", store, "--model", widened, "-q"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(try inode(store) != before)
    #expect(try sqlRows(store, "SELECT ZEDITION FROM ZBOOK ORDER BY Z_PK") == editions)
  }
}
