import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import SQLite
import TestSupport
import Testing

@Suite("The sample library")
struct SampleLibraryTests {
  static let xcodeModel = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Library.xcdatamodeld"
  ).path

  @Test func theModelBuiltInCodeEqualsTheShippedXcodeModel() throws {
    let code = try SampleLibrary.model()
    let xcode = try ModelSource.model(at: Self.xcodeModel)
    #expect(code.entities == xcode.entities)
    #expect(code.versionIdentifiers == xcode.versionIdentifiers)
    #expect(code.fingerprint == xcode.fingerprint)
  }

  @Test func theSameSeedGivesTheSameStore() throws {
    let directory = try TemporaryDirectory()
    let a = directory.path("a.sqlite").path
    let b = directory.path("b.sqlite").path
    try SampleLibrary.generate(at: a, objects: 800, seed: 7)
    try SampleLibrary.generate(at: b, objects: 800, seed: 7)
    let rows = try storeRows(a)
    #expect(rows.count > 800)
    // Z_METADATA holds each store's own UUID; everything else is equal.
    #expect(
      rows.filter { !$0.hasPrefix("Z_METADATA") }
        == (try storeRows(b)).filter { !$0.hasPrefix("Z_METADATA") })
  }

  @Test func aGeneratedStoreHasEveryKindOfRelationshipAndSurvivesBackupAndRestore() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: store, objects: 2_000)
    var options = BackupService.Options()
    options.modelPath = Self.xcodeModel
    options.output = Location(path: directory.url.path)
    let backup = try BackupService.backup(storePath: store, options: options)
    #expect(backup.objects.values.reduce(0, +) == 2_000)
    #expect(backup.objects["GraphicNovel", default: 0] > 0)
    #expect(backup.objects["Page", default: 0] > backup.objects["Book", default: 0])
    let db = try Database(path: store, mode: .readOnly)
    #expect(try db.prepare("SELECT count(*) FROM Z_1TAGS").scalar().integerValue ?? 0 > 0)
    // Each hierarchy's Z_MAX is its highest primary key, as Core Data keeps it.
    for (table, root) in [
      ("ZBOOK", "Book"), ("ZPAGE", "Page"), ("ZTAG", "Tag"), ("ZWRITER", "Writer"),
    ] {
      let highest = try db.prepare("SELECT max(Z_PK) FROM \(table)").scalar().integerValue
      let recorded = try db.prepare("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = '\(root)'")
        .scalar().integerValue
      #expect(highest == recorded, "\(root)")
    }
    #expect(
      try db.prepare("SELECT count(*) FROM ZBOOK WHERE ZCOVER IS NOT NULL").scalar().integerValue
        ?? 0 > 0)
    let restored = directory.path("Restored.sqlite").path
    _ = try RestoreService.restore(archive: Location(path: backup.archive), to: restored)
    #expect(try storeRows(restored) == storeRows(store))
    #expect(try VerifyService.verify(archive: Location(path: backup.archive)).ok)
  }
}
