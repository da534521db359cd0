import Foundation
import TestSupport
import Testing

@Suite("Backups from cron: names, modes, locks, killed runs")
struct CronBackupCommandTests {
  @Test func twoBackupsOfOneStoreInTheSameSecondBothSucceedWithNamesThatSortByTime() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.emptyStore("Library.sqlite")
    // The same recorded time: the same second and millisecond.
    let time = ["--time", "2026-03-01T03:00:00Z"]
    let first = try workspace.backup(store, time)
    let second = try workspace.backup(store, time)
    #expect(first != second)
    #expect(first.hasSuffix("Library-20260301T030000.000Z.gvault"))
    #expect(
      URL(fileURLWithPath: first).lastPathComponent < URL(fileURLWithPath: second).lastPathComponent
    )
    // And at the machine's own pace, as fast as they come.
    for _ in 0..<3 { try workspace.backup(store) }
    #expect(try workspace.archives().count == 5)
  }

  @Test func archivesArePrivateAndRestoredStoresHaveTheUsualMode() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore()
    let archive = try workspace.backup(store)
    let mode = try FileManager.default.attributesOfItem(atPath: archive)[.posixPermissions] as? Int
    #expect(mode == 0o600)
    let encrypted = try workspace.backup(
      store, ["--password-file", workspace.passwordFile("secret")])
    let encryptedMode =
      try FileManager.default.attributesOfItem(atPath: encrypted)[.posixPermissions] as? Int
    #expect(encryptedMode == 0o600)
    let restored = workspace.path("Restored.sqlite")
    let result = try BuiltTool.run(["restore", archive, "--to", restored])
    #expect(result.status == 0, "\(result.stderr)")
    let umask = Self.umask()
    let storeMode =
      try FileManager.default.attributesOfItem(atPath: restored)[.posixPermissions] as? Int
    #expect(storeMode == 0o644 & ~Int(umask))
  }

  @Test func backupTimeIsRecordedAsTheArchivesCreationTime() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.emptyStore("Library.sqlite")
    let archive = try workspace.backup(store, ["--time", "2025-06-30T23:30:00-02:00"])
    #expect(archive.hasSuffix("Library-20250701T013000.000Z.gvault"))
    let list = try BuiltTool.run(["list", archive, "--json"])
    let summaries = try #require(
      JSONSerialization.jsonObject(with: Data(list.stdoutBytes)) as? [[String: Any]])
    #expect(summaries.first?["created"] as? String == "2025-07-01T01:30:00Z")
    let bad = try BuiltTool.run(workspace.backupArguments(store, ["--time", "yesterday"]))
    #expect(bad.status == 64)
    #expect(bad.stderr.contains("--time yesterday is not an ISO 8601 time"))
  }

  @Test func anOverlappingBackupIsRefusedAsLockedAndWaitsWithWait() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 20_000)
    let other = try workspace.emptyStore("Other.sqlite")
    // The first run is stopped while it writes, holding its locks.
    let first = try BuiltTool.start(workspace.backupArguments(store))
    #expect(
      RunningProcess.eventually { !CronWorkspace.temporaries(in: workspace.backups).isEmpty })
    first.send(SIGSTOP)

    let refused = try BuiltTool.run(workspace.backupArguments(store))
    #expect(refused.status == 75)
    #expect(refused.stderr.contains("pid \(first.pid)"), "\(refused.stderr)")
    #expect(refused.stderr.contains("since "))
    // Another store into the same folder is independent.
    let independent = try BuiltTool.run(workspace.backupArguments(other))
    #expect(independent.status == 0, "\(independent.stderr)")
    // A prune of the folder waits for the backup.
    let prune = try BuiltTool.run(["prune", workspace.backups, "--keep-last", "1"])
    #expect(prune.status == 75, "\(prune.stderr)")

    let waiting = try BuiltTool.start(workspace.backupArguments(store, ["--wait", "120"]))
    usleep(300_000)
    first.send(SIGCONT)
    let firstResult = first.wait()
    let waitingResult = waiting.wait()
    #expect(firstResult.status == 0, "\(firstResult.stderr)")
    #expect(waitingResult.status == 0, "\(waitingResult.stderr)")
    #expect(firstResult.stdout != waitingResult.stdout)
    #expect(try workspace.archives().count == 3)
    #expect(CronWorkspace.temporaries(in: workspace.backups).isEmpty)
  }

  /// Starts a backup of `store` and kills it once its temporary file is there; returns the
  /// temporaries it left.
  func killedBackup(_ store: String, in workspace: CronWorkspace) throws -> [String] {
    let before = CronWorkspace.temporaries(in: workspace.backups)
    let killed = try BuiltTool.start(workspace.backupArguments(store))
    #expect(
      RunningProcess.eventually {
        CronWorkspace.temporaries(in: workspace.backups).count > before.count
      })
    killed.send(SIGKILL)
    #expect(killed.wait().status != 0)
    return CronWorkspace.temporaries(in: workspace.backups).filter { !before.contains($0) }
  }

  @Test func aBackupKilledWithSigkillBlocksNothingAndItsLeftoverGoesWithTheStoresNextBackup()
    throws
  {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 20_000)
    let other = try workspace.sampleStore("Other.sqlite", objects: 20_000)
    let leftover = try killedBackup(store, in: workspace)
    let othersLeftover = try killedBackup(other, in: workspace)
    #expect(leftover.count == 1 && othersLeftover.count == 1)
    #expect(try workspace.archives().isEmpty)

    // list shows both leftovers.
    let list = try BuiltTool.run(["list", workspace.backups, "--json"])
    let entries = try #require(
      try JSONSerialization.jsonObject(with: Data(list.stdoutBytes)) as? [[String: Any]])
    let listed = entries.filter { $0["leftover"] as? Bool == true }.compactMap {
      ($0["archive"] as? String).map { URL(fileURLWithPath: $0).lastPathComponent }
    }
    #expect(listed.sorted() == (leftover + othersLeftover).sorted())
    #expect(try BuiltTool.run(["list", workspace.backups]).stdout.contains("LEFTOVER"))

    // The next backup of the store is not blocked and removes its store's leftover only.
    try workspace.backup(store)
    #expect(try workspace.archives().count == 1)
    #expect(CronWorkspace.temporaries(in: workspace.backups) == othersLeftover)
    // Prune names the other store's leftover and removes it; the good archive stays.
    let prune = try BuiltTool.run(["prune", workspace.backups, "--keep-last", "1", "--json"])
    #expect(prune.status == 0, "\(prune.stderr)")
    let report = try CronWorkspace.json(prune)
    let names = (report["leftovers"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
    #expect(names == othersLeftover)
    #expect(CronWorkspace.temporaries(in: workspace.backups).isEmpty)
    #expect(try workspace.archives().count == 1)
  }

  @Test func anOutputFolderThatDoesNotExistIsRefusedBeforeAnyWork() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.emptyStore("Library.sqlite")
    let missing = workspace.directory.url.path + "/missing"
    for output in [missing + "/", missing + "/named.gvault"] {
      let result = try BuiltTool.run(["backup", store, "--output", output])
      #expect(result.status == 73, "\(output): \(result.stderr)")
      #expect(result.stderr.contains("no folder at"), "\(result.stderr)")
      #expect(!FileManager.default.fileExists(atPath: workspace.path("missing")))
    }
  }

  @Test func twoRestoresToOneStoreDoNotOverlapAndAKilledOnesLeftoversAreRemoved() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 20_000)
    let archive = try workspace.backup(store)
    let target = workspace.path("Restored.sqlite")
    let first = try BuiltTool.start(["restore", archive, "--to", target])
    #expect(
      RunningProcess.eventually {
        !CronWorkspace.temporaries(in: workspace.directory.url.path).isEmpty
      })
    first.send(SIGSTOP)
    let refused = try BuiltTool.run(["restore", archive, "--to", target])
    #expect(refused.status == 75)
    #expect(refused.stderr.contains("pid \(first.pid)"), "\(refused.stderr)")
    // A restore elsewhere is independent.
    let elsewhere = try BuiltTool.run(["restore", archive, "--to", workspace.path("Other.sqlite")])
    #expect(elsewhere.status == 0, "\(elsewhere.stderr)")

    first.send(SIGKILL)
    #expect(first.wait().status != 0)
    #expect(!FileManager.default.fileExists(atPath: target))
    #expect(!CronWorkspace.temporaries(in: workspace.directory.url.path).isEmpty)
    let next = try BuiltTool.run(["restore", archive, "--to", target])
    #expect(next.status == 0, "\(next.stderr)")
    #expect(CronWorkspace.temporaries(in: workspace.directory.url.path).isEmpty)
    #expect(try storeRows(target) == storeRows(store))
  }

  private static func umask() -> mode_t {
    let current = Foundation.umask(0o022)
    Foundation.umask(current)
    return current
  }
}
