import Foundation
import TestSupport
import Testing

/// A backup or a restore into a folder that fills up: it fails with 74 saying what happened in
/// the user's words, and leaves nothing behind, under the archive's or store's name or any
/// other.
@Suite(
  "Backups and restores onto a full disk",
  .enabled(
    if: getuid() == 0 && ((try? Subprocess.run("unshare", ["-m", "true"]).status) == 0),
    "needs root and mount namespaces (unshare -m) to mount a small folder"))
struct FullDiskCommandTests {
  /// A sample store of `objects` objects and an empty folder to mount the small disk on.
  static func sampleStore(objects: Int) throws -> (TemporaryDirectory, String, String) {
    let directory = try TemporaryDirectory()
    let store = directory.path("Library.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", String(objects), "-q"]).status == 0)
    let folder = directory.path("small").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return (directory, store, folder)
  }

  /// Runs `commands` (a shell script: `$1` the small disk's folder, `$2` graphvault, `$3`
  /// `argument`) in a mount namespace of its own after mounting a tmpfs of `size` on `folder`;
  /// the run, and what the folder holds after it (names, space-separated).
  static func onSmallDisk(
    _ size: String, at folder: String, _ commands: String, argument: String
  ) throws -> (run: ProcessResult, left: String) {
    let script = """
      mount -t tmpfs -o size=\(size) tmpfs "$1"
      \(commands)
      status=$?
      echo "left: $(ls -A "$1" | tr '\\n' ' ')"
      exit $status
      """
    let run = try Subprocess.run(
      "unshare", ["-m", "sh", "-c", script, "sh", folder, BuiltTool.path, argument])
    let left = run.stdout.split(separator: "\n").first { $0.hasPrefix("left:") } ?? ""
    return (run, String(left.dropFirst("left:".count)).trimmingCharacters(in: .whitespaces))
  }

  @Test func aBackupThatFillsTheDiskIsSeventyFourAndLeavesNothing() throws {
    let (directory, store, folder) = try Self.sampleStore(objects: 20_000)
    defer { withExtendedLifetime(directory) {} }
    // A 256 KiB disk: the archive of 20,000 objects takes a few MiB.
    let (run, left) = try Self.onSmallDisk(
      "256k", at: folder, #""$2" backup "$3" --output "$1/""#, argument: store)
    #expect(run.status == 74, "\(run.stderr)")
    #expect(run.stderr.contains("No space left on device"), "\(run.stderr)")
    #expect(run.stderr.contains("nothing was published as"), "\(run.stderr)")
    #expect(!run.stderr.contains("libarchive -"), "\(run.stderr)")
    // Only the folder's lock file, which names no archive, stays.
    #expect(!left.contains(".gvault"), "\(left)")
  }

  @Test func anIncrementalBackupThatFillsTheDiskIsSeventyFourAndLeavesItsParentAlone() throws {
    let (directory, store, folder) = try Self.sampleStore(objects: 2_000)
    defer { withExtendedLifetime(directory) {} }
    // The full archive fits; then the disk is filled, and the night's archive cannot.
    let (run, left) = try Self.onSmallDisk(
      "4m", at: folder,
      """
      "$2" backup "$3" --output "$1/" --incremental -q || exit 90
      python3 -c 'import sqlite3, sys
      c = sqlite3.connect(sys.argv[1])
      c.execute("UPDATE ZBOOK SET ZTITLE = ZTITLE || \\" (revised)\\"")
      c.commit()' "$3"
      dd if=/dev/zero of="$1/filler" bs=4k 2>/dev/null
      "$2" backup "$3" --output "$1/" --incremental
      """, argument: store)
    #expect(run.status == 74, "\(run.stderr)")
    #expect(run.stderr.contains("nothing was published as"), "\(run.stderr)")
    // The full archive, the filler and the lock files: nothing of the failed night.
    #expect(left.split(separator: " ").filter { $0.contains(".gvault") }.count == 1, "\(left)")
  }

  @Test func aRestoreThatFillsTheDiskIsSeventyFourAndLeavesNothing() throws {
    let (directory, store, folder) = try Self.sampleStore(objects: 20_000)
    defer { withExtendedLifetime(directory) {} }
    let archive = directory.path("Library.gvault").path
    #expect(try BuiltTool.run(["backup", store, "--output", archive, "-q"]).status == 0)
    // A 1 MiB disk: the store of 20,000 objects takes a few MiB, and fills it while its rows
    // go in, several to a statement.
    let (run, left) = try Self.onSmallDisk(
      "1m", at: folder, #""$2" restore "$3" --to "$1/Library.sqlite""#, argument: archive)
    #expect(run.status == 74, "\(run.stderr)")
    #expect(run.stderr.contains("disk is full"), "\(run.stderr)")
    // The statement that failed took several rows: its SQL is shown for one.
    #expect(!run.stderr.contains("), ("), "\(run.stderr)")
    #expect(left.isEmpty, "\(left)")
  }
}
