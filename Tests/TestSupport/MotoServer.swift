import Foundation
import Testing

/// moto's S3 server (a real S3 implementation, in Python), started on a free port of
/// 127.0.0.1 for one test and stopped when released. `scripts/setup` installs it into the
/// package's `.venv`; without it, tests that need it skip with ``skipNote``.
public final class MotoServer: @unchecked Sendable {
  /// The virtualenv's folder.
  public static let venv = SharedFixtures.packageRoot.appendingPathComponent(".venv")

  /// Whether moto's server is installed.
  public static let isAvailable = FileManager.default.isExecutableFile(
    atPath: venv.appendingPathComponent("bin/moto_server").path)

  /// Why object-storage tests skip.
  public static let skipNote: Comment =
    "moto is not installed (.venv/bin/moto_server): run scripts/setup; object-storage tests skipped"

  /// The server's port.
  public let port: Int
  private let process = Process()
  /// The server's working folder: where moto writes what it keeps on disk (its request
  /// recording), never the package.
  private let folder: TemporaryDirectory

  /// Starts a server; `environment` is added to its own (`INITIAL_NO_AUTH_ACTION_COUNT` turns
  /// on its checks of credentials).
  public init(environment: [String: String] = [:]) throws {
    port = try Self.freePort()
    folder = try TemporaryDirectory("graphvault-moto")
    process.executableURL = Self.venv.appendingPathComponent("bin/moto_server")
    process.arguments = ["-H", "127.0.0.1", "-p", String(port)]
    process.currentDirectoryURL = folder.url
    process.environment = ProcessInfo.processInfo.environment.merging(
      environment.merging(["MOTO_RECORDER_FILEPATH": folder.path("recording").path]) { a, _ in a }
    ) { $1 }
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    guard RunningProcess.eventually(within: 30, { Self.accepts(port: self.port) }) else {
      kill(process.processIdentifier, SIGKILL)
      throw MotoError.didNotStart
    }
  }

  deinit {
    // SIGKILL: a child of Foundation's Process may not see SIGTERM.
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
  }

  /// `http://127.0.0.1:PORT`.
  public var endpoint: String { "http://127.0.0.1:\(port)" }

  /// The environment graphvault needs to reach this server.
  public func environment(endpoint: String? = nil) -> [String: String] {
    [
      "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing-secret",
      "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint ?? self.endpoint,
      "AWS_ENDPOINT_URL_S3": "",
    ]
  }

  /// Runs a Python script with boto3 (from the virtualenv), `s3` bound to a client of this
  /// server.
  @discardableResult
  public func boto(_ script: String, _ arguments: [String] = []) throws -> ProcessResult {
    try Subprocess.run(
      Self.venv.appendingPathComponent("bin/python").path,
      [
        "-c",
        """
        import boto3, sys
        s3 = boto3.client("s3", endpoint_url="\(endpoint)", region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing-secret")
        \(script)
        """,
      ] + arguments)
  }

  /// Creates a bucket.
  public func createBucket(_ name: String) throws {
    let result = try boto("s3.create_bucket(Bucket=sys.argv[1])", [name])
    guard result.status == 0 else { throw MotoError.failed(result.stderr) }
  }

  /// The keys in a bucket (all of them, paginated).
  public func keys(_ bucket: String) throws -> [String] {
    let result = try boto(
      """
      pages = s3.get_paginator("list_objects_v2").paginate(Bucket=sys.argv[1])
      for page in pages:
          for item in page.get("Contents", []): print(item["Key"])
      """, [bucket])
    guard result.status == 0 else { throw MotoError.failed(result.stderr) }
    return result.stdout.split(separator: "\n").map(String.init)
  }

  /// The keys of archives in a bucket: `.gvault` keys outside the hidden folders graphvault
  /// keeps beside them (`.graphvault-ends/`, `.graphvault-locks/`).
  public func archiveKeys(_ bucket: String) throws -> [String] {
    try keys(bucket).filter { key in
      key.hasSuffix(".gvault") && !key.split(separator: "/").contains { $0.hasPrefix(".") }
    }
  }

  /// Starts moto's request recorder afresh: every request from now on is recorded.
  public func startRecording() throws {
    let result = try boto(
      """
      import urllib.request
      base = "\(endpoint)/moto-api/recorder/"
      urllib.request.urlopen(urllib.request.Request(base + "reset-recording", method="POST"))
      urllib.request.urlopen(urllib.request.Request(base + "start-recording", method="POST"))
      """)
    guard result.status == 0 else { throw MotoError.failed(result.stderr) }
  }

  /// How many requests moto recorded since ``startRecording()``.
  public func recordedRequests() throws -> Int {
    let result = try boto(
      """
      import urllib.request
      body = urllib.request.urlopen("\(endpoint)/moto-api/recorder/download-recording").read()
      print(len([line for line in body.splitlines() if line.strip()]))
      """)
    guard result.status == 0,
      let count = Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
    else { throw MotoError.failed(result.stderr) }
    return count
  }

  /// The requests moto recorded since ``startRecording()``, each as its method and URL
  /// (`GET http://127.0.0.1:PORT/bucket/key`).
  public func recorded() throws -> [String] {
    let result = try boto(
      """
      import json, urllib.request
      body = urllib.request.urlopen("\(endpoint)/moto-api/recorder/download-recording").read()
      for line in body.splitlines():
          if line.strip():
              entry = json.loads(line)
              print(entry["method"], entry["url"])
      """)
    guard result.status == 0 else { throw MotoError.failed(result.stderr) }
    return result.stdout.split(separator: "\n").map(String.init)
  }

  enum MotoError: Error {
    case didNotStart
    case failed(String)
  }

  /// A port nothing listens on now.
  public static func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
      }
    }
    guard bound else { throw MotoError.didNotStart }
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// Whether something accepts connections on `port` of 127.0.0.1.
  public static func accepts(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }
}
