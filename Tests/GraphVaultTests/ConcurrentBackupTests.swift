import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import SQLite
import Synchronization
import TestSupport
import Testing

@Suite("Backing up a store while it is written to")
struct ConcurrentBackupTests {
  @Test func theArchiveHoldsOneConsistentStateWhileAnotherConnectionWrites() throws {
    let directory = try TemporaryDirectory()
    let modelPath = SharedFixtures.packageRoot.appendingPathComponent(
      "Fixtures/Library.xcdatamodeld"
    ).path
    let model = try ModelSource.model(at: modelPath)
    let store = directory.path("Live.sqlite").path
    try StoreCreator.create(at: store, model: model)  // WAL mode, as Core Data's stores

    // The writer commits transactions that each add a book and its page, as an app would.
    let stop = Atomic<Bool>(false)
    let committed = Atomic<Int>(0)
    let writerError = Mutex<String?>(nil)
    let writer = Thread {
      do {
        let db = try Database(path: store, mode: .readWrite)
        db.setBusyTimeout(milliseconds: 5_000)
        var i: Int64 = 0
        while !stop.load(ordering: .relaxed) && i < 20_000 {
          i += 1
          try db.transaction(.immediate) { db in
            try db.execute(
              "INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE) VALUES (\(i), 1, 1, 'W\(i)')")
            try db.execute(
              "INSERT INTO ZPAGE (Z_PK, Z_ENT, Z_OPT, ZNUMBER, ZBOOK, Z1_BOOK) VALUES (\(i), 3, 1, \(i), \(i), 1)"
            )
            try db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = \(i) WHERE Z_ENT IN (1, 3)")
          }
          committed.add(1, ordering: .relaxed)
        }
      } catch {
        writerError.withLock { $0 = "\(error)" }
      }
    }
    writer.start()
    while committed.load(ordering: .relaxed) < 200 { usleep(1_000) }

    var archives: [String] = []
    for round in 0..<3 {
      var options = BackupService.Options()
      options.modelPath = modelPath
      options.output = Location(path: directory.path("live-\(round).gvault").path)
      archives.append(try BackupService.backup(storePath: store, options: options).archive)
    }
    stop.store(true, ordering: .relaxed)
    while !writer.isFinished { usleep(1_000) }
    #expect(
      writerError.withLock { $0 } == nil, "the writer failed: \(writerError.withLock { $0 } ?? "")")

    for (round, archive) in archives.enumerated() {
      let restored = directory.path("restored-\(round).sqlite").path
      let result = try RestoreService.restore(archive: Location(path: archive), to: restored)
      let books = result.objects["Book"] ?? 0
      #expect(books > 0)
      #expect(
        books == result.objects["Page"],
        "round \(round): \(books) books but \(result.objects["Page"] ?? 0) pages")
      let db = try Database(path: restored, mode: .readOnly)
      let orphans = try db.prepare(
        "SELECT count(*) FROM ZBOOK b WHERE NOT EXISTS (SELECT 1 FROM ZPAGE p WHERE p.ZBOOK = b.Z_PK)"
      ).scalar()
      #expect(orphans == .integer(0), "round \(round)")
      // Z_PRIMARYKEY was read in the same snapshot as the rows.
      let maxKey = try db.prepare("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = 1").scalar()
      #expect(maxKey == .integer(Int64(books)), "round \(round)")
    }
  }
}
