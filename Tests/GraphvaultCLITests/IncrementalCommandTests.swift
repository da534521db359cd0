import Foundation
import TestSupport
import Testing

/// `graphvault backup --incremental` and the commands that read its archives, through the
/// built binary, as a cron job and a person restoring by hand meet them.
@Suite("Incremental backups on the command line")
struct IncrementalCommandTests {
  let workspace: CronWorkspace
  let store: String
  let folder: String

  init() throws {
    workspace = try CronWorkspace()
    store = try workspace.sampleStore(objects: 800)
    folder = workspace.path("nightly")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
  }

  /// `backup --incremental` into the folder at `time`, as JSON.
  func backup(_ time: String, _ extra: [String] = []) throws -> [String: Any] {
    let result = try BuiltTool.run(
      ["backup", store, "--output", folder + "/", "--incremental", "--json", "--time", time]
        + extra)
    #expect(result.status == 0, "\(result.stderr)")
    return try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
  }

  @Test func aNightlyIncrementalRestoresVerifiesAndListsAsAFullArchiveDoes() throws {
    let full = try backup("2026-11-01T03:00:00Z")
    #expect(full["kind"] as? String == "full")
    #expect((full["fullBecause"] as? String)?.contains("no archive of this store") == true)
    try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'changed' WHERE Z_PK = 4;")
    let night = try backup("2026-11-02T03:00:00Z")
    #expect(night["kind"] as? String == "incremental")
    #expect(night["depth"] as? Int == 1)
    let fullName = URL(fileURLWithPath: full["archive"] as! String).lastPathComponent
    #expect(night["parent"] as? String == fullName)
    let archive = night["archive"] as! String
    // Private, as every archive.
    let mode = try FileManager.default.attributesOfItem(atPath: archive)[.posixPermissions]
    #expect(mode as? Int == 0o600)

    #expect(try BuiltTool.run(["verify", archive]).status == 0)
    let restored = workspace.path("Restored.sqlite")
    let restore = try BuiltTool.run(["restore", archive, "--to", restored])
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(try storeRows(restored) == storeRows(store))

    let list = try BuiltTool.run(["list", folder])
    let lines = list.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 2)
    #expect(lines[0].contains("  incr+1  ") && lines[1].contains("  full  "), "\(lines)")
    let one = try BuiltTool.run(["list", archive])
    #expect(one.stdout.contains("its parent is \(fullName)"))
    // A point of a chain compares, and merges back, as a full archive does.
    let diff = try BuiltTool.run(["diff", full["archive"] as! String, archive])
    #expect(diff.status == 1)
    #expect(diff.stdout.contains("changed"), "\(diff.stdout)")
    let merge = try BuiltTool.run([
      "merge", archive, "--into", workspace.path("Restored.sqlite"), "--entity", "Book",
      "--where", "title == 'changed'", "--dry-run",
    ])
    #expect(merge.status == 0, "\(merge.stderr)")
    let find = try BuiltTool.run([
      "find", folder, "--entity", "Book", "--where", "title == 'changed'", "--json",
    ])
    #expect(find.status == 0, "\(find.stderr)")
    #expect(find.stdout.contains(URL(fileURLWithPath: archive).lastPathComponent))
    let fixture = workspace.path("fixture.gvault")
    let cut = try BuiltTool.run([
      "fixture", archive, "--entity", "Book", "--where", "title == 'changed'", "--output", fixture,
    ])
    #expect(cut.status == 0, "\(cut.stderr)")
  }

  @Test func aMissingParentExits65NamingItAndRestoresNothing() throws {
    let full = try backup("2026-11-01T03:00:00Z")
    try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'changed' WHERE Z_PK = 4;")
    let night = try backup("2026-11-02T03:00:00Z")
    try FileManager.default.removeItem(atPath: full["archive"] as! String)
    let restored = workspace.path("Restored.sqlite")
    let restore = try BuiltTool.run(["restore", night["archive"] as! String, "--to", restored])
    #expect(restore.status == 65)
    let fullName = URL(fileURLWithPath: full["archive"] as! String).lastPathComponent
    #expect(restore.stderr.contains(fullName) && restore.stderr.contains("missing"))
    #expect(!FileManager.default.fileExists(atPath: restored))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: workspace.directory.url.path)
        .filter { $0.contains("Restored") }.isEmpty)
    #expect(try BuiltTool.run(["verify", night["archive"] as! String]).status == 65)
  }

  @Test func restoreAtATimeTakesTheNewestPointBeforeItAndAsksWhichStore() throws {
    _ = try backup("2026-11-01T03:00:00Z")
    try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'second night' WHERE Z_PK = 4;")
    let second = try backup("2026-11-02T03:00:00Z")
    let copy = workspace.path("copy.sqlite")
    try sqlScript(store, "VACUUM INTO '\(copy)'")
    try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'third night' WHERE Z_PK = 4;")
    _ = try backup("2026-11-03T03:00:00Z")
    let restored = workspace.path("AtTime.sqlite")
    let restore = try BuiltTool.run([
      "restore", folder, "--at", "2026-11-02T12:00:00+01:00", "--to", restored, "--json",
    ])
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(restore.stdout.contains(second["archive"] as! String))
    #expect(try storeRows(restored) == storeRows(copy))
    // Another store's archives in the folder: which one is meant must be said.
    let other = try workspace.sampleStore("Other.sqlite", objects: 100)
    #expect(
      try BuiltTool.run(["backup", other, "--output", folder + "/", "-q"]).status == 0)
    let ambiguous = try BuiltTool.run([
      "restore", folder, "--at", "2026-11-02T12:00:00Z", "--to", workspace.path("x.sqlite"),
    ])
    #expect(ambiguous.status == 64)
    #expect(ambiguous.stderr.contains("--store"))
    let named = try BuiltTool.run([
      "restore", folder, "--at", "2026-11-02T12:00:00Z", "--store", "Library", "--to",
      workspace.path("y.sqlite"), "-q",
    ])
    #expect(named.status == 0, "\(named.stderr)")
    let before = try BuiltTool.run([
      "restore", folder, "--at", "2020-01-01T00:00:00Z", "--store", "Library", "--to",
      workspace.path("z.sqlite"),
    ])
    #expect(before.status == 66)
  }

  @Test func incrementalOptionsThatCannotWorkAreUsageErrors() throws {
    let stream = try BuiltTool.run(["backup", store, "--output", "-", "--incremental"])
    #expect(stream.status == 64)
    #expect(stream.stderr.contains("standard output"))
    let every = try BuiltTool.run(["backup", store, "--output", folder, "--full-every", "7"])
    #expect(every.status == 64)
    let old = try BuiltTool.run([
      "backup", store, "--output", folder, "--incremental", "--format-version", "2",
    ])
    #expect(old.status == 64)
    #expect(old.stderr.contains("format 3"))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder).filter {
        !$0.hasPrefix(".")
      }.isEmpty)
  }

  @Test(.enabled(if: MotoServer.isAvailable, MotoServer.skipNote))
  func aChainInABucketRestoresAndPruneKeepsItsParents() throws {
    let moto = try MotoServer()
    try moto.createBucket("backups")
    let env = moto.environment()
    let prefix = "s3://backups/app/"
    var archives: [String] = []
    for night in 1...3 {
      try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'night \(night)' WHERE Z_PK = 4;")
      let result = try BuiltTool.run(
        [
          "backup", store, "--output", prefix, "--incremental", "--time",
          "2026-11-0\(night)T03:00:00Z",
        ], environment: env)
      #expect(result.status == 0, "\(result.stderr)")
      archives.append(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    let restored = workspace.path("FromBucket.sqlite")
    let restore = try BuiltTool.run(
      ["restore", archives[2], "--to", restored], environment: env)
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(try storeRows(restored) == storeRows(store))
    let prune = try BuiltTool.run(
      ["prune", prefix, "--keep-last", "1", "--json"], environment: env)
    #expect(prune.status == 0, "\(prune.stderr)")
    #expect(try moto.archiveKeys("backups").count == 3)
  }
}

/// `graphvault backup --watch`: a service that backs up each change and asks nothing while the
/// store is idle.
@Suite("Watching a store")
struct WatchCommandTests {
  @Test func eachCommitOfAWriterIsInAnArchiveAndSigtermStopsTheWatchCleanly() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 400)
    let folder = workspace.path("live")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let watch = try BuiltTool.start(["backup", store, "--output", folder + "/", "--watch", "1"])
    func archives() -> [String] {
      ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
        .filter { $0.hasSuffix(".gvault") }.sorted()
    }
    #expect(RunningProcess.eventually(within: 120) { archives().count == 1 })
    // An app's commits, a second and a half apart.
    let writer = try Subprocess.python(
      """
      import sqlite3, sys, time
      for n in range(4):
          c = sqlite3.connect(sys.argv[1])
          c.execute("UPDATE ZBOOK SET ZTITLE = ? WHERE Z_PK = 3", ("commit %d" % n,))
          c.commit()
          c.close()
          time.sleep(1.5)
      """, [store])
    #expect(writer.status == 0, "\(writer.stderr)")
    let copy = workspace.path("copy.sqlite")
    try sqlScript(store, "VACUUM INTO '\(copy)'")
    // The last commit reaches an archive: the newest restores as the store is now.
    var restoredEqual = false
    _ = RunningProcess.eventually(within: 120) {
      let target = workspace.path("restored-\(UUID().uuidString).sqlite")
      guard let newest = archives().last,
        (try? BuiltTool.run(["restore", folder + "/" + newest, "--to", target, "-q"]))?.status
          == 0
      else { return false }
      restoredEqual = (try? storeRows(target)) == (try? storeRows(copy))
      return restoredEqual
    }
    #expect(restoredEqual)
    #expect(archives().count >= 2)
    watch.send(SIGTERM)
    let ended = watch.wait()
    #expect(ended.status == 0, "\(ended.stderr)")
    // Nothing half-written is left, and every archive printed is there.
    let printed = ended.stdout.split(separator: "\n").map {
      URL(fileURLWithPath: String($0)).lastPathComponent
    }
    #expect(printed == archives())
    // On the ladder: no chain deeper than an hour's first point and the points on it.
    let list = try BuiltTool.run(["list", folder, "--json"])
    let summaries = try #require(
      try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [[String: Any]])
    #expect(summaries.allSatisfy { ($0["depth"] as? Int ?? 9) <= 3 }, "\(list.stdout)")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder).filter {
        $0.contains(".tmp-")
      }.isEmpty)
  }

  @Test(.enabled(if: MotoServer.isAvailable, MotoServer.skipNote))
  func anIdleStoreCostsNoObjectStorageRequest() throws {
    let moto = try MotoServer()
    try moto.createBucket("live")
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 200)
    let watch = try RunningProcess(
      BuiltTool.path, ["backup", store, "--output", "s3://live/app/", "--watch", "1"],
      environment: moto.environment())
    func archives() -> Int {
      ((try? moto.archiveKeys("live")) ?? []).count
    }
    #expect(RunningProcess.eventually(within: 120) { archives() == 1 })
    // The first backup's locks released, then idle for several intervals: not one request.
    sleep(2)
    try moto.startRecording()
    sleep(4)
    #expect(try moto.recordedRequests() == 0)
    // A change: the next interval writes it.
    try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'seen' WHERE Z_PK = 2;")
    #expect(RunningProcess.eventually(within: 120) { archives() == 2 })
    watch.send(SIGTERM)
    #expect(watch.wait().status == 0)
  }
}
