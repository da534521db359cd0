import Foundation
import GraphVault

/// A child process's exit status, peak resident memory and wall time.
struct Measured {
  let status: Int32
  let peakKiB: Int
  let seconds: Double
}

/// Runs `executable` with `arguments` (``runMeasured(_:_:)``) for a benchmark's set-up, which
/// must succeed.
/// - Throws: when it exits with another status than 0, saying `failure`.
func runSucceeding(_ executable: String, _ arguments: [String], failure: String) throws {
  guard try runMeasured(executable, arguments).status == 0 else {
    throw NSError(domain: "gvbench", code: 1, userInfo: [NSLocalizedDescriptionKey: failure])
  }
}

/// Runs `executable` with `arguments` and reads its own peak RSS from `wait4`.
func runMeasured(_ executable: String, _ arguments: [String]) throws -> Measured {
  var pid: pid_t = 0
  let argv = ([executable] + arguments).map { strdup($0) } + [nil]
  defer { for pointer in argv { free(pointer) } }
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
  let start = Date()
  let rc = posix_spawn(&pid, executable, &actions, nil, argv, environ)
  guard rc == 0 else {
    throw NSError(
      domain: "gvbench", code: Int(rc),
      userInfo: [NSLocalizedDescriptionKey: "cannot run \(executable)"])
  }
  var status: Int32 = 0
  var usage = rusage()
  _ = wait4(pid, &status, 0, &usage)
  return Measured(
    status: (status >> 8) & 0xFF, peakKiB: usage.ru_maxrss, seconds: Date().timeIntervalSince(start)
  )
}

/// The fastest of three runs of `tool` with the arguments `arguments` gives for each round
/// (0, 1, 2); a run exiting with a status not in `accepting` ends the benchmark.
func bestOfThree(
  _ tool: String, accepting statuses: Set<Int32> = [0], _ arguments: (Int) throws -> [String]
) throws -> Measured {
  var best: Measured?
  for round in 0..<3 {
    let command = try arguments(round)
    let measured = try runMeasured(tool, command)
    guard statuses.contains(measured.status) else {
      throw NSError(
        domain: "gvbench", code: 1,
        userInfo: [
          NSLocalizedDescriptionKey: "\(command.first ?? tool) exited \(measured.status)"
        ])
    }
    if measured.seconds < best?.seconds ?? .infinity { best = measured }
  }
  return best!
}

/// Copies the store at `source` to `target`, first removing whatever is at `target` with its
/// write-ahead log and shared memory (a last round's log beside a fresh copy would be read as
/// part of it), then flushes the copy to disk: the timed command's commit must not pay for
/// writing back hundreds of megabytes it did not write.
func copyStore(_ source: String, to target: String) throws {
  for suffix in ["", "-wal", "-shm"] {
    try? FileManager.default.removeItem(atPath: target + suffix)
  }
  try FileManager.default.copyItem(atPath: source, toPath: target)
  sync()
}

/// Generates sample stores of `objects` and 5 × `objects` objects, backs each up and restores
/// it with the release-built `graphvault` beside this benchmark, and prints each run's peak RSS.
func memoryBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  let (tool, model, work) = (workspace.tool, workspace.model, workspace.folder)
  print(
    "| objects | store | archive | backup peak RSS | backup time | restore peak RSS | restore time |"
  )
  print("|---:|---:|---:|---:|---:|---:|---:|")
  var peaks: [(Int, Int)] = []
  for n in [objects, 5 * objects] {
    let store = work.appendingPathComponent("store-\(n).sqlite").path
    try SampleLibrary.generate(at: store, objects: n)
    let archive = work.appendingPathComponent("store-\(n).gvault").path
    let backup = try runMeasured(
      tool, ["backup", store, "--model", model, "--output", archive, "-q"])
    let restored = work.appendingPathComponent("restored-\(n).sqlite").path
    let restore = try runMeasured(tool, ["restore", archive, "--to", restored, "-q"])
    guard backup.status == 0, restore.status == 0 else {
      FileHandle.standardError.write(
        Data("gvbench: backup exited \(backup.status), restore \(restore.status)\n".utf8))
      exit(1)
    }
    func size(_ path: String) -> String {
      let bytes =
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?
        .doubleValue ?? 0
      return String(format: "%.1f MB", bytes / 1_000_000)
    }
    print(
      "| \(n) | \(size(store)) | \(size(archive)) | \(backup.peakKiB / 1024) MiB | "
        + String(format: "%.2f s", backup.seconds) + " | \(restore.peakKiB / 1024) MiB | "
        + String(format: "%.2f s", restore.seconds) + " |")
    peaks.append((backup.peakKiB, restore.peakKiB))
    // The next size needs the disk more than these.
    for path in [store, archive, restored] { try? FileManager.default.removeItem(atPath: path) }
  }
  let backupGrowth = Double(peaks[1].0) / Double(peaks[0].0) - 1
  let restoreGrowth = Double(peaks[1].1) / Double(peaks[0].1) - 1
  print(
    String(
      format:
        "\npeak RSS growth at 5× the objects: backup %+.1f%%, restore %+.1f%% (target: within 10%%)",
      backupGrowth * 100, restoreGrowth * 100))
}
