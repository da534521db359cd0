import Foundation
import TestSupport
import Testing

/// A proxy on 127.0.0.1 in front of a server: fails the first requests with 503 SlowDown,
/// resets the connection of the next one, then passes everything through. Prints its port.
let faultProxy = """
  import http.server, http.client, os, socket, struct, sys, threading
  target = int(sys.argv[1])
  fail, reset = int(sys.argv[2]), int(sys.argv[3])
  count = [0]
  lock = threading.Lock()
  class Proxy(http.server.BaseHTTPRequestHandler):
      protocol_version = "HTTP/1.1"
      def log_message(self, *args): pass
      def relay(self):
          with lock:
              count[0] += 1
              n = count[0]
          length = int(self.headers.get("Content-Length") or 0)
          body = self.rfile.read(length) if length else b""
          if n <= fail:
              payload = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
              self.send_response(503)
              self.send_header("Content-Length", str(len(payload)))
              self.end_headers()
              self.wfile.write(payload)
              return
          if n <= fail + reset:
              # A reset: linger 0, and the descriptor itself closed (the handler's files hold
              # the socket object open).
              self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
              self.close_connection = True
              os.close(self.connection.detach())
              return
          upstream = http.client.HTTPConnection("127.0.0.1", target)
          upstream.request(self.command, self.path, body=body, headers=dict(self.headers))
          answer = upstream.getresponse()
          data = answer.read()
          self.send_response(answer.status)
          for name, value in answer.getheaders():
              if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                  self.send_header(name, value)
          length = answer.getheader("Content-Length") if self.command == "HEAD" else None
          self.send_header("Content-Length", length or str(len(data)))
          self.end_headers()
          if self.command != "HEAD": self.wfile.write(data)
      do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = relay
  server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
  print(server.server_address[1], flush=True)
  server.serve_forever()
  """

@Suite(
  "Object storage (moto's S3 server on 127.0.0.1)",
  .enabled(if: MotoServer.isAvailable, MotoServer.skipNote))
struct ObjectStorageCommandTests {
  static func run(_ arguments: [String], _ environment: [String: String]) throws -> ProcessResult {
    try BuiltTool.run(arguments, environment: environment)
  }

  @Test func everyCommandWorksAgainstABucket() throws {
    let moto = try MotoServer()
    try moto.createBucket("backups")
    let env = moto.environment()
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 2_000)
    let model = CronWorkspace.sampleModel
    let backup = try Self.run(
      ["backup", store, "--model", model, "--output", "s3://backups/nightly/"], env)
    #expect(backup.status == 0, "\(backup.stderr)")
    let url = backup.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(url.hasPrefix("s3://backups/nightly/Library-") && url.hasSuffix("Z.gvault"))
    let key = String(url.dropFirst("s3://backups/".count))
    // The archive, and the copy of its ends that list and prune read.
    #expect(
      try moto.keys("backups").sorted()
        == ["nightly/.graphvault-ends/" + key.dropFirst(8), key])

    let verify = try Self.run(["verify", url], env)
    #expect(verify.status == 0, "\(verify.stderr)")
    let restored = workspace.path("Restored.sqlite")
    let restore = try Self.run(["restore", url, "--to", restored], env)
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(try storeRows(restored) == storeRows(store))
    if SharedFixtures.isAvailable {
      let diff = try SharedFixtures.storediff([store, restored])
      #expect(diff.status == 0, "\(diff.stdout)")
    }

    // Encrypted, with --time, then listed and pruned.
    let password = try workspace.passwordFile("secret")
    for day in ["2026-01-01", "2026-01-02", "2026-01-03"] {
      let result = try Self.run(
        [
          "backup", store, "--model", model, "--output", "s3://backups/nightly/",
          "--time", "\(day)T03:00:00Z", "--password-file", password,
        ], env)
      #expect(result.status == 0, "\(result.stderr)")
    }
    let list = try Self.run(
      ["list", "s3://backups/nightly/", "--json", "--password-file", password], env)
    #expect(list.status == 0, "\(list.stderr)")
    let summaries =
      try JSONSerialization.jsonObject(with: Data(list.stdoutBytes)) as? [[String: Any]]
    #expect(summaries?.count == 4)
    // Plain or encrypted, each archive is listed from the copy of its ends alone (at most
    // 32 KiB + 224 KiB + 24 bytes).
    let reads = summaries?.map { $0["bytesRead"] as? Int ?? -1 } ?? []
    #expect(reads.allSatisfy { $0 > 0 && $0 <= 262_168 }, "\(reads)")
    #expect(summaries?.filter { ($0["encrypted"] as? Bool) == true }.count == 3)
    let prune = try Self.run(
      [
        "prune", "s3://backups/nightly/", "--keep-last", "2", "--password-file", password, "--json",
      ],
      env)
    #expect(prune.status == 0, "\(prune.stderr)")
    // The plain archive is not the password's: kept, never counted; of the encrypted three,
    // the newest two stay.
    let keys = try moto.archiveKeys("backups")
    #expect(keys.count == 3, "\(keys)")
    #expect(keys.contains(key))
    // A removed archive's copied ends go with it.
    let copies = try moto.keys("backups").filter { $0.contains("/.graphvault-ends/") }
    #expect(
      copies.sorted() == keys.map { "nightly/.graphvault-ends/" + $0.dropFirst(8) }.sorted())
    let report =
      try JSONSerialization.jsonObject(with: Data(prune.stdoutBytes)) as? [String: Any]
    #expect((report?["notOpened"] as? [[String: Any]])?.count == 1)
  }

  @Test func diffFindSelectiveRestoreAndMergeWorkOnABucket() throws {
    let moto = try MotoServer()
    try moto.createBucket("hand")
    let env = moto.environment()
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 400)
    let model = CronWorkspace.sampleModel
    var urls: [String] = []
    for day in ["2026-01-01", "2026-01-02"] {
      let backup = try Self.run(
        [
          "backup", store, "--model", model, "--output", "s3://hand/nightly/", "--time",
          "\(day)T03:00:00Z",
        ], env)
      #expect(backup.status == 0, "\(backup.stderr)")
      urls.append(backup.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
      let change = try Subprocess.python(
        "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nc.execute(\"UPDATE ZBOOK SET ZTITLE='Renamed' WHERE Z_PK=4\")\nc.commit()",
        [store])
      #expect(change.status == 0, "\(change.stderr)")
    }
    let diff = try Self.run(["diff", urls[0], urls[1], "--entity", "Book"], env)
    #expect(diff.status == 1, "\(diff.stderr)")
    #expect(diff.stdout.contains("p4\n    title: \""), "\(diff.stdout)")
    #expect(diff.stdout.contains("-> \"Renamed\"\n"), "\(diff.stdout)")
    let chosen = workspace.path("Chosen.sqlite")
    let restore = try Self.run(
      [
        "restore", urls[0], "--to", chosen, "--entity", "Book", "--where",
        "title BEGINSWITH 'Book 4:'",
      ],
      env)
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(FileManager.default.fileExists(atPath: chosen))
    let merge = try Self.run(
      [
        "merge", urls[0], "--into", store, "--entity", "Book", "--where",
        "title BEGINSWITH 'Book 4:'", "--on-conflict", "replace",
      ], env)
    #expect(merge.status == 0, "\(merge.stderr)")
    #expect(
      merge.stdout.contains("Book: 1 replaced")
        || merge.stdout.contains("GraphicNovel: 1 replaced"), "\(merge.stdout)")
    let after = try Self.run(["diff", urls[0], store, "--entity", "Book", "-q"], env)
    #expect(after.status == 0, "\(after.stderr)")
    // find reads a few ranges of each archive in the bucket, not the archives.
    let found = try Self.run(
      ["find", "s3://hand/nightly/", "--entity", "Book", "--history", "4", "--json"], env)
    #expect(found.status == 0, "\(found.stderr)")
    let report = try JSONSerialization.jsonObject(with: Data(found.stdoutBytes)) as? [String: Any]
    let events = (report?["history"] as? [[String: Any]])?.compactMap { $0["event"] as? String }
    #expect(events == ["appeared", "changed"], "\(found.stdout)")
    let tags = try Self.run(["find", "s3://hand/nightly/", "--entity", "Tag", "--json"], env)
    let tagReport = try JSONSerialization.jsonObject(with: Data(tags.stdoutBytes)) as? [String: Any]
    let read = tagReport?["bytesRead"] as? Int ?? 0
    let total = tagReport?["bytes"] as? Int ?? 0
    #expect(read > 0 && read * 4 < total, "read \(read) of \(total)")
  }

  @Test func listAndPruneOfABucketReadEachArchivesCopiedEndsAndPassOverADamagedCopy() throws {
    let moto = try MotoServer()
    try moto.createBucket("ends")
    let env = moto.environment()
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 3_000)
    var keys: [String] = []
    for day in ["2026-01-01", "2026-01-02"] {
      let backup = try Self.run(
        [
          "backup", store, "--model", CronWorkspace.sampleModel, "--output", "s3://ends/n/",
          "--time", "\(day)T03:00:00Z",
        ], env)
      #expect(backup.status == 0, "\(backup.stderr)")
      keys.append(
        String(backup.stdout.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst(10)))
    }
    func list() throws -> [[String: Any]] {
      let list = try Self.run(["list", "s3://ends/n/", "--json"], env)
      #expect(list.status == 0, "\(list.stderr)")
      return try JSONSerialization.jsonObject(with: Data(list.stdoutBytes)) as? [[String: Any]]
        ?? []
    }
    func archiveGets() throws -> [String] {
      try moto.recorded().filter { line in
        line.hasPrefix("GET ") && keys.contains { line.hasSuffix("/ends/" + $0) }
      }
    }
    try moto.startRecording()
    let summaries = try list()
    #expect(summaries.count == 2)
    #expect(summaries.allSatisfy { ($0["state"] as? String) == "complete" }, "\(summaries)")
    let listGets = try archiveGets()
    #expect(listGets.isEmpty, "\(listGets)")
    for summary in summaries {
      let (read, bytes) = (summary["bytesRead"] as? Int ?? 0, summary["bytes"] as? Int ?? 0)
      #expect(read > 0 && read < bytes, "read \(read) of \(bytes)")
    }
    let dryRun = try Self.run(["prune", "s3://ends/n/", "--keep-last", "1", "--dry-run"], env)
    #expect(dryRun.status == 0, "\(dryRun.stderr)")
    let pruneGets = try archiveGets()
    #expect(pruneGets.isEmpty, "\(pruneGets)")

    // A damaged copy is passed over: the archive itself is read, and listed as it is.
    let damage = try moto.boto(
      "s3.put_object(Bucket='ends', Key='n/.graphvault-ends/' + sys.argv[1], Body=b'GVENDS\\x00\\x01 damaged')",
      [String(keys[0].dropFirst(2))])
    #expect(damage.status == 0, "\(damage.stderr)")
    try moto.startRecording()
    let again = try list()
    #expect(again.allSatisfy { ($0["state"] as? String) == "complete" }, "\(again)")
    #expect(try archiveGets().count >= 1)
    #expect(
      again.map { $0["objects"] as? [String: Int] ?? [:] }
        == summaries.map { $0["objects"] as? [String: Int] ?? [:] })
    let prune = try Self.run(["prune", "s3://ends/n/", "--keep-last", "1"], env)
    #expect(prune.status == 0, "\(prune.stderr)")
    #expect(
      try moto.keys("ends").sorted()
        == ["n/.graphvault-ends/" + keys[1].dropFirst(2), "n/" + keys[1].dropFirst(2)].sorted())
  }

  @Test func anArchiveWithoutACopyOfItsEndsIsListedFromItsStartAndItsEndReadOnceEach() throws {
    let moto = try MotoServer()
    try moto.createBucket("bare")
    let env = moto.environment()
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 3_000)
    let password = try workspace.passwordFile("secret")
    var keys: [String] = []
    for (prefix, extra) in [("sealed", ["--password-file", password]), ("plain", [])] {
      let backup = try Self.run(
        ["backup", store, "--model", CronWorkspace.sampleModel, "--output", "s3://bare/\(prefix)/"]
          + extra, env)
      #expect(backup.status == 0, "\(backup.stderr)")
      keys.append(
        String(backup.stdout.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst(10)))
    }
    // Archives copied in by other tools have no copy of their ends.
    let removed = try moto.boto(
      """
      for key in sys.argv[1:]:
          folder, name = key.split("/")
          s3.delete_object(Bucket="bare", Key=folder + "/.graphvault-ends/" + name)
      """, keys)
    #expect(removed.status == 0, "\(removed.stderr)")
    for (key, extra) in zip(keys, [["--password-file", password], []]) {
      try moto.startRecording()
      let folder = "s3://bare/" + key.prefix { $0 != "/" } + "/"
      let list = try Self.run(["list", folder, "--json"] + extra, env)
      #expect(list.status == 0, "\(list.stderr)")
      let summary =
        (try JSONSerialization.jsonObject(with: Data(list.stdoutBytes)) as? [[String: Any]])?.first
      #expect(summary?["state"] as? String == "complete", "\(list.stdout)")
      // Its start (with its size: no HEAD), and its end (read once, whichever trailer it has).
      let requests = try moto.recorded().filter { $0.hasSuffix("/bare/" + key) }
      #expect(requests.filter { $0.hasPrefix("HEAD ") }.isEmpty, "\(key): \(requests)")
      #expect(requests.filter { $0.hasPrefix("GET ") }.count == 2, "\(key): \(requests)")
      let (read, bytes) = (summary?["bytesRead"] as? Int ?? 0, summary?["bytes"] as? Int ?? 0)
      // It is opened with its first 256 KiB, which count as read.
      #expect(read >= min(bytes, 262_144 + 4_096) && read <= bytes, "\(key): \(read) of \(bytes)")
      // So it is by its own name.
      let one = try Self.run(["list", "s3://bare/" + key, "--json"] + extra, env)
      #expect(one.status == 0, "\(one.stderr)")
      let alone =
        (try JSONSerialization.jsonObject(with: Data(one.stdoutBytes)) as? [[String: Any]])?.first
      let readAlone = alone?["bytesRead"] as? Int ?? 0
      #expect(readAlone >= min(bytes, 262_144) && readAlone <= bytes, "\(key): \(readAlone)")
    }
  }

  @Test func aListingOfMoreThanAThousandArchivesFollowsContinuationTokens() throws {
    let moto = try MotoServer()
    try moto.createBucket("many")
    let env = moto.environment()
    let workspace = try CronWorkspace()
    let store = try workspace.emptyStore("Tiny.sqlite")
    let backup = try Self.run(
      ["backup", store, "--model", CronWorkspace.sampleModel, "--output", "s3://many/"], env)
    #expect(backup.status == 0, "\(backup.stderr)")
    let key = String(
      backup.stdout.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst("s3://many/".count))
    let copies = try moto.boto(
      """
      for n in range(1100):
          s3.copy_object(Bucket="many", Key="Tiny-2025%04dT000000.000Z.gvault" % n,
                         CopySource={"Bucket": "many", "Key": sys.argv[1]})
      """, [key])
    #expect(copies.status == 0, "\(copies.stderr)")
    let list = try Self.run(["list", "s3://many/", "--json"], env)
    #expect(list.status == 0, "\(list.stderr)")
    let summaries =
      try JSONSerialization.jsonObject(with: Data(list.stdoutBytes)) as? [[String: Any]]
    #expect(summaries?.count == 1_101)
    #expect(summaries?.allSatisfy { ($0["complete"] as? Bool) == true } == true)
  }

  @Test func transientFailuresAreRetriedUntilTheRunSucceeds() throws {
    let moto = try MotoServer()
    try moto.createBucket("flaky")
    let proxy = try RunningProcess(
      MotoServer.venv.appendingPathComponent("bin/python").path,
      ["-c", faultProxy, String(moto.port), "2", "1"])
    defer { proxy.send(SIGKILL) }
    // The proxy listens on a port of its choosing.
    let proxyPort = try #require(Self.listeningPort(of: proxy.pid))
    let env = moto.environment(endpoint: "http://127.0.0.1:\(proxyPort)")
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 2_000)
    let backup = try Self.run(
      ["backup", store, "--model", CronWorkspace.sampleModel, "--output", "s3://flaky/"], env)
    #expect(backup.status == 0, "\(backup.stderr)")
    let url = backup.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let restored = workspace.path("Restored.sqlite")
    let restore = try Self.run(["restore", url, "--to", restored], env)
    #expect(restore.status == 0, "\(restore.stderr)")
    #expect(try storeRows(restored) == storeRows(store))
  }

  @Test func aMissingBucketAMissingArchiveAndDeniedAccessEachHaveTheirStatus() throws {
    let moto = try MotoServer()
    try moto.createBucket("present")
    let env = moto.environment()
    let workspace = try CronWorkspace()
    let store = try workspace.emptyStore("Library.sqlite")
    let noBucket = try Self.run(["list", "s3://absent/"], env)
    #expect(noBucket.status == 66, "\(noBucket.stderr)")
    #expect(noBucket.stderr.contains("absent"))
    let noArchive = try Self.run(
      [
        "restore", "s3://present/Library-20260101T000000.000Z.gvault", "--to",
        workspace.path("R.sqlite"),
      ],
      env)
    #expect(noArchive.status == 66, "\(noArchive.stderr)")
    #expect(noArchive.stderr.contains("s3://present/Library-20260101T000000.000Z.gvault"))
    let noCredentials = try Self.run(
      ["list", "s3://present/"], ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""])
    #expect(noCredentials.status == 78, "\(noCredentials.stderr)")

    // A server that checks credentials refuses unknown ones.
    let strict = try MotoServer(environment: ["INITIAL_NO_AUTH_ACTION_COUNT": "1"])
    try strict.createBucket("guarded")
    let denied = try Self.run(
      ["backup", store, "--model", CronWorkspace.sampleModel, "--output", "s3://guarded/"],
      strict.environment())
    #expect(denied.status == 77, "\(denied.stderr)")
    #expect(denied.stderr.contains("guarded"))
    #expect(!denied.stderr.contains("testing-secret"))
  }

  @Test func aBackupKilledMidUploadLeavesNoObjectUnderAFinalKeyAndLocksHoldOnTheBucket() throws {
    let moto = try MotoServer()
    try moto.createBucket("backups")
    let env = moto.environment()
    let workspace = try CronWorkspace()
    let store = try workspace.sampleStore(objects: 60_000)
    let arguments = [
      "backup", store, "--model", CronWorkspace.sampleModel, "--output", "s3://backups/",
    ]
    var environment = ProcessInfo.processInfo.environment
    for (name, value) in env { environment[name] = value }

    // A second backup of the same store, and a prune, are refused while one uploads.
    let first = try RunningProcess(BuiltTool.path, arguments, environment: environment)
    // Stopped the moment its upload is seen, from the polling loop itself: stopping it only
    // after that process ends left time for the upload to finish (seen on a loaded machine).
    let waited = try moto.boto(
      """
      import os, signal, time
      deadline = time.time() + 60
      while not s3.list_multipart_uploads(Bucket="backups").get("Uploads") and time.time() < deadline:
          time.sleep(0.02)
      os.kill(\(first.pid), signal.SIGSTOP)
      """)
    #expect(waited.status == 0)
    first.send(SIGSTOP)
    let second = try Self.run(arguments, env)
    #expect(second.status == 75, "\(second.stderr)")
    #expect(second.stderr.contains("pid \(first.pid)"), "\(second.stderr)")
    let prune = try Self.run(["prune", "s3://backups/", "--keep-last", "1"], env)
    #expect(prune.status == 75, "\(prune.stderr)")

    first.send(SIGKILL)
    first.send(SIGCONT)
    #expect(first.wait().status != 0)
    #expect(try moto.archiveKeys("backups").isEmpty)
    // The killed run's locks name a process of this host that is gone: not stale by age, but
    // dead, so the next run goes ahead.
    let next = try Self.run(arguments, env)
    #expect(next.status == 0, "\(next.stderr)")
    #expect(try moto.archiveKeys("backups").count == 1)
  }

  /// The TCP port a process listens on (from /proc).
  static func listeningPort(of pid: Int32) -> Int? {
    var found: Int?
    _ = RunningProcess.eventually(within: 30) {
      guard
        let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"),
        let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
      else { return false }
      var inodes = Set<String>()
      for fd in fds {
        if let target = try? FileManager.default.destinationOfSymbolicLink(
          atPath: "/proc/\(pid)/fd/\(fd)"), target.hasPrefix("socket:[")
        {
          inodes.insert(String(target.dropFirst(8).dropLast()))
        }
      }
      for line in table.split(separator: "\n").dropFirst() {
        let columns = line.split(separator: " ")
        guard columns.count > 9, columns[3] == "0A", inodes.contains(String(columns[9])) else {
          continue
        }
        found = Int(columns[1].split(separator: ":")[1], radix: 16)
        return true
      }
      return false
    }
    return found
  }
}
