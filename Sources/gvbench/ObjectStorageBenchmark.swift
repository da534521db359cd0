import Foundation
import GraphVault

/// Backup and restore of one generated store into a local folder and into a bucket of moto's
/// S3 server on 127.0.0.1 (from the package's `.venv`, as `scripts/setup` makes it), in one
/// run: time, upload throughput and peak RSS; a merge of about a thousand deleted books back
/// from each archive (read in part), against the restore from the same place; then `list` and
/// `prune --dry-run` of a prefix holding 30 copies of the archive, and `find` of one book by its
/// title in all of them: time and the share of the
/// archives' bytes read.
func objectStorageBenchmark(objects: Int) throws {
  let workspace = try BenchWorkspace()
  defer { workspace.remove() }
  let (tool, model) = (workspace.tool, workspace.model)
  func path(_ name: String) -> String { workspace.path(name) }
  let venv = FileManager.default.currentDirectoryPath + "/.venv/bin"
  guard FileManager.default.isExecutableFile(atPath: venv + "/moto_server") else {
    FileHandle.standardError.write(Data("gvbench s3: run scripts/setup first (moto)\n".utf8))
    exit(1)
  }
  FileHandle.standardError.write(Data("gvbench s3: generating \(objects) objects\n".utf8))
  try SampleLibrary.generate(at: path("store.sqlite"), objects: objects)

  let port = 47_000 + Int.random(in: 0..<1_000)
  let server = Process()
  server.executableURL = URL(fileURLWithPath: venv + "/moto_server")
  server.arguments = ["-H", "127.0.0.1", "-p", String(port)]
  server.standardOutput = FileHandle.nullDevice
  server.standardError = FileHandle.nullDevice
  try server.run()
  defer {
    kill(server.processIdentifier, SIGKILL)
    server.waitUntilExit()
  }
  let endpoint = "http://127.0.0.1:\(port)"
  for (name, value) in [
    ("AWS_ACCESS_KEY_ID", "bench"), ("AWS_SECRET_ACCESS_KEY", "bench"), ("AWS_REGION", "us-east-1"),
    ("AWS_ENDPOINT_URL", endpoint),
  ] {
    setenv(name, value, 1)
  }
  var created = false
  for _ in 0..<100 where !created {
    usleep(200_000)
    created =
      (try? timedShell(
        "'\(venv)/python' -c \"import boto3; boto3.client('s3', endpoint_url='\(endpoint)').create_bucket(Bucket='bench')\" 2>/dev/null"
      )) != nil
  }
  guard created else { throw NSError(domain: "gvbench", code: 1) }

  func run(_ arguments: [String]) throws -> Measured {
    let measured = try runMeasured(tool, arguments)
    guard measured.status == 0 else {
      throw NSError(
        domain: "gvbench", code: 1,
        userInfo: [NSLocalizedDescriptionKey: "failed: \(arguments.joined(separator: " "))"])
    }
    return measured
  }
  let store = path("store.sqlite")
  let localBackup = try run(
    ["backup", store, "--model", model, "--output", path("local.gvault"), "-q"])
  let remoteBackup = try run(
    ["backup", store, "--model", model, "--output", "s3://bench/nightly/local.gvault", "-q"])
  let localRestore = try run(
    ["restore", path("local.gvault"), "--to", path("local.sqlite"), "-q"])
  let remoteRestore = try run(
    ["restore", "s3://bench/nightly/local.gvault", "--to", path("remote.sqlite"), "-q"])
  let megabytes = workspace.size("local.gvault") / 1_000_000
  print(
    "| \(objects) objects, archive \(String(format: "%.1f", megabytes)) MB | local folder | moto on 127.0.0.1 | ratio |"
  )
  print("|---|---:|---:|---:|")
  print(
    String(
      format: "| backup time | %.2f s | %.2f s (%.0f MB/s uploaded) | %.2f× |",
      localBackup.seconds, remoteBackup.seconds, megabytes / remoteBackup.seconds,
      remoteBackup.seconds / localBackup.seconds))
  print(
    "| backup peak RSS | \(localBackup.peakKiB / 1024) MiB | \(remoteBackup.peakKiB / 1024) MiB | \(String(format: "%.2f", Double(remoteBackup.peakKiB) / Double(localBackup.peakKiB)))× |"
  )
  print(
    String(
      format: "| restore time | %.2f s | %.2f s | %.2f× |", localRestore.seconds,
      remoteRestore.seconds, remoteRestore.seconds / localRestore.seconds))
  print(
    "| restore peak RSS | \(localRestore.peakKiB / 1024) MiB | \(remoteRestore.peakKiB / 1024) MiB | \(String(format: "%.2f", Double(remoteRestore.peakKiB) / Double(localRestore.peakKiB)))× |"
  )
  // About a thousand books (with their pages) deleted, and merged back from either archive.
  let deleted = path("deleted.sqlite")
  try copyStore(store, to: deleted)
  try deleteBooks(titled: "Book 1[0-2][0-9][0-9]:*", from: deleted)
  func merge(from input: String) throws -> Measured {
    try bestOfThree(tool) { _ in
      try copyStore(deleted, to: path("target.sqlite"))
      return [
        "merge", input, "--into", path("target.sqlite"), "--entity", "Book", "--where",
        "title MATCHES 'Book 1[0-2][0-9][0-9]:.*'", "--include", "pages", "-q",
      ]
    }
  }
  let localMerge = try merge(from: path("local.gvault"))
  let remoteMerge = try merge(from: "s3://bench/nightly/local.gvault")
  print(
    String(
      format:
        "| merge of ~1,000 objects (× the restore from the same place) | %.2f s (%.2f×) | %.2f s (%.2f×) | %.2f× |",
      localMerge.seconds, localMerge.seconds / localRestore.seconds, remoteMerge.seconds,
      remoteMerge.seconds / remoteRestore.seconds, remoteMerge.seconds / localMerge.seconds))

  // Thirty nightly archives under one prefix (server-side copies, each with the copy of its
  // ends that graphvault keeps beside an archive it uploads), listed and pruned.
  let copies = 30
  _ = try timedShell(
    "'\(venv)/python' -c \"import boto3; s3 = boto3.client('s3', endpoint_url='\(endpoint)')\n"
      + "for n in range(\(copies)):\n"
      + "  for folder in ['', '.graphvault-ends/']:\n"
      + "    s3.copy_object(Bucket='bench', Key='many/' + folder + 'store-202601%02dT031500.000Z.gvault' % (n + 1), CopySource={'Bucket': 'bench', 'Key': 'nightly/' + folder + 'local.gvault'})\""
  )
  let archiveBytes = workspace.size("local.gvault") * Double(copies)
  func json(_ arguments: [String]) throws -> (seconds: Double, value: Any) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    let start = Date()
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let seconds = Date().timeIntervalSince(start)
    return (seconds, try JSONSerialization.jsonObject(with: data))
  }
  let list = try json(["list", "s3://bench/many/", "--json"])
  let listed = (list.value as? [[String: Any]] ?? []).reduce(0) {
    $0 + ($1["bytesRead"] as? Int ?? 0)
  }
  let prune = try json([
    "prune", "s3://bench/many/", "--keep-daily", "30", "--dry-run", "--json",
  ])
  let pruned = (prune.value as? [String: Any])?["bytesRead"] as? Int ?? 0
  // One book looked for by its title in every archive: the titles of every chunk of books,
  // then the one chunk holding it.
  let find = try json([
    "find", "s3://bench/many/", "--entity", "Book", "--where", "title BEGINSWITH \"Book 12345:\"",
    "--json",
  ])
  let found = (find.value as? [String: Any])?["bytesRead"] as? Int ?? 0
  print("")
  print(
    "| \(copies) archives of \(String(format: "%.1f", megabytes)) MB in a prefix | time | bytes read | share of the archives' bytes |"
  )
  print("|---|---:|---:|---:|")
  for (name, seconds, read) in [
    ("list", list.seconds, listed), ("prune --dry-run", prune.seconds, pruned),
    ("find --entity Book --where 'title BEGINSWITH \"Book 12345:\"'", find.seconds, found),
  ] {
    print(
      "| \(name) | "
        + String(
          format: "%.2f s | %d | %.3f%% |", seconds, read, Double(read) * 100 / archiveBytes))
  }
}
