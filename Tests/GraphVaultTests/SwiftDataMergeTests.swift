import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// Merging back into stores as SwiftData apps keep them: required to-manys saved empty,
/// persistent history on, a live write-ahead log. What lands in the store is read with
/// Python's sqlite3, as a reader of `ACHANGE` would read it.
@Suite(
  "Merging into SwiftData-shaped stores",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct SwiftDataMergeTests {
  let directory: TemporaryDirectory
  let store: String
  let model: ObjectModel

  /// Cocktail has a required to-many `components` (with an inverse) and a required to-many
  /// `spec` without one; the app saves both empty.
  static func model() throws -> ObjectModel {
    try ObjectModel(
      name: "Bar",
      entities: [
        EntityDescription(
          name: "Cocktail",
          attributes: [AttributeDescription(name: "name", type: .string, isOptional: false)],
          relationships: [
            RelationshipDescription(
              name: "components", destination: "Component", inverse: "cocktail",
              deleteRule: .cascade, isOptional: false),
            RelationshipDescription(
              name: "spec", destination: "Ingredient", deleteRule: .cascade, isOptional: false),
          ]),
        EntityDescription(
          name: "Component", attributes: [AttributeDescription(name: "name", type: .string)],
          relationships: [
            RelationshipDescription(
              name: "cocktail", destination: "Cocktail", inverse: "components", maxCount: 1)
          ]),
        EntityDescription(
          name: "Ingredient", attributes: [AttributeDescription(name: "name", type: .string)]),
      ])
  }

  init() throws {
    directory = try TemporaryDirectory()
    store = directory.path("Bar.sqlite").path
    model = try Self.model()
    var options = StoreCreator.Options()
    options.persistentHistory = true
    try StoreCreator.create(at: store, model: model, options: options)
    // What the app saved: a Martini with both required to-manys empty, a Gimlet with some.
    try sql(
      store,
      """
      INSERT INTO ZCOCKTAIL (Z_PK, Z_ENT, Z_OPT, ZNAME) VALUES (1, 1, 1, 'Martini'), (2, 1, 1, 'Gimlet');
      INSERT INTO ZCOMPONENT (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCOCKTAIL) VALUES (1, 2, 1, 'base', 2);
      INSERT INTO ZINGREDIENT (Z_PK, Z_ENT, Z_OPT, ZNAME, Z1SPEC) VALUES (1, 3, 1, 'lime', 2);
      UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_NAME = 'Cocktail';
      UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME IN ('Component', 'Ingredient');
      """)
  }

  /// Runs `script` on the store at `path` with Python's sqlite3.
  func sql(_ path: String, _ script: String) throws {
    let result = try Subprocess.python(
      "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nc.executescript(sys.argv[2])\nc.commit()",
      [path, script])
    #expect(result.status == 0, "\(result.stderr)")
  }

  func backup() throws -> String {
    var options = BackupService.Options()
    options.output = Location(path: directory.path("Bar.gvault").path)
    return try BackupService.backup(storePath: store, options: options).archive
  }

  func merge(_ archive: String, _ predicate: String, dryRun: Bool = false) throws(VaultError)
    -> MergeResult
  {
    var options = MergeService.Options(
      selection: FixtureCutter.Selection(entity: "Cocktail", predicate: predicate))
    options.dryRun = dryRun
    return try MergeService.merge(source: Location(path: archive), into: store, options: options)
  }

  @Test func anObjectSavedWithEmptyRequiredToManysMergesBackAsItWas() throws {
    let archive = try backup()
    try sql(store, "DELETE FROM ZCOCKTAIL WHERE ZNAME = 'Martini'")
    let dry = try merge(archive, "name == 'Martini'", dryRun: true)
    #expect(dry.entities["Cocktail"]?.inserted == 1)
    let result = try merge(archive, "name == 'Martini'")
    #expect(result.entities["Cocktail"]?.inserted == 1)
    #expect(
      try sqlRows(store, "SELECT Z_PK, ZNAME FROM ZCOCKTAIL ORDER BY Z_PK") == [
        "1|Martini", "2|Gimlet",
      ])
  }

  @Test func aMergeRecordsItsInsertsInThePersistentHistoryByGraphvault() throws {
    let archive = try backup()
    try sql(store, "DELETE FROM ZCOCKTAIL WHERE ZNAME = 'Gimlet'; DELETE FROM ZCOMPONENT;")
    try sql(store, "DELETE FROM ZINGREDIENT")
    var options = MergeService.Options(
      selection: FixtureCutter.Selection(
        entity: "Cocktail", predicate: "name == 'Gimlet'", includes: ["components", "spec"]))
    options.dryRun = true
    _ = try MergeService.merge(source: Location(path: archive), into: store, options: options)
    #expect(try sqlRows(store, "SELECT count(*) FROM ATRANSACTION") == ["0"])
    options.dryRun = false
    _ = try MergeService.merge(source: Location(path: archive), into: store, options: options)
    // One transaction by graphvault; an insert per object brought back, by entity number.
    #expect(
      try sqlRows(
        store,
        "SELECT s.ZNAME FROM ATRANSACTION t JOIN ATRANSACTIONSTRING s ON t.ZAUTHORTS = s.Z_PK")
        == ["graphvault"])
    #expect(
      try sqlRows(
        store,
        """
        SELECT c.ZCHANGETYPE, p.Z_NAME, c.ZENTITYPK FROM ACHANGE c
        JOIN Z_PRIMARYKEY p ON p.Z_ENT = c.ZENTITY
        JOIN ATRANSACTION t ON t.Z_PK = c.ZTRANSACTIONID ORDER BY p.Z_NAME, c.ZENTITYPK
        """) == ["0|Cocktail|2", "0|Component|1", "0|Ingredient|1"])
    #expect(
      try sqlRows(
        store,
        "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT > 16000 ORDER BY Z_ENT")
        == ["CHANGE|3", "TRANSACTION|1", "TRANSACTIONSTRING|2"])
  }

  @Test func aDryRunRefusesWhatTheMergeRefusesAndAFailedMergeLeavesTheFilesAsTheyWere() throws {
    // A backup whose Martini has no name, which the model requires.
    try sql(store, "UPDATE ZCOCKTAIL SET ZNAME = NULL WHERE Z_PK = 1")
    let archive = try backup()
    try sql(store, "DELETE FROM ZCOCKTAIL WHERE Z_PK = 1")
    // The store is live: in WAL mode, its log holding a transaction not yet checkpointed.
    let held = try Subprocess.python(
      """
      import sqlite3,sys,shutil
      c=sqlite3.connect(sys.argv[1])
      c.execute('PRAGMA journal_mode=WAL')
      c.execute("UPDATE ZCOCKTAIL SET ZNAME = 'Gimlet!' WHERE Z_PK = 2")
      c.commit()
      for suffix in ['', '-wal', '-shm']: shutil.copy(sys.argv[1] + suffix, sys.argv[2] + suffix)
      """, [store, directory.path("live.sqlite").path])
    #expect(held.status == 0, "\(held.stderr)")
    for suffix in ["", "-wal", "-shm"] {
      try? FileManager.default.removeItem(atPath: store + suffix)
      try FileManager.default.copyItem(
        atPath: directory.path("live.sqlite").path + suffix, toPath: store + suffix)
    }
    let before = try ["", "-wal"].map { try Data(contentsOf: URL(fileURLWithPath: store + $0)) }
    for dryRun in [true, false] {
      #expect {
        try merge(archive, "name == nil", dryRun: dryRun)
      } throws: { error in
        let detail = (error as? VaultError)?.detail ?? ""
        return detail.contains("Cocktail.name is required") && !detail.contains("source.sqlite")
      }
    }
    let after = try ["", "-wal"].map { try Data(contentsOf: URL(fileURLWithPath: store + $0)) }
    #expect(before == after)
    #expect(FileManager.default.fileExists(atPath: store + "-shm"))
  }

  @Test func aNewObjectWithAnEmptyRequiredToManyIsRefusedWithoutContradiction() throws {
    let context = try ObjectContext(storePath: store, model: model)
    let sour = try context.insert("Cocktail")
    try sour.setValue(.string("Sour"), for: "name")
    #expect {
      try context.save()
    } throws: { error in
      (error as? StoreError)?.detail.contains(
        "Cocktail.components is required and holds no objects") == true
    }
  }
}
