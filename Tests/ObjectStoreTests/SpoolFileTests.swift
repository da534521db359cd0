import Foundation
import TestSupport
import Testing

@testable import ObjectStore

#if os(Linux)
  import CFile
#endif

/// A spool gives its entries back in the order written, whatever their sizes, and gives the
/// disk of what was read back to the file system as it goes: a restore's spool of a shared
/// table then never takes as much disk as the table beside it.
@Suite("Spool files")
struct SpoolFileTests {
  /// Entries of sizes from empty to past the spool's 1 MiB buffer, with their keys.
  static func entries() -> [(Int64, [UInt8])] {
    var sizes = Array(0..<40) + [1 << 20, (1 << 20) - 11, 3 << 20]
    sizes += Array(repeating: 5_000, count: 900)
    return sizes.enumerated().map { index, size in
      (Int64(index * 7 - 50), (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ index) })
    }
  }

  @Test("entries come back in the order written, with their keys and bytes")
  func entriesComeBackInOrder() throws {
    let directory = try TemporaryDirectory()
    let spool = try SpoolFile(in: directory.url.path)
    let written = Self.entries()
    for (key, bytes) in written { try spool.append(key, bytes) }
    try spool.flush()
    var read: [(Int64, [UInt8])] = []
    while try spool.advance() {
      read.append((spool.key, spool.withBytes { Array($0) }))
    }
    #expect(read.map(\.0) == written.map(\.0))
    #expect(read.map(\.1) == written.map(\.1))
    // Nothing of it in the folder: the file has no name.
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
  }

  @Test(
    "what was read is given back to the file system as the spool is read",
    .enabled(if: Self.punchesHoles, "the temporary folder's file system cannot punch holes"))
  func readBytesAreGivenBack() throws {
    let directory = try TemporaryDirectory()
    let spool = try SpoolFile(in: directory.url.path)
    for (key, bytes) in Self.entries() { try spool.append(key, bytes) }
    try spool.flush()
    let full = spool.allocatedBytes
    #expect(full > 8 << 20)
    var entries = 0
    var halfway: Int64 = 0
    while try spool.advance() {
      entries += 1
      if entries == 470 { halfway = spool.allocatedBytes }
    }
    #expect(halfway < full - (4 << 20))
    // All read: at most what one read holds is left.
    #expect(spool.allocatedBytes <= 4 << 20)
  }

  /// Whether the file system of the temporary folder punches holes (ext4, XFS, tmpfs, Btrfs
  /// do; some do not, and a spool there keeps its bytes until it is closed), asked of the file
  /// system itself, not of the spool.
  static var punchesHoles: Bool {
    #if os(Linux)
      guard let directory = try? TemporaryDirectory() else { return false }
      let path = directory.url.appendingPathComponent("holes").path
      guard FileManager.default.createFile(atPath: path, contents: Data(count: 1 << 20)) else {
        return false
      }
      let descriptor = open(path, O_RDWR)
      guard descriptor >= 0 else { return false }
      defer { close(descriptor) }
      func allocated() -> Int {
        var status = stat()
        return fstat(descriptor, &status) == 0 ? Int(status.st_blocks) * 512 : 0
      }
      let before = allocated()
      guard gv_punch_hole(descriptor, 0, 1 << 20) == 0 else { return false }
      return allocated() < before / 2
    #else
      return false
    #endif
  }
}
