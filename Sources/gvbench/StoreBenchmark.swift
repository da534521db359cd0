import Foundation
import GraphVault

/// Runs a shell pipeline and measures its wall time.
func timedShell(_ command: String) throws -> Double {
  let start = Date()
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/bin/sh")
  process.arguments = ["-c", command]
  try process.run()
  process.waitUntilExit()
  guard process.terminationStatus == 0 else {
    throw NSError(
      domain: "gvbench", code: Int(process.terminationStatus),
      userInfo: [NSLocalizedDescriptionKey: "failed: \(command)"])
  }
  return Date().timeIntervalSince(start)
}

/// Backup and restore of generated stores against the baselines, in one run, for each
/// workload asked for (``SampleWorkload``): `sqlite3 STORE .dump | zstd -3` for backup (time
/// and size; the size also apart from the store's blobs, random bytes in every workload),
/// `sqlite3 NEW < dump.sql` for restore, and `verify` against the restore, with peak RSS.
/// Needs the sqlite3 and zstd command-line tools.
func storeBenchmark(objects: Int, workloads: [SampleWorkload]) throws {
  for workload in workloads {
    try storeBenchmark(objects: objects, workload: workload)
  }
}

private func storeBenchmark(objects: Int, workload: SampleWorkload) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  let tool = workspace.tool
  func path(_ name: String) -> String { workspace.path(name) }
  func size(_ name: String) -> Double { workspace.size(name) }
  FileHandle.standardError.write(
    Data("gvbench store: generating \(objects) objects (\(workload.rawValue))\n".utf8))
  try workload.generate(at: path("store.sqlite"), objects: objects)
  let store = path("store.sqlite")

  // Each timed step starts with what the steps before wrote on disk (a 5M store is a
  // gigabyte), so that none pays for another's writes.
  sync()
  let backup = try runMeasured(tool, ["backup", store, "--output", path("store.gvault"), "-q"])
  sync()
  let dump = try timedShell("sqlite3 '\(store)' .dump | zstd -3 -q -o '\(path("dump.sql.zst"))'")
  _ = try timedShell("zstd -dq '\(path("dump.sql.zst"))' -o '\(path("dump.sql"))'")
  sync()
  let restore = try runMeasured(
    tool, ["restore", path("store.gvault"), "--to", path("restored.sqlite"), "-q"])
  sync()
  let load = try timedShell("sqlite3 '\(path("loaded.sqlite"))' < '\(path("dump.sql"))'")
  sync()
  let verify = try runMeasured(tool, ["verify", path("store.gvault"), "-q"])
  guard backup.status == 0, restore.status == 0, verify.status == 0 else {
    throw NSError(
      domain: "gvbench", code: 1, userInfo: [NSLocalizedDescriptionKey: "graphvault failed"])
  }
  let archiveMB = size("store.gvault") / 1_000_000
  let dumpMB = size("dump.sql.zst") / 1_000_000
  let blobs = try blobBytes(in: store)
  let blobMB = Double(blobs.raw) / 1_000_000
  let dumpedBlobMB = Double(blobs.dumped) / 1_000_000
  print(
    "| \(workload.rawValue): \(objects) objects (store \(String(format: "%.1f", size("store.sqlite") / 1_000_000)) MB) | graphvault | baseline | ratio | target |"
  )
  print("|---|---:|---:|---:|---:|")
  print(
    String(
      format: "| backup time | %.2f s | %.2f s (sqlite3 .dump \\| zstd -3) | %.2f× | ≤ 0.6× |",
      backup.seconds, dump, backup.seconds / dump))
  print(
    String(
      format: "| backup size | %.1f MB | %.1f MB (zstd -3 dump) | %.2f× | ≤ 0.7× |", archiveMB,
      dumpMB, archiveMB / dumpMB))
  // The workloads' blobs are random bytes (covers, checksums), which no archive stores in
  // fewer bytes than they have: this line takes them out, at their size from the archive and
  // at what their hex text costs through zstd from the dump, and compares the rest (where
  // they are a hundredth of the dump or more).
  if blobMB >= dumpMB / 100 {
    print(
      String(
        format:
          "| backup size apart from the %.1f MB of blobs (%.1f MB in the dump) | %.1f MB | %.1f MB | %.2f× | ≤ 0.7× |",
        blobMB, dumpedBlobMB, archiveMB - blobMB, dumpMB - dumpedBlobMB,
        (archiveMB - blobMB) / (dumpMB - dumpedBlobMB)))
  }
  print(
    String(
      format: "| restore time | %.2f s | %.2f s (sqlite3 NEW < dump.sql) | %.2f× | ≤ 0.25× |",
      restore.seconds, load, restore.seconds / load))
  print(
    String(
      format: "| verify time | %.2f s | %.2f s (graphvault restore) | %.2f× | ≤ 0.5× |",
      verify.seconds, restore.seconds, verify.seconds / restore.seconds))
  print(
    "| backup / restore / verify peak RSS | \(backup.peakKiB / 1024) / \(restore.peakKiB / 1024) / \(verify.peakKiB / 1024) MiB | | | |"
  )
}

/// The blobs of the store at `path`, by the sqlite3 tool: their bytes (the sum of `length()`
/// over every value of type blob, in every column of every table), and what the dump's form of
/// them takes (their hex text, as `.dump` writes it, through `zstd -3`).
private func blobBytes(in path: String) throws -> (raw: Int64, dumped: Int64) {
  let quoted = "'\(path)'"
  let columns = try shellOutput(
    "sqlite3 -separator ' ' \(quoted) \"SELECT m.name, p.name FROM sqlite_master m, "
      + "pragma_table_info(m.name) p WHERE m.type = 'table'\"")
  let pairs = columns.split(separator: "\n").compactMap {
    line -> (table: String, column: String)? in
    let parts = line.split(separator: " ")
    return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
  }
  guard !pairs.isEmpty else { return (0, 0) }
  let blobs = { (pair: (table: String, column: String)) in
    "FROM \"\(pair.table)\" WHERE typeof(\"\(pair.column)\") = 'blob'"
  }
  let sum = pairs.map { "(SELECT coalesce(sum(length(\"\($0.column)\")), 0) \(blobs($0)))" }
  let hex = pairs.map { "SELECT hex(\"\($0.column)\") \(blobs($0));" }
  let raw = try shellOutput("sqlite3 \(quoted) \"SELECT \(sum.joined(separator: " + "))\"")
  let dumped = try shellOutput(
    "sqlite3 \(quoted) \"\(hex.joined(separator: " "))\" | zstd -3 -q -c | wc -c")
  guard let raw = Int64(raw.trimmingCharacters(in: .whitespacesAndNewlines)),
    let dumped = Int64(dumped.trimmingCharacters(in: .whitespacesAndNewlines))
  else {
    throw NSError(
      domain: "gvbench", code: 1,
      userInfo: [NSLocalizedDescriptionKey: "cannot measure the blobs of \(path)"])
  }
  return (raw, dumped)
}
