import ArchiveFormat
import Foundation
import ObjectStore
import PropertyList
import TestSupport
import Testing

@testable import GraphVault

/// Format 5 puts a full archive's sketches after its objects, hashed as the backup reads the
/// rows: the same sketches the separate pass of format 4 makes, whatever the store holds.
@Suite("Sketches after the objects")
struct LateSketchesTests {
  let directory: TemporaryDirectory
  let store: String

  init() throws {
    directory = try TemporaryDirectory()
    store = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: store, objects: 900, seed: 12)
    // A keyed table and a table without a key, besides the model's.
    try sqlScript(
      store,
      """
      CREATE TABLE EXTRA_KEYED (ID INTEGER PRIMARY KEY, NOTE TEXT);
      INSERT INTO EXTRA_KEYED (ID, NOTE) VALUES (3, 'a'), (9, 'b'), (40, NULL);
      CREATE TABLE EXTRA_LOG (WHAT TEXT, N INTEGER);
      INSERT INTO EXTRA_LOG VALUES ('x', 1), ('y', 2);
      """)
  }

  /// Backs the store up in `format` with ledger seed 91.
  func backup(format: Int64, _ name: String) throws -> String {
    var options = BackupService.Options()
    options.output = Location(path: directory.path(name).path)
    options.formatVersion = format
    options.ledgerSeed = 91
    return try BackupService.backup(storePath: store, options: options).archive
  }

  /// The sketches `archive` holds, wherever it holds them, with its members' paths.
  func sketches(_ archive: String) throws -> (sets: [String: ChangeSketch], paths: [String]) {
    let members = try TestSupport.members(of: archive)
    let ledger = try ChangeLedger(
      PropertyListValue(
        binaryPropertyList: try #require(members.first { $0.path == ArchiveLayout.changes }).bytes))
    guard let late = members.first(where: { $0.path == ArchiveLayout.sketches }) else {
      #expect(!ledger.sketchesFollow)
      return (ledger.sets, members.map(\.path))
    }
    #expect(ledger.sketchesFollow && ledger.sets.isEmpty)
    let sets = try ChangeLedger.sets(
      fromSketches: PropertyListValue(binaryPropertyList: late.bytes), seed: ledger.seed)
    return (sets, members.map(\.path))
  }

  /// The sets whose sketches differ (a short message where whole sketches would print every
  /// cell).
  func differing(_ a: [String: ChangeSketch], _ b: [String: ChangeSketch]) -> [String] {
    Set(a.keys).union(b.keys).filter { a[$0] != b[$0] }.sorted()
  }

  @Test func aFullArchiveOfFormatFiveHoldsTheSketchesOfFormatFourAfterItsObjects() throws {
    let four = try sketches(try backup(format: 4, "four.gvault"))
    let five = try sketches(try backup(format: 5, "five.gvault"))
    #expect(
      four.sets.keys.sorted() == [
        "joins/Z_1TAGS", "objects/Book", "objects/Page", "objects/Tag", "objects/Writer",
        "tables/EXTRA_KEYED", "tables/EXTRA_LOG",
      ])
    #expect(differing(four.sets, five.sets) == [])
    #expect(!four.paths.contains(ArchiveLayout.sketches))
    // After every chunk, before the index.
    #expect(Array(five.paths.suffix(2)) == [ArchiveLayout.sketches, ArchiveLayout.index])
    #expect(five.paths.filter { $0 != ArchiveLayout.sketches } == four.paths)
  }

  @Test func readingTheObjectsHashesEveryHierarchyWholeAndLeavesOnlyTheOtherSetsForAfter()
    throws
  {
    let store = try CoreDataStore(path: self.store)
    let model = try SampleLibrary.model()
    let layout = try store.layout(for: model)
    try store.read { store in
      let plan = try LedgerPlan.full(
        store: store, layout: layout, modelCache: nil, seed: 91, later: true)
      #expect(plan.ledger.sets.isEmpty && plan.ledger.sketchesFollow)
      let hashing = try plan.objectHashing(store: store)
      var hashed: [String: LedgerHashing.Sketched] = [:]
      for entity in model.numberedEntities where !entity.isAbstract {
        let root = model.root(of: entity.name)?.name ?? entity.name
        let written = try SegmentedObjects.write(
          .init(
            entity: entity.name, joins: [], model: model, layout: layout, hashing: hashing[root]),
          store: store, worker: nil
        ) { _ in }
        let read = LedgerHashing.Sketched(
          sketch: try #require(written.sketch), elements: written.objects)
        if hashed["objects/\(root)"] == nil {
          hashed["objects/\(root)"] = read
        } else {
          hashed["objects/\(root)"]!.merge(read)
        }
      }
      #expect(
        plan.hashedAfter(hashed).map(\.name).sorted() == [
          "joins/Z_1TAGS", "tables/EXTRA_KEYED", "tables/EXTRA_LOG",
        ])
      let late = try plan.sketches(hashed: hashed, store: store, worker: nil)
      let once = try LedgerPlan.full(store: store, layout: layout, modelCache: nil, seed: 91)
      #expect(differing(late, once.ledger.sets) == [])
    }
  }

  @Test func rowsNoEntitysObjectsHoldAreHashedAfterTheObjects() throws {
    // A row of an entity number the model does not have: no object is read of it, yet the
    // ledger of its table counts it, as it counts every row.
    try sqlScript(
      store, "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (100000, 99, 1, 'stray')")
    let four = try sketches(try backup(format: 4, "four.gvault"))
    let five = try sketches(try backup(format: 5, "five.gvault"))
    #expect(differing(four.sets, five.sets) == [])
  }

  @Test func anIncrementalBackupFindsWhatChangedSinceAFormatFiveArchive() throws {
    let vault = directory.path("vault").path
    try FileManager.default.createDirectory(atPath: vault, withIntermediateDirectories: true)
    var options = BackupService.Options()
    options.output = Location(path: vault)
    options.incremental = true
    options.now = Date(timeIntervalSince1970: 1_800_000_000)
    let full = try BackupService.backup(storePath: store, options: options)
    #expect(full.kind == "full")
    try sqlScript(
      store,
      """
      UPDATE ZBOOK SET ZTITLE = 'changed', Z_OPT = Z_OPT + 1 WHERE Z_PK IN (2, 3);
      UPDATE EXTRA_KEYED SET NOTE = 'z' WHERE ID = 9;
      """)
    options.now = Date(timeIntervalSince1970: 1_800_000_060)
    let next = try BackupService.backup(storePath: store, options: options)
    #expect(next.kind == "incremental", "\(next.fullBecause ?? "")")
    #expect(next.objects.values.reduce(0, +) == 2)
    #expect(next.tables["EXTRA_KEYED"] == 1)
  }

  @Test func verifyNamesTheSketchesAFullArchiveOfFormatFiveLacksOrHoldsOutOfPlace() throws {
    let archive = try backup(format: 5, "five.gvault")
    var missing = try ArchiveForger(reading: archive)
    missing.remove(ArchiveLayout.sketches)
    let forged = directory.path("forged.gvault").path
    try missing.write(to: forged)
    var report = try VerifyService.verify(archive: Location(path: forged))
    #expect(
      report.problems.contains { $0.contains("sketches.plist") && $0.contains("lacks") },
      "\(report.problems)")
    var early = try ArchiveForger(reading: archive)
    early.swap(ArchiveLayout.sketches, "objects/Tag/000001.plist")
    try FileManager.default.removeItem(atPath: forged)
    try early.write(to: forged)
    report = try VerifyService.verify(archive: Location(path: forged))
    #expect(
      report.problems.contains { $0.contains("follows sketches.plist") }, "\(report.problems)")
  }
}
