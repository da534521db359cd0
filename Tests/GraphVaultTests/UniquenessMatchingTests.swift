import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// An app that rebuilt its store (a new store UUID, every primary key handed out anew) keeps
/// its objects' `@Attribute(.unique)` values: diff, merge and find --history between the old
/// store and the new match a constrained entity's objects by that value, and say so. Stores
/// are written and read with Python's sqlite3.
@Suite(
  "Matching objects by uniqueness constraint between stores",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct UniquenessMatchingTests {
  let directory: TemporaryDirectory
  /// The store before the app rebuilt it: c1 (total 10), c2 (20); an item in c1.
  let old: String
  /// The rebuilt store: c2 (20) as p1, c1 (15) as p2, c3 (5) as p3; the item, now in c1 as p2.
  let new: String

  /// Cart is unique by `code`; Item belongs to a cart.
  static func model(constraint: [[String]] = [["code"]]) throws -> ObjectModel {
    try ObjectModel(
      name: "Shop",
      entities: [
        EntityDescription(
          name: "Cart", uniquenessConstraints: constraint,
          attributes: [
            AttributeDescription(name: "code", type: .string),
            AttributeDescription(name: "total", type: .integer64),
          ],
          relationships: [
            RelationshipDescription(
              name: "items", destination: "Item", inverse: "cart", deleteRule: .cascade)
          ]),
        EntityDescription(
          name: "Item", attributes: [AttributeDescription(name: "name", type: .string)],
          relationships: [
            RelationshipDescription(
              name: "cart", destination: "Cart", inverse: "items", maxCount: 1)
          ]),
      ])
  }

  init() throws {
    directory = try TemporaryDirectory()
    old = directory.path("Shop.sqlite").path
    new = directory.path("Shop-rebuilt.sqlite").path
    try Self.makeStores(old: old, new: new)
  }

  /// The two stores, their carts constrained as `model` says.
  static func makeStores(old: String, new: String, model: ObjectModel? = nil) throws {
    try Self.make(
      old, uuid: "OLD-STORE", model: model,
      """
      INSERT INTO ZCART (Z_PK, Z_ENT, Z_OPT, ZCODE, ZTOTAL) VALUES (1, 1, 1, 'c1', 10), (2, 1, 1, 'c2', 20);
      INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCART) VALUES (1, 2, 1, 'pen', 1);
      UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_NAME = 'Cart';
      UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Item';
      """)
    try Self.make(
      new, uuid: "NEW-STORE", model: model,
      """
      INSERT INTO ZCART (Z_PK, Z_ENT, Z_OPT, ZCODE, ZTOTAL) VALUES (1, 1, 1, 'c2', 20), (2, 1, 1, 'c1', 15), (3, 1, 1, 'c3', 5);
      INSERT INTO ZITEM (Z_PK, Z_ENT, Z_OPT, ZNAME, ZCART) VALUES (1, 2, 1, 'pen', 2);
      UPDATE Z_PRIMARYKEY SET Z_MAX = 3 WHERE Z_NAME = 'Cart';
      UPDATE Z_PRIMARYKEY SET Z_MAX = 1 WHERE Z_NAME = 'Item';
      """)
  }

  static func make(
    _ path: String, uuid: String, model: ObjectModel? = nil, _ script: String
  ) throws {
    var options = StoreCreator.Options()
    options.uuid = uuid
    try? FileManager.default.removeItem(atPath: path)
    try StoreCreator.create(at: path, model: model ?? Self.model(), options: options)
    let result = try Subprocess.python(
      "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nc.executescript(sys.argv[2])\nc.commit()",
      [path, script])
    #expect(result.status == 0, "\(result.stderr)")
  }

  func backup(_ store: String, as name: String, at time: String = "2026-11-20T03:00:00Z")
    throws -> String
  {
    var options = BackupService.Options()
    options.output = Location(
      path: directory.path(name).path + (name.hasSuffix(".gvault") ? "" : "/"))
    options.now = ISO8601DateFormatter().date(from: time)
    return try BackupService.backup(storePath: store, options: options).archive
  }

  /// Inserted, deleted, changed and unchanged.
  func counts(_ counts: DiffSummary.Counts?) -> [Int] {
    guard let counts else { return [] }
    return [counts.inserted, counts.deleted, counts.changed, counts.unchanged]
  }

  func diff(_ left: String, _ right: String, keys: [String] = []) throws -> (
    [ObjectChange], DiffSummary
  ) {
    var changes: [ObjectChange] = []
    var options = DiffService.Options()
    options.keys = keys
    let summary = try DiffService.diff(
      old: Location(path: left), new: Location(path: right), options: options
    ) {
      changes.append($0)
    }
    return (changes, summary)
  }

  @Test func diffOfARebuiltStoreMatchesCartsByTheirUniqueCodeAndSaysSo() throws {
    let (_, summary) = try diff(old, new)
    #expect(counts(summary.entities["Cart"]) == [1, 0, 1, 1])
    // The item moved from p1 to p2 with its cart: named by the cart's code, it is unchanged.
    #expect(counts(summary.entities["Item"]) == [0, 0, 0, 1])
    #expect(summary.notes.count == 1)
    #expect(
      summary.notes.first?.hasPrefix("Cart matched by its uniqueness constraint (code)") == true)
  }

  @Test func archivesOfTwoStoresAreComparedByTheConstraintAsTheStoresAre() throws {
    let (_, stores) = try diff(old, new)
    let (_, archives) = try diff(
      try backup(old, as: "old.gvault"), try backup(new, as: "new.gvault"))
    #expect(archives.entities == stores.entities)
    #expect(archives.notes == stores.notes)
  }

  @Test func withinOneStorePrimaryKeysStayTheMatch() throws {
    let archive = try backup(old, as: "old.gvault")
    let result = try Subprocess.python(
      "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nc.execute(\"UPDATE ZCART SET ZCODE = 'c9' WHERE Z_PK = 1\")\nc.commit()",
      [old])
    #expect(result.status == 0, "\(result.stderr)")
    let (changes, summary) = try diff(archive, old)
    #expect(summary.notes.isEmpty)
    #expect(counts(summary.entities["Cart"]) == [0, 0, 1, 1])
    #expect(changes.map(\.newPrimaryKey) == [1])
  }

  @Test func keyChoosesAnotherAttributeAndNothingIsSaidOfTheConstraint() throws {
    let (_, summary) = try diff(old, new, keys: ["Cart.total"])
    #expect(summary.notes.isEmpty)
    // By total: 20 on both sides; 10 gone; 15 and 5 new.
    #expect(counts(summary.entities["Cart"]) == [2, 1, 0, 1])
  }

  @Test func aConstraintOfTwoAttributesLeavesPrimaryKeysAndSaysWhy() throws {
    try Self.makeStores(old: old, new: new, model: Self.model(constraint: [["code", "total"]]))
    let (_, summary) = try diff(old, new)
    #expect(summary.notes.count == 1)
    #expect(summary.notes.first?.contains("names more than one attribute") == true)
    #expect(counts(summary.entities["Cart"]) == [1, 0, 2, 0])
  }

  @Test func mergeFromTheOldStoreFindsCartsTheRebuiltStoreHoldsUnderOtherKeys() throws {
    let archive = try backup(old, as: "old.gvault")
    let result = try Subprocess.python(
      "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nc.execute(\"DELETE FROM ZCART WHERE ZCODE = 'c1'\")\nc.execute('DELETE FROM ZITEM')\nc.commit()",
      [new])
    #expect(result.status == 0, "\(result.stderr)")
    var options = MergeService.Options(
      selection: FixtureCutter.Selection(entity: "Cart", includes: ["items"]))
    let merged = try MergeService.merge(
      source: Location(path: archive), into: new, options: options)
    // c2 is found as p1, not taken for a conflict with c1's p1; c1 comes back under p4.
    #expect(merged.entities["Cart"]?.present == 1)
    #expect(merged.entities["Cart"]?.inserted == 1)
    #expect(merged.conflicts.isEmpty)
    #expect(merged.notes.first?.hasPrefix("Cart matched by its uniqueness constraint") == true)
    let rows = try sqlRows(
      new,
      "SELECT c.Z_PK, c.ZCODE, c.ZTOTAL, i.ZNAME FROM ZCART c LEFT JOIN ZITEM i ON i.ZCART = c.Z_PK ORDER BY c.Z_PK"
    )
    #expect(rows == ["1|c2|20|None", "3|c3|5|None", "4|c1|10|pen"])
    options.dryRun = true
    let again = try MergeService.merge(source: Location(path: archive), into: new, options: options)
    #expect(again.entities["Cart"]?.present == 2)
  }

  @Test func historyFollowsAnObjectIntoTheRebuiltStoreByItsCode() throws {
    let folder = directory.path("nightly").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    // Both archives are Shop's: the app rebuilt Shop.sqlite between the two nights.
    _ = try backup(old, as: "nightly", at: "2026-11-20T03:00:00Z")
    try FileManager.default.removeItem(atPath: old)
    try FileManager.default.copyItem(atPath: new, toPath: old)
    _ = try backup(old, as: "nightly", at: "2026-11-21T03:00:00Z")
    var options = FindService.Options(entity: "Cart")
    options.history = "p2"
    let results = try FindService.find(in: Location(path: folder), options: options)
    // Newest first: p2 of the rebuilt store is c1; in the older store c1 was p1.
    #expect(results.map { $0.objects.map(\.primaryKey) } == [[2], [1]])
    #expect(results.map { $0.objects.first?.values["total"] } == ["15", "10"])
    #expect(results.map(\.matchedBy) == [nil, "code=\"c1\""])
  }
}
