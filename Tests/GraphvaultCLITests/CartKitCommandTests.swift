import Foundation
import TestSupport
import Testing

/// The built binary on CartKit's real stores (`../shared/fixtures/swiftdata`): a SwiftData
/// store (framework 1523, its model only in `Z_MODELCACHE`, history on) merged back into, and
/// a Core Data store of the same app taken into the app's later `.xcdatamodeld`, which is no
/// version set, by an inferred hop. Stores are read back with Python's sqlite3.
@Suite(
  "CartKit's real SwiftData and Core Data stores",
  .enabled(if: CartKit.isAvailable, CartKit.skipNote),
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct CartKitCommandTests {
  let workspace: TemporaryDirectory

  init() throws { workspace = try TemporaryDirectory() }

  @Test func aDeletedCartMergesBackWithEveryColumnAndAHistoryRow() throws {
    let store = try CartKit.copy(CartKit.swiftDataStore, into: workspace).path
    let archive = workspace.path("cart.gvault").path
    let backup = try BuiltTool.run(["backup", store, "--output", archive, "-q"])
    #expect(backup.status == 0, "\(backup.stderr)")
    let row = "SELECT * FROM ZCARTMODEL ORDER BY Z_PK"
    let before = try sqlRows(store, row)
    #expect(before.count == 1)
    let deleted = try Subprocess.python(
      "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nc.execute('DELETE FROM ZCARTMODEL')\nc.commit()",
      [store])
    #expect(deleted.status == 0, "\(deleted.stderr)")

    let merged = try BuiltTool.run([
      "merge", archive, "--into", store, "--entity", "CartModel", "--json",
    ])
    #expect(merged.status == 0, "\(merged.stderr)")
    #expect(try sqlRows(store, row) == before)
    // The app's history reader finds the cart inserted by graphvault.
    #expect(
      try sqlRows(
        store,
        """
        SELECT c.ZCHANGETYPE, c.ZENTITYPK, s.ZNAME FROM ACHANGE c
        JOIN ATRANSACTION t ON t.Z_PK = c.ZTRANSACTIONID
        JOIN ATRANSACTIONSTRING s ON s.Z_PK = t.ZAUTHORTS
        """) == ["0|1|graphvault"])
  }

  @Test func anIncrementalChainOfTheSwiftDataStoreKeepsItsCompositeValuesAndHistory() throws {
    let store = try CartKit.copy(CartKit.swiftDataStore, into: workspace).path
    let folder = workspace.path("nightly").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    func backup(_ time: String) throws -> String {
      let result = try BuiltTool.run([
        "backup", store, "--output", folder + "/", "--incremental", "--time", time, "--json",
      ])
      #expect(result.status == 0, "\(result.stderr)")
      let document = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
      let fields = try #require(document as? [String: Any])
      return try #require(fields["archive"] as? String)
    }
    func snapshot(_ name: String) throws -> String {
      let copy = workspace.path(name).path
      try sqlScript(store, "VACUUM INTO '\(copy)'")
      return copy
    }
    let first = try backup("2026-11-01T03:00:00Z")
    // A composite's element and a string changed without a Z_OPT bump, as a script would.
    try sqlScript(
      store, "UPDATE ZCARTMODEL SET ZMINSUBTOTALAMOUNT = 12.5, ZDISPLAYNAME = 'renamed';")
    let second = try backup("2026-11-02T03:00:00Z")
    let secondCopy = try snapshot("second.sqlite")
    // The cart deleted and merged back from the first night: new history rows.
    try sqlScript(store, "DELETE FROM ZCARTMODEL;")
    let merged = try BuiltTool.run([
      "merge", first, "--into", store, "--entity", "CartModel", "-q",
    ])
    #expect(merged.status == 0, "\(merged.stderr)")
    let third = try backup("2026-11-03T03:00:00Z")
    let thirdCopy = try snapshot("third.sqlite")
    let list = try BuiltTool.run(["list", folder, "--json"])
    let kinds = try #require(
      try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]]
    ).compactMap { $0["kind"] as? String }
    #expect(kinds == ["incremental", "incremental", "full"])
    for (archive, copy) in [(second, secondCopy), (third, thirdCopy)] {
      let restored = workspace.path("restored-\(UUID().uuidString).sqlite").path
      let restore = try BuiltTool.run(["restore", archive, "--to", restored, "-q"])
      #expect(restore.status == 0, "\(restore.stderr)")
      #expect(try storeRows(restored) == storeRows(copy), "\(archive)")
    }
    #expect(try sqlRows(thirdCopy, "SELECT count(*) FROM ACHANGE")[0] != "0")
  }

  @Test func theCoreDataStoreGoesIntoTheAppsLaterModelByAnInferredHop() throws {
    let store = try CartKit.copy(CartKit.coreDataStore, into: workspace).path
    let archive = workspace.path("cart.gvault").path
    let backup = try BuiltTool.run(["backup", store, "--output", archive, "-q"])
    #expect(backup.status == 0, "\(backup.stderr)")
    let restored = workspace.path("restored.sqlite").path
    let restore = try BuiltTool.run([
      "restore", archive, "--to", restored, "--model", CartKit.laterModel, "--json",
    ])
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(restore.stdout.contains("the archive's model"), "\(restore.stdout)")
    // The columns the later model added are there, the cart's values kept.
    let values = "SELECT ZID, ZSTATUS, ZSTOREID, ZCREATEDAT FROM ZCDCART"
    #expect(try sqlRows(restored, values) == (try sqlRows(store, values)))
    #expect(
      try sqlRows(restored, "SELECT ZSESSIONID, ZPROMOTIONKINDSJSON FROM ZCDCART") == [
        "None|None"
      ])

    // In place, as the app would at launch; then the two compare without a migration.
    let migrated = try CartKit.copy(CartKit.coreDataStore, into: workspace, as: "inplace")
    let migrate = try BuiltTool.run(["migrate", migrated.path, "--model", CartKit.laterModel])
    #expect(migrate.status == 0, "\(migrate.stderr)")
    #expect(migrate.stdout.contains("the model of inplace.sqlite"), "\(migrate.stdout)")
    let diff = try BuiltTool.run(["diff", migrated.path, restored, "--json"])
    #expect(diff.status == 0, "\(diff.stdout)\(diff.stderr)")
    #expect(!diff.stdout.contains("\"migrated\" : \""), "\(diff.stdout)")
  }
}

/// Where CartKit's stores are, below `../shared/fixtures/swiftdata`.
enum CartKit {
  static let root = SharedFixtures.sharedRoot.appendingPathComponent("fixtures/swiftdata/CartKit")
  static let swiftDataStore =
    "Tests/CartKitStorageSwiftDataTests/LegacySwiftData/CartKitSwiftData_v1.sqlite"
  static let coreDataStore =
    "Tests/CartKitStorageCoreDataTests/LegacyCoreData/CartStorage_v1.sqlite"
  static let laterModel = root.appendingPathComponent(
    "Sources/CartKitStorageCoreData/Resources/CartStorage.xcdatamodeld"
  ).path

  static let isAvailable = FileManager.default.fileExists(
    atPath: root.appendingPathComponent(swiftDataStore).path)
  static let skipNote: Comment =
    "needs ../shared/fixtures/swiftdata beside the package (or GRAPHVAULT_SHARED); absent here"

  /// A writable copy of a store with its `-wal` and `-shm`, named `name` (else as it is).
  static func copy(
    _ relativePath: String, into directory: TemporaryDirectory, as name: String? = nil
  )
    throws -> URL
  {
    let source = root.appendingPathComponent(relativePath)
    let destination = directory.path((name.map { "\($0).sqlite" }) ?? source.lastPathComponent)
    for suffix in ["", "-wal", "-shm"]
    where FileManager.default.fileExists(atPath: source.path + suffix) {
      let copy = destination.path + suffix
      try FileManager.default.copyItem(atPath: source.path + suffix, toPath: copy)
      try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: copy)
    }
    return destination
  }
}
