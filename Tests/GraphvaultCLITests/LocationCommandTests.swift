import Foundation
import TestSupport
import Testing

/// A folder or prefix of archives behaves like a restic repository: every archive listed, one
/// password per store, one status per cause, and a check of the whole location.
@Suite("A location of archives, as a repository")
struct LocationCommandTests {
  /// The lines of a listing.
  static func lines(_ result: ProcessResult) -> [Substring] {
    result.stdout.split(separator: "\n")
  }

  /// Two plain archives of one store and three encrypted ones of another, in one folder.
  static func mixedFolder() throws -> (CronWorkspace, password: String) {
    let workspace = try CronWorkspace()
    let plain = try workspace.emptyStore("Plain.sqlite")
    let secret = try workspace.sampleStore("Secret.sqlite")
    let password = try workspace.passwordFile("right")
    for day in 1...2 { try workspace.backup(plain, ["--time", "2026-01-0\(day)T03:00:00Z"]) }
    for day in 1...3 {
      try workspace.backup(
        secret, ["--time", "2026-01-0\(day)T04:00:00Z", "--password-file", password])
    }
    return (workspace, password)
  }

  @Test func aFolderIsListedOneLineAnArchiveWhateverCanBeOpened() throws {
    let (workspace, password) = try Self.mixedFolder()

    let bare = try BuiltTool.run(["list", workspace.backups])
    #expect(bare.status == 0, "\(bare.stderr)")
    let lines = Self.lines(bare)
    #expect(lines.count == 5, "\(bare.stdout)")
    #expect(lines.filter { $0.contains("encrypted: password needed") }.count == 3)
    #expect(lines.filter { $0.contains("  complete  ") }.count == 2)
    #expect(!bare.stdout.contains("INCOMPLETE"))

    let opened = try BuiltTool.run(["list", workspace.backups, "--password-file", password])
    #expect(opened.status == 0, "\(opened.stderr)")
    #expect(Self.lines(opened).filter { $0.contains("complete, encrypted") }.count == 3)
    #expect(Self.lines(opened).count == 5)

    let wrong = try workspace.passwordFile("wrong", name: "wrong")
    let refused = try BuiltTool.run(["list", workspace.backups, "--password-file", wrong, "--json"])
    #expect(refused.status == 77, "\(refused.stderr)")
    let summaries = try #require(
      try JSONSerialization.jsonObject(with: Data(refused.stdoutBytes)) as? [[String: Any]])
    #expect(summaries.count == 5)
    #expect(summaries.filter { $0["state"] as? String == "wrong password" }.count == 3)
    #expect(summaries.filter { $0["state"] as? String == "complete" }.count == 2)
  }

  @Test func listingAFolderOfPlainArchivesReadsTheirHeadersAndIndexesOnly() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 20_000)
    for day in 1...2 { try workspace.backup(store, ["--time", "2026-01-0\(day)T03:00:00Z"]) }
    let list = try BuiltTool.run(["list", workspace.backups, "--json"])
    #expect(list.status == 0, "\(list.stderr)")
    let summaries = try #require(
      try JSONSerialization.jsonObject(with: Data(list.stdoutBytes)) as? [[String: Any]])
    #expect(summaries.count == 2)
    for summary in summaries {
      let (read, bytes) = (summary["bytesRead"] as? Int ?? -1, summary["bytes"] as? Int ?? 0)
      #expect(read > 0 && read * 50 < bytes, "read \(read) of \(bytes)")
      #expect(summary["state"] as? String == "complete")
      #expect((summary["objects"] as? [String: Int])?.values.reduce(0, +) ?? 0 > 15_000)
    }
  }

  @Test func aBackupUnderAnotherPasswordIsRefusedUntilTheChangeIsMeantAndPruneGoesOnPastIt()
    throws
  {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore()
    let first = try workspace.passwordFile("first", name: "first")
    let second = try workspace.passwordFile("second", name: "second")
    var old: [String] = []
    for day in 1...2 {
      old.append(
        try workspace.backup(
          store, ["--time", "2026-01-0\(day)T03:00:00Z", "--password-file", first]))
    }

    for extra in [["--password-file", second], []] {
      let refused = try BuiltTool.run(
        workspace.backupArguments(store, extra + ["--time", "2026-01-03T03:00:00Z", "--json"]))
      #expect(refused.status == 77, "\(refused.stderr)")
      #expect(refused.stderr.contains(old[1]), "\(refused.stderr)")
      #expect(refused.stderr.contains("--new-password"))
      #expect(try CronWorkspace.json(refused)["ok"] as? Bool == false)
    }
    #expect(try workspace.archives().count == 2)

    var rotated: [String] = []
    for day in 3...5 {
      // Only the first backup under the new password needs saying so.
      rotated.append(
        try workspace.backup(
          store,
          ["--time", "2026-01-0\(day)T03:00:00Z", "--password-file", second]
            + (day == 3 ? ["--new-password"] : [])))
    }
    let prune = try BuiltTool.run([
      "prune", workspace.backups, "--keep-last", "2", "--password-file", second, "--json",
    ])
    #expect(prune.status == 0, "\(prune.stderr)")
    let report = try CronWorkspace.json(prune)
    let notOpened = (report["notOpened"] as? [[String: Any]])?.compactMap {
      $0["archive"] as? String
    }
    #expect(Set(notOpened ?? []) == Set(old.map { URL(fileURLWithPath: $0).lastPathComponent }))
    let name = { (path: String) in URL(fileURLWithPath: path).lastPathComponent }
    #expect(try workspace.archives() == (old + rotated.suffix(2)).map(name).sorted())
  }

  @Test func everyReadingCommandGivesOneStatusPerCause() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 2_000)
    let right = try workspace.passwordFile("right")
    let wrong = try workspace.passwordFile("wrong", name: "wrong")
    let good = try workspace.backup(store, ["--password-file", right])
    let damaged = workspace.path("damaged.gvault")
    var bytes = try Data(contentsOf: URL(fileURLWithPath: good))
    bytes[bytes.count / 2] ^= 0xFF
    try bytes.write(to: URL(fileURLWithPath: damaged))
    let missing = workspace.path("missing.gvault")
    let out = workspace.path("out")

    // Each reading command, given an archive and a password.
    let commands: [(String, [String]) -> [String]] = [
      { ["verify", $0] + $1 },
      { ["list", $0] + $1 },
      { ["restore", $0, "--to", out + "-restored.sqlite"] + $1 },
      { ["export", $0, "--output", out + "-export.json"] + $1 },
      { ["find", $0, "--entity", "Book"] + $1 },
      { ["diff", $0, store] + $1 },
      { ["merge", $0, "--into", store, "--entity", "Book", "--dry-run"] + $1 },
      { ["fixture", $0, "--entity", "Book", "--output", out + "-fixture.gvault"] + $1 },
    ]
    for (input, password, status) in [
      (good, wrong, Int32(77)), (good, nil, 77), (damaged, right, 65), (missing, right, 66),
    ] {
      for command in commands {
        let arguments = command(input, password.map { ["--password-file", $0] } ?? [])
        let result = try BuiltTool.run(arguments)
        // list reads an archive's header and index, from its two ends: a damaged member
        // between them is verify's to find.
        let expected = arguments[0] == "list" && input == damaged ? 0 : status
        #expect(
          result.status == expected,
          "\(arguments.joined(separator: " ")): \(result.status) \(result.stderr)")
      }
    }
  }

  @Test func verifyOfAFolderChecksEveryArchiveAndNamesTheDamagedOne() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 1_000)
    var archives: [String] = []
    for day in 1...6 {
      archives.append(try workspace.backup(store, ["--time", "2026-01-0\(day)T03:00:00Z"]))
    }
    let clean = try BuiltTool.run(["verify", workspace.backups, "--json"])
    #expect(clean.status == 0, "\(clean.stderr)")
    let cleanReport = try CronWorkspace.json(clean)
    #expect(cleanReport["ok"] as? Bool == true)
    #expect((cleanReport["archives"] as? [[String: Any]])?.count == 6)

    // A member's bytes changed in the third archive.
    let victim = archives[2]
    var bytes = try Data(contentsOf: URL(fileURLWithPath: victim))
    bytes[bytes.count / 2] ^= 0xFF
    try bytes.write(to: URL(fileURLWithPath: victim))
    let failed = try BuiltTool.run(["verify", workspace.backups])
    #expect(failed.status == 65, "\(failed.stderr)")
    #expect(failed.stderr.contains("FAILED \(victim)"))
    #expect(failed.stderr.contains("6 archives, 5 OK, 1 FAILED"))
    let lines = Self.lines(failed)
    #expect(lines.count == 6)
    #expect(lines.filter { $0.hasPrefix("OK") }.count == 5)

    // Three runs of a subset of three read every archive whole once; the damage is found by
    // the run whose subset holds the archive, and the others still check its index.
    var readWhole: [String] = []
    var statuses: [Int32] = []
    for run in 1...3 {
      let result = try BuiltTool.run([
        "verify", workspace.backups, "--read-data-subset", "\(run)/3", "--json",
      ])
      statuses.append(result.status)
      let report = try CronWorkspace.json(result)
      #expect(report["subset"] as? String == "\(run)/3")
      let entries = try #require(report["archives"] as? [[String: Any]])
      #expect(entries.count == 6)
      readWhole += entries.filter { $0["dataChecked"] as? Bool == true }.compactMap {
        $0["archive"] as? String
      }
    }
    #expect(readWhole.sorted() == archives.sorted())
    #expect(statuses.filter { $0 == 65 }.count == 1, "\(statuses)")
    #expect(statuses.filter { $0 == 0 }.count == 2, "\(statuses)")

    let notALocation = try BuiltTool.run(["verify", archives[0], "--read-data-subset", "1/2"])
    #expect(notALocation.status == 64)
    #expect(
      try BuiltTool.run(["verify", workspace.backups, "--read-data-subset", "4/3"]).status == 64)
  }

  @Test(
    "the README's nightly recipe to S3 runs end to end: backup, list, prune, verify of the prefix",
    .enabled(if: MotoServer.isAvailable, MotoServer.skipNote))
  func theNightlyRecipeToObjectStorage() throws {
    let moto = try MotoServer()
    try moto.createBucket("acme-backups")
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 1_000)
    var env = moto.environment()
    env["GRAPHVAULT_PASSWORD_FILE"] = try workspace.passwordFile("nightly")
    let location = "s3://acme-backups/app/"
    for day in 1...5 {
      let backup = try BuiltTool.run(
        [
          "backup", "--json", "--wait", "600", store, "--model", CronWorkspace.sampleModel,
          "--output", location, "--time", "2026-01-0\(day)T03:15:00Z",
        ], environment: env)
      #expect(backup.status == 0, "\(backup.stderr)")
      #expect(try CronWorkspace.json(backup)["ok"] as? Bool == true)
    }
    let list = try BuiltTool.run(["list", location], environment: env)
    #expect(list.status == 0, "\(list.stderr)")
    #expect(Self.lines(list).count == 5, "\(list.stdout)")
    #expect(Self.lines(list).allSatisfy { $0.contains("complete, encrypted") })
    var bare = env
    bare["GRAPHVAULT_PASSWORD_FILE"] = nil
    let locked = try BuiltTool.run(["list", location], environment: bare)
    #expect(locked.status == 0, "\(locked.stderr)")
    #expect(Self.lines(locked).filter { $0.contains("encrypted: password needed") }.count == 5)

    let prune = try BuiltTool.run(
      [
        "prune", "--json", "--wait", "600", location, "--keep-daily", "3", "--keep-weekly", "5",
        "--keep-monthly", "12",
      ], environment: env)
    #expect(prune.status == 0, "\(prune.stderr)")
    // Five dailies: the three newest days stay, and, as restic keeps it while the weekly and
    // monthly counts are not filled, the oldest.
    let kept = try moto.archiveKeys("acme-backups")
    #expect(kept.count == 4, "\(kept)")

    let verify = try BuiltTool.run(["verify", location, "--json"], environment: env)
    #expect(verify.status == 0, "\(verify.stderr)")
    let report = try CronWorkspace.json(verify)
    #expect((report["archives"] as? [[String: Any]])?.count == 4)
    #expect(report["ok"] as? Bool == true)
  }
}
