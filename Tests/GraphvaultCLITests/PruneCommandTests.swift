import Foundation
import TestSupport
import Testing

@Suite("graphvault prune")
struct PruneCommandTests {
  /// restic's `forget` policy, written again in Python from restic's documentation (not from
  /// the code under test): archives newest first; keep-last; each period keeps an archive whose
  /// period differs from the one it kept before, until its count is used; keep-within relative
  /// to the newest (Go's AddDate, strictly after); the oldest stays when a period policy found
  /// fewer periods than its count. Reads {"archives": [{name, created, source}], "policy": …};
  /// prints {name: reasons} of the archives kept.
  static let referencePolicy = """
    import json, sys, datetime
    spec = json.load(sys.stdin)
    policy = spec["policy"]
    def when(text): return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    def period(kind, t):
        if kind == "hourly": return (t.year, t.month, t.day, t.hour)
        if kind == "daily": return (t.year, t.month, t.day)
        if kind == "weekly": return tuple(t.isocalendar()[:2])
        if kind == "monthly": return (t.year, t.month)
        return (t.year,)
    def back(t, span):
        y, m, d, h = span
        month = t.month - 1 - m
        year = t.year - y + month // 12
        first = t.replace(year=year, month=month % 12 + 1, day=1)
        return first + datetime.timedelta(days=t.day - 1 - d, hours=-h)
    kept = {}
    groups = {}
    for a in spec["archives"]: groups.setdefault(a["source"], []).append(a)
    for archives in groups.values():
        archives.sort(key=lambda a: when(a["created"]), reverse=True)
        newest = when(archives[0]["created"])
        cutoff = back(newest, policy["within"]) if policy.get("within") else None
        left = {k: policy.get(k, 0) for k in ["hourly", "daily", "weekly", "monthly", "yearly"]}
        previous = {}
        last = 0
        for a in archives:
            t = when(a["created"])
            reasons = []
            if last < policy.get("last", 0):
                last += 1
                reasons.append("last")
            for kind in ["hourly", "daily", "weekly", "monthly", "yearly"]:
                if left[kind] > 0 and period(kind, t) != previous.get(kind):
                    previous[kind] = period(kind, t)
                    left[kind] -= 1
                    reasons.append(kind)
            if cutoff is not None and t > cutoff:
                reasons.append("within")
            if reasons: kept[a["name"]] = reasons
        oldest = archives[-1]["name"]
        for kind in ["hourly", "daily", "weekly", "monthly", "yearly"]:
            if left[kind] > 0 and kind not in kept.get(oldest, []):
                kept.setdefault(oldest, []).append("oldest " + kind)
    print(json.dumps(kept))
    """

  /// Archive times spread over two years, with clusters inside one hour and one day.
  static func times(count: Int, from start: Date) -> [Date] {
    let gaps: [Double] = [
      600, 3_000, 3 * 3_600, 20 * 3_600, 2 * 86_400, 6 * 86_400, 13 * 86_400, 27 * 86_400,
      40 * 86_400, 9 * 86_400,
    ]
    var state: UInt64 = 42
    var time = start
    var times: [Date] = []
    for _ in 0..<count {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      time = time.addingTimeInterval(gaps[Int(state >> 33) % gaps.count])
      times.append(time)
    }
    return times
  }

  static func iso(_ date: Date) -> String {
    let formatter = ISO8601DateFormatter()
    return formatter.string(from: date)
  }

  /// A folder of archives of two stores made with `--time` over two years.
  static func folderOfArchives(_ workspace: CronWorkspace) throws -> [[String: Any]] {
    let library = try workspace.emptyStore("Library.sqlite")
    let journal = try workspace.emptyStore("Journal.sqlite")
    let start = Date(timeIntervalSince1970: 1_733_011_200)  // 2024-12-01
    for time in times(count: 44, from: start) {
      try workspace.backup(library, ["--time", iso(time)])
    }
    for time in times(count: 5, from: start.addingTimeInterval(100 * 86_400)) {
      try workspace.backup(journal, ["--time", iso(time)])
    }
    let list = try BuiltTool.run(["list", workspace.backups, "--json"])
    let summaries = try #require(
      JSONSerialization.jsonObject(with: Data(list.stdoutBytes)) as? [[String: Any]])
    #expect(summaries.count == 49)
    return summaries.map {
      [
        "name": URL(fileURLWithPath: $0["archive"] as! String).lastPathComponent,
        "created": $0["created"] as! String, "source": $0["source"] as! String,
      ]
    }
  }

  /// What prune --json reports as kept: name → reasons.
  static func kept(_ report: [String: Any]) -> [String: [String]] {
    var kept: [String: [String]] = [:]
    for group in report["groups"] as? [[String: Any]] ?? [] {
      for entry in group["keep"] as? [[String: Any]] ?? [] {
        kept[entry["archive"] as! String] = entry["reasons"] as? [String]
      }
    }
    return kept
  }

  @Test func pruneKeepsExactlyWhatAnIndependentImplementationOfResticsPolicyKeeps() throws {
    let workspace = try CronWorkspace()
    let archives = try Self.folderOfArchives(workspace)
    let policies: [([String], [String: Any])] = [
      (
        [
          "--keep-last", "2", "--keep-hourly", "3", "--keep-daily", "5", "--keep-weekly", "4",
          "--keep-monthly", "6", "--keep-yearly", "3",
        ],
        ["last": 2, "hourly": 3, "daily": 5, "weekly": 4, "monthly": 6, "yearly": 3]
      ),
      (["--keep-within", "5m10d5h"], ["within": [0, 5, 10, 5]]),
      (["--keep-monthly", "40"], ["monthly": 40]),
      (["--keep-weekly", "3", "--keep-within", "3m"], ["weekly": 3, "within": [0, 3, 0, 0]]),
    ]
    for (arguments, policy) in policies {
      let result = try BuiltTool.run(
        ["prune", workspace.backups, "--dry-run", "--json"] + arguments)
      #expect(result.status == 0, "\(result.stderr)")
      let spec = try JSONSerialization.data(withJSONObject: [
        "archives": archives, "policy": policy,
      ])
      let reference = try Subprocess.python(Self.referencePolicy, input: [UInt8](spec))
      #expect(reference.status == 0, "\(reference.stderr)")
      let expected = try #require(
        JSONSerialization.jsonObject(with: Data(reference.stdoutBytes)) as? [String: [String]])
      #expect(Self.kept(try CronWorkspace.json(result)) == expected, "\(arguments)")
      #expect(expected.count < archives.count, "\(arguments) keeps everything")
    }
    #expect(try workspace.archives().count == 49, "a dry run removes nothing")

    // The real run removes exactly what the reference does not keep, in each group.
    let result = try BuiltTool.run(
      ["prune", workspace.backups, "--keep-daily", "4", "--keep-monthly", "3", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let spec = try JSONSerialization.data(withJSONObject: [
      "archives": archives, "policy": ["daily": 4, "monthly": 3],
    ])
    let reference = try Subprocess.python(Self.referencePolicy, input: [UInt8](spec))
    let expected = try #require(
      JSONSerialization.jsonObject(with: Data(reference.stdoutBytes)) as? [String: [String]])
    #expect(try workspace.archives() == expected.keys.sorted())
    let groups = try CronWorkspace.json(result)["groups"] as? [[String: Any]]
    #expect(groups?.count == 2)
  }

  @Test func aTruncatedNewestArchiveNeverCountsAndTheLastGoodOneStays() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore()
    try workspace.backup(store, ["--time", "2026-01-01T03:00:00Z"])
    let good = try workspace.backup(store, ["--time", "2026-01-02T03:00:00Z"])
    let newest = try workspace.backup(store, ["--time", "2026-01-03T03:00:00Z"])
    let size = try FileManager.default.attributesOfItem(atPath: newest)[.size] as! Int
    truncate(newest, off_t(size / 2))

    let result = try BuiltTool.run(["prune", workspace.backups, "--keep-last", "1", "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let report = try CronWorkspace.json(result)
    #expect(Array(Self.kept(report).keys) == [URL(fileURLWithPath: good).lastPathComponent])
    let unusable = report["unusable"] as? [[String: Any]]
    #expect(
      unusable?.first?["archive"] as? String == URL(fileURLWithPath: newest).lastPathComponent)
    #expect(
      try workspace.archives() == [
        URL(fileURLWithPath: good).lastPathComponent,
        URL(fileURLWithPath: newest).lastPathComponent,
      ])
    let text = try BuiltTool.run(["prune", workspace.backups, "--keep-last", "1"])
    #expect(text.stdout.contains("unusable (kept, not counted)"))
    #expect(text.stdout.contains("(last)"))
  }

  @Test func aPruneDecidesFromHeadersAndIndexesAndReadDataReadsEverything() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 20_000)
    var archives: [String] = []
    for day in 1...3 {
      archives.append(try workspace.backup(store, ["--time", "2026-01-0\(day)T03:00:00Z"]))
    }
    let total = try archives.reduce(0) {
      $0 + (try FileManager.default.attributesOfItem(atPath: $1)[.size] as! Int)
    }
    // A byte of the newest's data changed: only reading its data finds it.
    var bytes = try Data(contentsOf: URL(fileURLWithPath: archives[2]))
    bytes[bytes.count / 2] ^= 0xFF
    try bytes.write(to: URL(fileURLWithPath: archives[2]))
    let name = { (path: String) in URL(fileURLWithPath: path).lastPathComponent }

    let light = try BuiltTool.run([
      "prune", workspace.backups, "--keep-last", "1", "--dry-run", "--json",
    ])
    #expect(light.status == 0, "\(light.stderr)")
    let lightReport = try CronWorkspace.json(light)
    let read = lightReport["bytesRead"] as? Int ?? -1
    #expect(read > 0 && read * 50 < total, "read \(read) of \(total)")
    #expect(Array(Self.kept(lightReport).keys) == [name(archives[2])])

    let thorough = try BuiltTool.run([
      "prune", workspace.backups, "--keep-last", "1", "--dry-run", "--read-data", "--json",
    ])
    #expect(thorough.status == 0, "\(thorough.stderr)")
    let report = try CronWorkspace.json(thorough)
    // The intact archives were read whole (the damaged one until its damage).
    #expect((report["bytesRead"] as? Int ?? 0) >= total - bytes.count)
    #expect(Array(Self.kept(report).keys) == [name(archives[1])])
    let unusable = report["unusable"] as? [[String: Any]]
    #expect(unusable?.compactMap { $0["archive"] as? String } == [name(archives[2])])
  }

  @Test func aPlantedPlainArchiveDatedInTheFutureNeverMakesAPruneWithAPasswordRemoveAnything()
    throws
  {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore()
    let password = try workspace.passwordFile("right")
    var encrypted: [String] = []
    for day in 1...3 {
      let archive = try workspace.backup(
        store, ["--password-file", password, "--time", "2026-01-0\(day)T03:00:00Z"])
      encrypted.append(URL(fileURLWithPath: archive).lastPathComponent)
    }
    // Anyone who can write to the folder can add a plain archive of the same store, dated as
    // they like; and a backup made with another password lands beside the others when the
    // change is said to be meant.
    let other = URL(
      fileURLWithPath: try workspace.backup(
        store,
        [
          "--password-file", try workspace.passwordFile("other", name: "other"),
          "--time", "2026-01-04T03:00:00Z", "--new-password",
        ])
    ).lastPathComponent
    let planted = URL(
      fileURLWithPath: try workspace.backup(
        store, ["--time", "2099-01-01T03:00:00Z", "--new-password"])
    ).lastPathComponent

    let result = try BuiltTool.run([
      "prune", workspace.backups, "--keep-last", "1", "--password-file", password, "--json",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let report = try CronWorkspace.json(result)
    #expect(Array(Self.kept(report).keys) == [encrypted[2]])
    let notOpened = (report["notOpened"] as? [[String: Any]])?.compactMap {
      $0["archive"] as? String
    }
    #expect(notOpened?.sorted() == [other, planted].sorted())
    #expect(try workspace.archives().sorted() == [encrypted[2], other, planted].sorted())

    let text = try BuiltTool.run([
      "prune", workspace.backups, "--keep-last", "1", "--password-file", password, "--dry-run",
    ])
    #expect(text.stdout.contains("not opened by the password (kept, not counted): \(planted)"))
  }

  @Test func aPasswordThatOpensNoArchiveOfTheFolderIsSeventySevenAndRemovesNothing() throws {
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore()
    let password = try workspace.passwordFile("right")
    for day in 1...2 {
      try workspace.backup(
        store, ["--password-file", password, "--time", "2026-01-0\(day)T03:00:00Z"])
    }
    let before = try workspace.archives()
    let wrong = try workspace.passwordFile("wrong", name: "wrong")
    let result = try BuiltTool.run([
      "prune", workspace.backups, "--keep-last", "1", "--password-file", wrong,
    ])
    #expect(result.status == 77, "\(result.stderr)")
    #expect(result.stderr.contains("the password opens none of the folder's 2 archive(s)"))
    #expect(try workspace.archives() == before)
  }

  @Test func badPoliciesAreUsageErrors() throws {
    let workspace = try CronWorkspace()
    for (arguments, message) in [
      (["--keep-daily", "-1"], "--keep-daily -1: a count must be 0 or more"),
      (["--keep-within", "3x"], "--keep-within 3x is not a span"),
      (["--keep-within", "1d2y"], "--keep-within 1d2y is not a span"),
      ([], "give at least one --keep-* option"),
      (["--keep-last", "0"], "give at least one --keep-* option"),
    ] {
      let result = try BuiltTool.run(["prune", workspace.backups] + arguments)
      #expect(result.status == 64, "\(arguments)")
      #expect(result.stderr.contains(message), "\(result.stderr)")
    }
    let missing = try BuiltTool.run(["prune", workspace.path("nowhere"), "--keep-last", "1"])
    #expect(missing.status == 66)
  }
}
