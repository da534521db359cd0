import ArchiveFormat
import Foundation
import GraphVault
import TestSupport
import Testing

/// A framed archive read where reads cost more than their bytes (object storage): the trailer
/// and the index in one read, frames that follow each other in one read up to the span.
@Suite("Framed archives read by spans")
struct FramedArchiveSpanTests {
  /// The bytes of a backup of a generated store.
  static func archive() throws -> [UInt8] {
    let directory = try TemporaryDirectory()
    let store = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: store, objects: 3_000)
    var options = BackupService.Options()
    options.output = directory.path("Library.gvault").path
    let written = try BackupService.backup(storePath: store, options: options)
    return [UInt8](try Data(contentsOf: URL(fileURLWithPath: written.archive)))
  }

  /// Counts the reads made of `bytes`.
  final class Reads {
    var count = 0
    var bytes = 0
  }

  static func open(_ bytes: [UInt8], span: Int, counting reads: Reads) throws -> FramedArchive {
    try #require(
      try FramedArchive(size: Int64(bytes.count), name: "Library.gvault", span: span) {
        offset, count, into in
        reads.count += 1
        let end = min(bytes.count, Int(offset) + count)
        into = Array(bytes[Int(offset)..<end])
        reads.bytes += into.count
      })
  }

  @Test func framesThatFollowEachOtherAreReadTogetherAndGiveWhatEachReadAloneGives() throws {
    let bytes = try Self.archive()
    let (alone, together) = (Reads(), Reads())
    let one = try Self.open(bytes, span: 0, counting: alone)
    let spanned = try Self.open(bytes, span: 1 << 20, counting: together)
    // Opened: the trailer, then the index; or both in the archive's last few KiB.
    #expect(alone.count == 2)
    #expect(together.count == 1)
    #expect(one.members.count > 8)
    var contents: [String: [UInt8]] = [:]
    try one.read(one.members) { member, content in contents[member.path] = content }
    var again: [String: [UInt8]] = [:]
    try spanned.read(spanned.members) { member, content in again[member.path] = content }
    #expect(contents == again)
    #expect(contents.count == one.members.count)
    #expect(alone.count == 2 + one.members.count)
    let frames = one.members.reduce(0) { $0 + Int($1.place.length) }
    #expect(together.count <= 1 + frames / (1 << 20) + 1, "\(together.count) reads")
    // Nothing is read twice, and what is counted is what was read.
    #expect(together.bytes == Int(spanned.bytesRead))
    #expect(together.bytes <= frames + (4 << 10))
    // Members that do not follow each other are read one by one.
    let apart = stride(from: 0, to: spanned.members.count, by: 2).map { spanned.members[$0] }
    let before = together.count
    try spanned.read(apart) { member, content in #expect(content == contents[member.path]) }
    #expect(together.count - before == apart.count)
  }
}
