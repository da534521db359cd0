import ArchiveFormat
import ArchiveStorage
import Foundation
import GraphVault
import LibArchive
import ObjectStore
import PropertyList
import TestSupport
import Testing

/// Incremental archives: what one holds, that every point of a chain restores as the store
/// was, and that a chain with a part missing or replaced restores nothing.
@Suite("Incremental backups")
struct IncrementalBackupTests {
  let directory: TemporaryDirectory
  let store: String
  let vault: String

  init() throws {
    directory = try TemporaryDirectory()
    store = directory.path("Library.sqlite").path
    vault = directory.path("vault").path
    try FileManager.default.createDirectory(atPath: vault, withIntermediateDirectories: true)
    try SampleLibrary.generate(at: store, objects: 600, seed: 3)
  }

  /// Backs the store up into the vault, incrementally unless `full`.
  func backup(
    full: Bool = false, fullEvery: Int? = nil, password: PasswordSource? = nil,
    at seconds: Double
  ) throws -> BackupResult {
    var options = BackupService.Options()
    options.output = Location(path: vault)
    options.incremental = !full
    options.fullEvery = fullEvery
    options.password = password
    options.now = Date(timeIntervalSince1970: 1_800_000_000 + seconds)
    return try BackupService.backup(storePath: store, options: options)
  }

  /// A copy of the store as it is now (SQLite's backup, as `sqlite3 .backup` makes one).
  func snapshot(_ name: String) throws -> String {
    let copy = directory.path(name).path
    try sqlScript(store, "VACUUM INTO '\(copy)'")
    return copy
  }

  /// A night's changes as an app or a script makes them, chosen by `random`: titles changed
  /// with and without a Z_OPT bump, pages deleted, a tag inserted with Z_MAX raised, join rows
  /// removed and added.
  func change(night: Int, random: inout SplitMix64) throws {
    let first = random.next() % 40
    try sqlScript(
      store,
      """
      UPDATE ZBOOK SET ZTITLE = 'night \(night) ' || Z_PK, Z_OPT = Z_OPT + 1
        WHERE Z_PK % 40 = \(first);
      UPDATE ZBOOK SET ZRATING = \(night).5 WHERE Z_PK % 37 = \(random.next() % 37);
      DELETE FROM ZPAGE WHERE Z_PK IN (SELECT Z_PK FROM ZPAGE ORDER BY Z_PK LIMIT 1 OFFSET \(random.next() % 50));
      INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME)
        SELECT Z_MAX + 1, Z_ENT, 1, 'tag of night \(night)' FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag';
      UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + 1 WHERE Z_NAME = 'Tag';
      DELETE FROM Z_1TAGS WHERE rowid IN (SELECT rowid FROM Z_1TAGS ORDER BY rowid LIMIT 1 OFFSET \(random.next() % 30));
      INSERT OR IGNORE INTO Z_1TAGS SELECT MIN(Z_PK), (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag') FROM ZBOOK;
      """)
  }

  /// The store restored from `archive`, as rows.
  func restoredRows(_ archive: String, _ name: String) throws -> [String] {
    let target = directory.path(name).path
    _ = try RestoreService.restore(archive: Location(path: archive), to: target)
    return try storeRows(target)
  }

  @Test func everyNightOfAThirtyNightChainRestoresAsTheStoreWasThatNight() throws {
    var random = SplitMix64(seed: 41)
    var points: [(archive: String, copy: String)] = []
    var written: [Int] = []
    for night in 0..<30 {
      if night > 0 { try change(night: night, random: &random) }
      let result = try backup(at: Double(night) * 86_400)
      #expect(result.kind == (night == 0 ? "full" : "incremental"), "night \(night)")
      #expect(result.depth == (night == 0 ? nil : night))
      written.append(result.objects.values.reduce(0, +))
      points.append((result.archive, try snapshot("night-\(night).sqlite")))
    }
    for (night, point) in points.enumerated() {
      #expect(
        try restoredRows(point.archive, "restored-\(night).sqlite") == storeRows(point.copy),
        "night \(night)")
    }
    #expect(written[0] == 600)
    // Each night wrote what changed (a few books, a page, a tag, a join row's owners), never
    // the store again. A sketch that cannot be read (rarely: a set whose two changed elements
    // share their cells) costs that night its set written whole, never correctness.
    #expect(written.dropFirst().allSatisfy { $0 > 0 && $0 < 600 }, "\(written)")
    #expect(written.dropFirst().filter { $0 >= 40 }.count <= 2, "\(written)")
  }

  @Test func aChainRestoresItsRowsInKeyOrderIntoAsManyPagesAsAFullArchiveOfThatPoint() throws {
    var random = SplitMix64(seed: 5)
    var newest = ""
    for night in 0..<8 {
      if night > 0 { try change(night: night, random: &random) }
      newest = try backup(at: Double(night) * 86_400).archive
    }
    let full = try backup(full: true, at: 8 * 86_400).archive
    let fromChain = directory.path("from-chain.sqlite").path
    let fromFull = directory.path("from-full.sqlite").path
    _ = try RestoreService.restore(archive: Location(path: newest), to: fromChain)
    _ = try RestoreService.restore(archive: Location(path: full), to: fromFull)
    #expect(try storeRows(fromChain) == storeRows(fromFull))
    // The rows the newer archives hold went in among the full archive's, in key order, not
    // into the middle of its tables afterwards (which splits their pages).
    #expect(try sqlRows(fromChain, "PRAGMA page_count") == sqlRows(fromFull, "PRAGMA page_count"))
    // A join table's rows are numbered as they went in: in the same order.
    let joins = "SELECT rowid, * FROM Z_1TAGS ORDER BY rowid"
    #expect(try sqlRows(fromChain, joins) == sqlRows(fromFull, joins))
  }

  @Test func aChainWhoseArchivesHoldSeveralChunksOfAnEntityRestoresAsTheStoreWas() throws {
    // Books enough for two chunks in the full archive, each night's changes across them.
    try FileManager.default.removeItem(atPath: store)
    try SampleLibrary.generate(at: store, objects: 45_000, seed: 8)
    let full = try backup(at: 0).archive
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: full)))
    let framed = try #require(
      try FramedArchive(size: Int64(bytes.count), name: full) { offset, count, into in
        into = Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
      })
    #expect(framed.members.filter { $0.path.hasPrefix("objects/Book/") }.count >= 2)
    var newest = full
    for night in 1...3 {
      // A few books and pages a night, across every chunk: too few for a set written whole.
      try sqlScript(
        store,
        """
        UPDATE ZBOOK SET ZTITLE = 'night \(night) ' || Z_PK, Z_OPT = Z_OPT + 1
          WHERE Z_PK % 997 = \(night);
        DELETE FROM ZPAGE WHERE Z_PK % 1499 = \(night);
        """)
      let result = try backup(at: Double(night) * 86_400)
      #expect(result.kind == "incremental")
      newest = result.archive
    }
    let copy = try snapshot("night-3.sqlite")
    #expect(try restoredRows(newest, "restored.sqlite") == storeRows(copy))
  }

  @Test func aChangeWithoutAZOptBumpAndAnInsertAndADeleteAreWhatTheArchiveHolds() throws {
    _ = try backup(at: 0)
    try sqlScript(
      store,
      """
      UPDATE ZBOOK SET ZTITLE = 'quietly changed' WHERE Z_PK = 7;
      DELETE FROM ZPAGE WHERE Z_PK = 12;
      INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME)
        SELECT Z_MAX + 1, Z_ENT, 1, 'new' FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag';
      UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + 1 WHERE Z_NAME = 'Tag';
      """)
    let result = try backup(at: 60)
    #expect(result.kind == "incremental")
    #expect(result.objects.values.reduce(0, +) == 2)
    // Read back by Python's plistlib from bsdtar's extraction: the ledger says the same.
    let ledger = try Subprocess.run(
      "sh",
      [
        "-c",
        """
        bsdtar -xOf "$1" changes.plist | python3 -c '
        import plistlib, sys
        d = plistlib.loads(sys.stdin.buffer.read())
        def keys(b):
            out, prev, v, s = [], 0, 0, 0
            for byte in b:
                v |= (byte & 0x7f) << s; s += 7
                if byte < 0x80:
                    prev += (v >> 1) ^ -(v & 1); out.append(prev); v = s = 0
            return out
        for field in ("written", "deleted"):
            for name, data in sorted(d[field].items()):
                print(field, name, keys(data))
        print(d["kind"], sorted(d["deltas"]))'
        """, "sh", result.archive,
      ])
    #expect(ledger.status == 0, "\(ledger.stderr)")
    let tagKey = try sqlRows(store, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag'")[0]
    #expect(
      ledger.stdout.split(separator: "\n").map(String.init) == [
        "written objects/Book [7]", "written objects/Tag [\(tagKey)]",
        "deleted objects/Page [12]",
        "incremental ['objects/Book', 'objects/Page', 'objects/Tag']",
      ])
    #expect(try restoredRows(result.archive, "r.sqlite") == storeRows(store))
  }

  @Test func aMissingParentMakesRestoreAndVerifyFailNamingItWithNothingRestored() throws {
    let full = try backup(at: 0)
    try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'x' WHERE Z_PK = 3;")
    _ = try backup(at: 60)
    try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'y' WHERE Z_PK = 4;")
    let newest = try backup(at: 120)
    try FileManager.default.removeItem(atPath: full.archive)
    let target = directory.path("restored.sqlite").path
    #expect {
      try RestoreService.restore(archive: Location(path: newest.archive), to: target)
    } throws: { error in
      let failure = error as? VaultError
      return failure?.kind == .invalidInput
        && failure?.description.contains(URL(fileURLWithPath: full.archive).lastPathComponent)
          == true
    }
    #expect(!FileManager.default.fileExists(atPath: target))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        .filter { $0.contains("restored") }.isEmpty)
    let report = try VerifyService.verify(archive: Location(path: newest.archive))
    #expect(!report.ok)
    #expect(report.problems.contains { $0.contains("missing") })
  }

  @Test func aParentReplacedByAnotherArchiveIsRefused() throws {
    let full = try backup(at: 0)
    try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'x' WHERE Z_PK = 3;")
    let child = try backup(at: 60)
    // Another full backup of the same store, put in the parent's place.
    let other = try backup(full: true, at: 120)
    try FileManager.default.removeItem(atPath: full.archive)
    try FileManager.default.moveItem(atPath: other.archive, toPath: full.archive)
    let report = try VerifyService.verify(archive: Location(path: child.archive))
    #expect(!report.ok)
    #expect(report.problems.contains { $0.contains("not the archive it was written against") })
    #expect(throws: VaultError.self) {
      try RestoreService.restore(
        archive: Location(path: child.archive), to: directory.path("r.sqlite").path)
    }
  }

  @Test func aFullArchiveIsWrittenWhenMoreChangedThanTheLedgerCanTellApart() throws {
    _ = try backup(at: 0)
    try sqlScript(store, "UPDATE ZPAGE SET ZNUMBER = ZNUMBER + 1;")
    let result = try backup(at: 60)
    #expect(result.kind == "full")
    #expect(result.fullBecause?.contains("objects/Page") == true)
    #expect(try restoredRows(result.archive, "r.sqlite") == storeRows(store))
  }

  @Test func aSetThatChangedBeyondItsSketchIsWrittenWholeAndTheRestAsChanges() throws {
    _ = try backup(at: 0)
    // Every book retitled: more than the books' sketch tells apart, a third of the store.
    try sqlScript(
      store,
      """
      UPDATE ZBOOK SET ZTITLE = ZTITLE || ' (revised)', Z_OPT = Z_OPT + 1;
      UPDATE ZPAGE SET ZNUMBER = ZNUMBER + 1 WHERE Z_PK = 2;
      """)
    let books = Int(try sqlRows(store, "SELECT count(*) FROM ZBOOK")[0])!
    let result = try backup(at: 60)
    #expect(result.kind == "incremental")
    #expect(
      result.objects["Book", default: 0] + result.objects["GraphicNovel", default: 0] == books)
    #expect(result.objects["Page"] == 1)
    #expect(try restoredRows(result.archive, "r.sqlite") == storeRows(store))
    // The next night builds on the rewritten set's sketch.
    try sqlScript(
      store, "UPDATE ZBOOK SET ZTITLE = 'again' WHERE Z_PK = (SELECT min(Z_PK) FROM ZBOOK);")
    let next = try backup(at: 120)
    #expect(next.kind == "incremental")
    #expect(next.objects.values.reduce(0, +) == 1)
    #expect(try restoredRows(next.archive, "r2.sqlite") == storeRows(store))
  }

  @Test func fullEveryStartsANewChain() throws {
    var kinds: [String] = []
    for night in 0..<5 {
      try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'n\(night)' WHERE Z_PK = 2;")
      kinds.append(try backup(fullEvery: 3, at: Double(night) * 60).kind)
    }
    #expect(kinds == ["full", "incremental", "incremental", "full", "incremental"])
  }

  @Test func anEncryptedChainRestoresWithItsPassword() throws {
    let file = directory.path("password").path
    try "correct horse\n".write(toFile: file, atomically: false, encoding: .utf8)
    let password = PasswordSource.file(file)
    _ = try backup(password: password, at: 0)
    try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'secret' WHERE Z_PK = 5;")
    let child = try backup(password: password, at: 60)
    #expect(child.kind == "incremental")
    var options = RestoreOptions()
    options.password = password
    let target = directory.path("r.sqlite").path
    _ = try RestoreService.restore(
      archive: Location(path: child.archive), to: target, options: options)
    #expect(try storeRows(target) == storeRows(store))
  }

  @Test func pruneKeepsEveryParentAKeptPointNeeds() throws {
    var archives: [String] = []
    for night in 0..<4 {
      try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'n\(night)' WHERE Z_PK = 2;")
      archives.append(try backup(at: Double(night) * 86_400).archive)
    }
    var options = PruneService.Options()
    options.policy.last = 1
    let report = try PruneService.prune(folder: Location(path: vault), options: options)
    let kept = report.groups.flatMap(\.keep).map(\.archive)
    #expect(Set(kept) == Set(archives.map { URL(fileURLWithPath: $0).lastPathComponent }))
    #expect(
      report.groups.flatMap(\.keep).first {
        $0.archive.hasSuffix(URL(fileURLWithPath: archives[0]).lastPathComponent)
      }?
      .reasons == ["parent of \(URL(fileURLWithPath: archives[1]).lastPathComponent)"])
    #expect(try restoredRows(archives[3], "r.sqlite") == storeRows(store))
  }

  @Test func atATimeTheNewestPointAtOrBeforeItIsChosen() throws {
    var archives: [String] = []
    var copies: [String] = []
    for night in 0..<3 {
      try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'n\(night)' WHERE Z_PK = 2;")
      archives.append(try backup(at: Double(night) * 86_400).archive)
      copies.append(try snapshot("night-\(night).sqlite"))
    }
    func at(_ seconds: Double) throws -> String {
      try RestoreService.archive(
        in: Location(path: vault), at: Date(timeIntervalSince1970: 1_800_000_000 + seconds)
      ).description
    }
    #expect(try at(0) == archives[0])
    #expect(try at(86_400 + 3_600) == archives[1])
    #expect(try at(10 * 86_400) == archives[2])
    #expect(throws: VaultError.self) { try at(-1) }
    #expect(try restoredRows(try at(86_400), "r.sqlite") == storeRows(copies[1]))
  }

  @Test func compactWritesAFullArchiveOfTheSamePointWithoutTheStore() throws {
    for night in 0..<3 {
      try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'n\(night)' WHERE Z_PK = 2;")
      _ = try backup(at: Double(night) * 86_400)
    }
    let newest = try FileManager.default.contentsOfDirectory(atPath: vault).filter {
      $0.hasSuffix(".gvault")
    }.sorted().last!
    let copy = try snapshot("copy.sqlite")
    // The store is gone: the chain is all there is.
    try FileManager.default.removeItem(atPath: store)
    var options = CompactService.Options()
    options.output = Location(path: directory.path("compacted.gvault").path)
    let result = try CompactService.compact(
      archive: Location(path: vault + "/" + newest), options: options)
    #expect(result.kind == "full")
    #expect(result.objects.values.reduce(0, +) == 600)
    #expect(try restoredRows(result.archive, "r.sqlite") == storeRows(copy))
    let chain = try ListService.list(Location(path: vault + "/" + newest))[0]
    let compacted = try ListService.list(Location(path: result.archive))[0]
    #expect(compacted.created == chain.created && compacted.source == chain.source)
    #expect(compacted.kind == "full")
  }

  @Test func listShowsEachArchivesKindParentAndDepth() throws {
    let full = try backup(at: 0)
    try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'x' WHERE Z_PK = 3;")
    _ = try backup(at: 60)
    let summaries = try ListService.list(Location(path: vault), password: nil)
    #expect(summaries.map(\.kind) == ["incremental", "full"])
    #expect(summaries.map(\.depth) == [1, 0])
    #expect(summaries[0].parent == URL(fileURLWithPath: full.archive).lastPathComponent)
  }
}

/// The ladder a watching backup builds its points on.
@Suite("The watch's ladder")
struct WatchLadderTests {
  @Test func pointsBuildOnTheirHoursFirstHoursOnTheirDaysFirstDaysOnTheWeeksFull() {
    var ladder = WatchLadder()
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    var depths: [String: Int] = [:]
    var longest = 0
    // Every ten minutes for ten days.
    for step in 0..<(10 * 24 * 6) {
      let now = start.addingTimeInterval(Double(step) * 600)
      let (parent, rung) = ladder.next(at: now)
      let name = "p\(step)"
      let depth = parent.map { depths[$0]! + 1 } ?? 0
      #expect(depth == rung)
      depths[name] = depth
      longest = max(longest, depth)
      ladder.record(name, created: now, rung: rung)
    }
    #expect(longest == 3)
    // A full archive a week; a day's first point each day; an hour's first each hour.
    #expect(depths.values.filter { $0 == 0 }.count == 2)
    #expect(depths.values.filter { $0 == 1 }.count == 10)
    #expect(depths.values.filter { $0 == 2 }.count == 10 * 24)
  }

  @Test func aFullArchiveWrittenInsteadRestartsTheLadder() {
    var ladder = WatchLadder()
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    ladder.record("full", created: now, rung: 0)
    ladder.record("day", created: now.addingTimeInterval(60), rung: 1)
    #expect(ladder.next(at: now.addingTimeInterval(120)).parent == "day")
    // The backup could not build on "day" and wrote a full archive.
    ladder.record("again", created: now.addingTimeInterval(180), rung: 0)
    #expect(ladder.next(at: now.addingTimeInterval(240)) == ("again", 1))
  }
}
