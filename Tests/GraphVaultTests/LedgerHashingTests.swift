import ArchiveFormat
import Foundation
import GraphVault
import ObjectStore
import TestSupport
import Testing

/// The change ledger's sketches hashed on a second connection: the same as on one, and never
/// of another snapshot than the backup's.
@Suite("Ledger hashing on a second connection")
struct LedgerHashingTests {
  let directory: TemporaryDirectory
  let path: String

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: path, objects: 400, seed: 5)
    // A keyed table and a table without a key, besides the model's.
    try sqlScript(
      path,
      """
      CREATE TABLE EXTRA_KEYED (ID INTEGER PRIMARY KEY, NOTE TEXT);
      INSERT INTO EXTRA_KEYED (ID, NOTE) VALUES (3, 'a'), (9, 'b'), (40, 'c'), (41, NULL), (1000, 'd');
      CREATE TABLE EXTRA_LOG (WHAT TEXT, N INTEGER);
      INSERT INTO EXTRA_LOG VALUES ('x', 1), ('y', 2);
      """)
  }

  /// The store's sketches, hashed inside one read transaction of the backup's connection
  /// (`between` runs inside it, first), with `twin` when given, in parts of `keysPerPart` keys.
  func hashed(
    twin: SnapshotTwin? = nil, keysPerPart: Int64 = 5, twinFailsAfter: Int? = nil,
    between: () throws -> Void = {}
  ) throws -> LedgerHashing.Hashed {
    let store = try CoreDataStore(path: path)
    let layout = try store.layout(for: SampleLibrary.model())
    return try store.read { store in
      try between()
      // Its thread begins inside the backup's transaction, as a backup's does.
      let worker = twin.map(TwinWorker.init(twin:))
      defer { worker?.close() }
      return try LedgerHashing.sketches(
        of: try store.ledgerSets(layout: layout), cells: { _ in 96 }, seed: 77, store: store,
        twin: worker, keysPerPart: keysPerPart, twinFirst: true, twinFailsAfter: twinFailsAfter)
    }
  }

  /// The sets whose sketches or element counts differ between `a` and `b` (a short message
  /// where comparing whole sketches would print every cell).
  func differing(_ a: LedgerHashing.Hashed, _ b: LedgerHashing.Hashed) -> [String] {
    Set(a.sketches.keys).union(b.sketches.keys).filter { a.sketches[$0] != b.sketches[$0] }
      .sorted()
  }

  func twin() throws -> SnapshotTwin {
    try #require(
      SnapshotTwin(
        path: path, busyTimeout: 1, twinOf: try CoreDataStore(path: path),
        identity: StoreUsers.FileIdentity(path)))
  }

  @Test func sketchesHashedInPartsOnTwoConnectionsAreThoseOfOnePass() throws {
    let one = try hashed()
    let two = try hashed(twin: try twin())
    #expect(differing(two, one) == [])
    #expect(two.partsOnTwin > 0)
    #expect(two.parts > one.parts)
    #expect(one.parts == one.sketches.count)
    // The elements, counted by SQLite through Python: every book once, every owner of join
    // rows once, every keyed row once, a table without a key as one.
    let books = try sqlRows(path, "SELECT count(*) FROM ZBOOK")[0]
    let owners = try sqlRows(path, "SELECT count(DISTINCT Z_1BOOKS) FROM Z_1TAGS")[0]
    #expect("\(two.sketches["objects/Book"]!.elements)" == books)
    #expect("\(two.sketches["joins/Z_1TAGS"]!.elements)" == owners)
    #expect(two.sketches["tables/EXTRA_KEYED"]!.elements == 5)
    #expect(two.sketches["tables/EXTRA_LOG"]!.elements == 1)
  }

  @Test func aCommitAfterTheBackupsSnapshotBeganLeavesTheTwinOut() throws {
    let before = try hashed()
    let twin = try twin()
    let during = try hashed(twin: twin) {
      try sqlScript(path, "UPDATE ZBOOK SET ZTITLE = 'changed' WHERE Z_PK % 3 = 0")
    }
    #expect(during.partsOnTwin == 0)
    #expect(differing(during, before) == [])
    // The commit did change what is hashed: had the twin read it, the sketches would differ.
    #expect(differing(try hashed(), before) == ["objects/Book"])
  }

  @Test func aCommitBetweenTheTwinAndTheBackupsSnapshotLeavesTheTwinOut() throws {
    let twin = try twin()
    try sqlScript(path, "DELETE FROM Z_1TAGS WHERE Z_1BOOKS % 4 = 0")
    let after = try hashed(twin: twin)
    #expect(after.partsOnTwin == 0)
    #expect(differing(after, try hashed()) == [])
  }

  @Test func aTwinThatFailsPartwayHasItsPartsHashedAgainOnTheBackupsConnection() throws {
    let one = try hashed()
    // It fails after hashing its first part: its sketches hold that part, and are dropped.
    let failed = try hashed(twin: try twin(), twinFailsAfter: 1)
    #expect(failed.partsHashedAgain == 1)
    #expect(failed.partsOnTwin == 0)
    #expect(differing(failed, one) == [])
  }

  @Test func noTwinIsMadeOfAFileOtherThanTheOneTheBackupOpened() throws {
    let other = directory.path("Other.sqlite").path
    try SampleLibrary.generate(at: other, objects: 50, seed: 6)
    let backup = try CoreDataStore(path: path)
    let identity = StoreUsers.FileIdentity(path)
    #expect(SnapshotTwin(path: path, busyTimeout: 1, twinOf: backup, identity: identity) != nil)
    // The file at the path was replaced since the backup's was opened (its identity is
    // another's), or the path holds another store than the backup's.
    #expect(
      SnapshotTwin(
        path: path, busyTimeout: 1, twinOf: backup, identity: StoreUsers.FileIdentity(other))
        == nil)
    #expect(
      SnapshotTwin(
        path: other, busyTimeout: 1, twinOf: backup, identity: StoreUsers.FileIdentity(other))
        == nil)
  }

  @Test func aSetIsCutAtBoundsThatLoseNoKeyStoredOddly() throws {
    // Join rows whose owners are stored as reals (one past each book's key, so some fall
    // between a part's last integer and the next part's first), and a key at the top of the
    // 64-bit range: each is still hashed once, as one pass hashes it.
    let lastOwner = try sqlRows(path, "SELECT max(Z_1BOOKS) FROM Z_1TAGS")[0]
    try sqlScript(
      path,
      """
      INSERT INTO Z_1TAGS SELECT Z_PK + 0.5, 1 FROM ZBOOK WHERE Z_PK < \(lastOwner);
      INSERT INTO EXTRA_KEYED (ID, NOTE) VALUES (9223372036854775807, 'last');
      """)
    let one = try hashed()
    let two = try hashed(twin: try twin(), keysPerPart: 3)
    #expect(differing(two, one) == [])
    #expect(two.partsOnTwin > 0)
    // An owner missing, or stored as text, keeps the join table whole: no range holds them.
    for owner in ["NULL", "'text owner'"] {
      try sqlScript(path, "INSERT INTO Z_1TAGS VALUES (\(owner), 3)")
      let odd = try hashed(twin: try twin(), keysPerPart: 3)
      #expect(differing(odd, try hashed()) == [])
    }
  }
}
