import Foundation
import TestSupport
import Testing

/// The release tarball (`scripts/release`, which `scripts/test --full` runs first): one file to copy to
/// a server without Swift. Its binary must run with the toolchain out of sight, object storage
/// included, and `scripts/install` must put everything where a system looks for it.
@Suite(
  "The release tarball",
  .enabled(
    if: ReleaseTarball.path != nil,
    "no release tarball: scripts/test --full builds one and tests it (or name one in GRAPHVAULT_RELEASE_TARBALL)"
  ))
struct ReleaseTarballTests {
  static var tarball: String? { ReleaseTarball.path }
  static var toolchain: String { ReleaseTarball.toolchain }
  static var canHideToolchain: Bool { ReleaseTarball.canHideToolchain }
}

/// Where the release tarball is, and what the machine allows its test.
enum ReleaseTarball {
  /// The tarball `GRAPHVAULT_RELEASE_TARBALL` names (`scripts/test --full` names the one it
  /// has just built): never one found lying in `dist/`, which may be older than the source.
  static let path: String? = {
    guard let named = ProcessInfo.processInfo.environment["GRAPHVAULT_RELEASE_TARBALL"],
      !named.isEmpty
    else { return nil }
    return named
  }()

  /// The folder the toolchain lives in (`/opt/swift` for `/opt/swift/usr/bin/swift`).
  static let toolchain: String = {
    let swift =
      (try? Subprocess.run("sh", ["-c", "readlink -f \"$(command -v swift)\""]).stdout)?
      .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    var url = URL(fileURLWithPath: swift)
    for _ in 0..<3 { url.deleteLastPathComponent() }  // …/usr/bin/swift → …
    return url.path
  }()

  static let canHideToolchain =
    getuid() == 0 && ((try? Subprocess.run("unshare", ["-m", "true"]).status) == 0)
}

extension ReleaseTarballTests {
  /// Installs the tarball into a fresh prefix; returns the prefix.
  func install(in directory: TemporaryDirectory) throws -> String {
    let tarball = try #require(Self.tarball)
    let prefix = directory.path("prefix").path
    let result = try Subprocess.run(
      SharedFixtures.packageRoot.appendingPathComponent("scripts/install").path,
      ["--prefix", prefix, tarball])
    #expect(result.status == 0, "\(result.stderr)")
    return prefix
  }

  @Test(
    "the tarball matches its SHA-256 file and installs the binary, the man page and completions")
  func theTarballInstallsEverything() throws {
    let tarball = try #require(Self.tarball)
    let folder = URL(fileURLWithPath: tarball).deletingLastPathComponent().path
    let check = try Subprocess.run(
      "sh",
      [
        "-c", "cd \"$1\" && sha256sum -c \"$2.sha256\"", "sh", folder,
        URL(fileURLWithPath: tarball).lastPathComponent,
      ])
    #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
    let directory = try TemporaryDirectory()
    let prefix = try install(in: directory)
    for (file, mode) in [
      ("bin/graphvault", 0o755), ("share/man/man1/graphvault.1", 0o644),
      ("share/bash-completion/completions/graphvault", 0o644),
      ("share/zsh/site-functions/_graphvault", 0o644),
      ("share/fish/vendor_completions.d/graphvault.fish", 0o644),
      ("share/doc/graphvault/FORMAT.md", 0o644), ("share/graphvault/gvread.py", 0o755),
    ] {
      let attributes = try? FileManager.default.attributesOfItem(atPath: "\(prefix)/\(file)")
      #expect((attributes?[.posixPermissions] as? Int) == mode, "\(file)")
    }
    let listing = try Subprocess.run("tar", ["-tzf", tarball]).stdout
    #expect(listing.contains("/LICENSE") && listing.contains("/install"))
    let completion = try String(
      contentsOfFile: "\(prefix)/share/bash-completion/completions/graphvault", encoding: .utf8)
    #expect(completion.contains("restore") && completion.contains("--allow-unencrypted"))
  }

  @Test("the binary links nothing from the toolchain")
  func theBinaryNeedsNoSwift() throws {
    let directory = try TemporaryDirectory()
    let prefix = try install(in: directory)
    let ldd = try Subprocess.run("ldd", ["\(prefix)/bin/graphvault"])
    #expect(ldd.status == 0)
    #expect(!ldd.stdout.contains(Self.toolchain), "\(ldd.stdout)")
    #expect(!ldd.stdout.contains("libswift") && !ldd.stdout.contains("libFoundation"))
    #expect(!ldd.stdout.contains("not found"), "\(ldd.stdout)")
  }

  @Test(
    "with the toolchain hidden, the binary samples, backs up, verifies, restores and backs up to S3, and the installed reader verifies its archive",
    .enabled(
      if: ReleaseTarball.canHideToolchain, "needs root and mount namespaces to hide the toolchain"),
    .enabled(if: MotoServer.isAvailable, MotoServer.skipNote))
  func theBinaryRunsWithoutTheToolchain() throws {
    let directory = try TemporaryDirectory()
    let prefix = try install(in: directory)
    let moto = try MotoServer()
    try moto.createBucket("release")
    let work = directory.path("work").path
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    // In a mount namespace of its own, an empty folder over the toolchain, no library path.
    let script = """
      set -e
      mount -t tmpfs tmpfs "$1"
      test ! -e "$1/usr/bin/swift"
      export LD_LIBRARY_PATH=
      gv="$2/bin/graphvault"
      cd "$3"
      "$gv" --version
      "$gv" sample Library.sqlite --objects 500 -q
      "$gv" backup Library.sqlite --output archive.gvault -q
      "$gv" verify archive.gvault -q
      "$gv" restore archive.gvault --to Restored.sqlite -q
      python3 "$2/share/graphvault/gvread.py" verify archive.gvault
      "$gv" backup Library.sqlite --output s3://release/nightly/ -q
      "$gv" list s3://release/nightly/ --json > remote.json
      echo ok
      """
    let environment = ProcessInfo.processInfo.environment.merging(moto.environment()) { $1 }
    let result = try Subprocess.run(
      "unshare", ["-m", "sh", "-c", script, "sh", Self.toolchain, prefix, work],
      environment: environment)
    #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    #expect(result.stdout.hasSuffix("ok\n"), "\(result.stdout)")
    let remote = try Data(contentsOf: URL(fileURLWithPath: work + "/remote.json"))
    let listed = try JSONSerialization.jsonObject(with: remote) as? [[String: Any]]
    #expect(listed?.count == 1 && listed?.first?["complete"] as? Bool == true)
    #expect(try moto.keys("release").contains { $0.hasPrefix("nightly/Library-") })
  }
}
