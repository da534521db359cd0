import Foundation
import GraphVault

/// Incremental backups against full ones, in one run, per workload (library, text): a full
/// archive without a change ledger (format 2) and with one (the default format, 5: what
/// incrementals need, with text of few words coded as numbered words);
/// one night's incremental archive after about 0.1% of the objects changed (updates with and
/// without a `Z_OPT` bump, deletes, inserts, join rows), against the full's size and time;
/// then `nights` such nights, and the restore of the last point (its whole chain read) against
/// the restore of a full archive of the same state. Best of three where it says so; peak RSS
/// of the incremental backup and the chain's restore. Needs the sqlite3 command-line tool.
func incrementalBenchmark(objects: Int, nights: Int, sizes: [Int]) throws {
  print(
    "| workload | objects | full (format 2) | full (format 5) | ledger's share | incremental | size / full | time / full | chain of \(nights): restore | full's restore | chain / full | peak RSS incremental | peak RSS chain restore |"
  )
  print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (workload, size) in [(SampleWorkload.library, objects), (.text, objects)]
    + sizes.map({ (SampleWorkload.library, $0) })
  {
    try incrementalBenchmark(workload: workload, objects: size, nights: nights)
  }
}

/// One night's changes to a sample store of `workload`: about a thousandth of its objects.
private func nightlyChange(_ workload: SampleWorkload, night: Int) -> String {
  switch workload {
  case .text:
    return """
      UPDATE ZBOOK SET ZSUMMARY = ZSUMMARY || ' (revised)', Z_OPT = Z_OPT + 1
        WHERE (Z_PK * 7919 + \(night)) % 2000 = 0;
      UPDATE ZBOOK SET ZCOPIES = ZCOPIES + 1 WHERE (Z_PK * 7919 + \(night)) % 3000 = 1;
      DELETE FROM ZBOOK WHERE (Z_PK * 104729 + \(night)) % 5000 = 2;
      INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZLABEL)
        SELECT (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag') + Z_PK, Z_ENT, 1,
          'night \(night) ' || Z_PK FROM ZTAG ORDER BY Z_PK LIMIT 100;
      UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM ZTAG) WHERE Z_NAME = 'Tag';
      DELETE FROM Z_1TAGS WHERE (Z_1AUTHORS * 31 + \(night)) % 300 = 3;
      """
  default:
    return """
      UPDATE ZBOOK SET ZTITLE = ZTITLE || ' (revised)', Z_OPT = Z_OPT + 1
        WHERE (Z_PK * 7919 + \(night)) % 2000 = 0;
      UPDATE ZBOOK SET ZSALES = coalesce(ZSALES, 0) + 1 WHERE (Z_PK * 7919 + \(night)) % 3000 = 1;
      UPDATE ZPAGE SET ZNUMBER = ZNUMBER + 1 WHERE (Z_PK * 7919 + \(night)) % 3000 = 1;
      DELETE FROM ZPAGE WHERE (Z_PK * 104729 + \(night)) % 5000 = 2;
      INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME)
        SELECT (SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag') + Z_PK, Z_ENT, 1,
          'night \(night) ' || Z_PK FROM ZTAG ORDER BY Z_PK LIMIT 100;
      UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM ZTAG) WHERE Z_NAME = 'Tag';
      DELETE FROM Z_1TAGS WHERE (Z_1BOOKS * 31 + \(night)) % 3000 = 3;
      """
  }
}

private func incrementalBenchmark(workload: SampleWorkload, objects: Int, nights: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  let tool = workspace.tool
  func path(_ name: String) -> String { workspace.path(name) }
  func say(_ text: String) {
    FileHandle.standardError.write(Data("gvbench incremental: \(text)\n".utf8))
  }
  say("generating \(objects) objects (\(workload.rawValue))")
  let store = path("store.sqlite")
  try workload.generate(at: store, objects: objects)
  let chain = path("chain")
  try FileManager.default.createDirectory(atPath: chain, withIntermediateDirectories: true)
  func archives() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: chain).filter { $0.hasSuffix(".gvault") }
      .sorted()
  }
  say("full archives")
  let plain = try bestOfThree(tool) { _ in
    try? FileManager.default.removeItem(atPath: path("plain.gvault"))
    return ["backup", store, "--output", path("plain.gvault"), "--format-version", "2", "-q"]
  }
  let full = try bestOfThree(tool) { _ in
    for name in try archives() { try FileManager.default.removeItem(atPath: chain + "/" + name) }
    return ["backup", store, "--output", chain + "/", "--incremental", "-q"]
  }
  let fullName = try archives()[0]
  let plainBytes = workspace.size("plain.gvault")
  let fullBytes = workspace.size("chain/" + fullName)
  say("night 1")
  _ = try timedShell("sqlite3 '\(store)' \"\(nightlyChange(workload, night: 1))\"")
  let incremental = try bestOfThree(tool) { _ in
    for name in try archives() where name != fullName {
      try FileManager.default.removeItem(atPath: chain + "/" + name)
    }
    return ["backup", store, "--output", chain + "/", "--incremental", "-q"]
  }
  let firstIncremental = try archives().last!
  let incrementalBytes = workspace.size("chain/" + firstIncremental)
  for night in 2...max(2, nights) {
    say("night \(night)")
    _ = try timedShell("sqlite3 '\(store)' \"\(nightlyChange(workload, night: night))\"")
    let run = try runMeasured(
      tool, ["backup", store, "--output", chain + "/", "--incremental", "-q"])
    guard run.status == 0 else { throw NSError(domain: "gvbench", code: Int(run.status)) }
  }
  let names = try archives()
  guard names.count == max(2, nights) + 1, names.first == fullName else {
    throw NSError(
      domain: "gvbench", code: 1,
      userInfo: [NSLocalizedDescriptionKey: "a night wrote a full archive: \(names)"])
  }
  say("restores")
  let newest = chain + "/" + names.last!
  let chainRestore = try bestOfThree(tool) { _ in
    ["restore", newest, "--to", path("from-chain.sqlite"), "--force", "-q"]
  }
  let sameState = path("same-state.gvault")
  _ = try runMeasured(tool, ["backup", store, "--output", sameState, "-q"])
  let fullRestore = try bestOfThree(tool) { _ in
    ["restore", sameState, "--to", path("from-full.sqlite"), "--force", "-q"]
  }
  print(
    String(
      format:
        "| %@ | %d | %.2f s, %.1f MB | %.2f s, %.1f MB | %+.2f%% | %.2f s, %.0f KB | %.2f%% | %.2f | %.2f s | %.2f s | %.2f | %d MiB | %d MiB |",
      workload.rawValue, objects, plain.seconds, plainBytes / 1e6, full.seconds, fullBytes / 1e6,
      (fullBytes / plainBytes - 1) * 100, incremental.seconds, incrementalBytes / 1e3,
      incrementalBytes / fullBytes * 100, incremental.seconds / full.seconds,
      chainRestore.seconds, fullRestore.seconds, chainRestore.seconds / fullRestore.seconds,
      incremental.peakKiB / 1024, chainRestore.peakKiB / 1024))
}
