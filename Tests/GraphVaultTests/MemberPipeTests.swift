import ArchiveFormat
import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// A backup's members handed to a restore's scan in the same process (what `diff` and `merge`
/// across model versions migrate a store with): the same store as through an archive, bounded,
/// and stopped cleanly from either end.
@Suite("Members handed over in memory")
struct MemberPipeTests {
  @Test func aStoreHandedThroughAPipeRestoresAsItsArchiveDoes() throws {
    let directory = try TemporaryDirectory()
    let source = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: source, objects: 6_000)
    var backup = BackupService.Options()
    backup.output = Location(path: directory.path("Library.gvault").path)
    let archive = try BackupService.backup(storePath: source, options: backup).archive
    let viaArchive = directory.path("via-archive.sqlite").path
    let restored = try RestoreService.restore(archive: Location(path: archive), to: viaArchive)

    let store = try CoreDataStore(path: source)
    let model = try SampleLibrary.model()
    let pipe = MemberPipe(depth: 2)
    let done = BackupService.startWritingMembers(of: store, model: model, into: pipe)
    let viaPipe = directory.path("via-pipe.sqlite").path
    let piped = try RestoreService.restore(
      members: pipe, named: "a copy", to: viaPipe, options: RestoreOptions())
    done.wait()
    #expect(piped.objects == restored.objects)
    #expect(piped.objects.values.reduce(0, +) == 6_000)
    #expect(try storeRows(viaPipe) == storeRows(viaArchive))
  }

  @Test func aWritersFailureReachesTheReaderAndNothingIsPublished() throws {
    let directory = try TemporaryDirectory()
    struct Broken: Error {}
    let pipe = MemberPipe()
    try pipe.write(ArchiveLayout.header, [1, 2, 3])
    pipe.fail(Broken())
    let destination = directory.path("never.sqlite").path
    #expect(throws: (any Error).self) {
      try RestoreService.restore(
        members: pipe, named: "a copy", to: destination, options: RestoreOptions())
    }
    #expect(!FileManager.default.fileExists(atPath: destination))
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
  }

  /// What a writer thread got through.
  final class Progress: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var cancelled = false
    var written: Int { lock.withLock { count } }
    var stopped: Bool { lock.withLock { cancelled } }
    func wrote() { lock.withLock { count += 1 } }
    func stop() { lock.withLock { cancelled = true } }
  }

  @Test func atMostDepthMembersWaitAndAStoppedReaderStopsTheWriter() throws {
    let pipe = MemberPipe(depth: 2)
    let progress = Progress()
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
      do {
        for number in 0..<10 {
          try pipe.write("objects/Tag/\(number)", [UInt8(number)])
          progress.wrote()
        }
      } catch is MemberPipe.Cancelled {
        progress.stop()
      } catch {}
      done.signal()
    }
    Thread.sleep(forTimeInterval: 0.2)
    #expect(progress.written <= 2)
    let first = try #require(try pipe.next(hash: true) { _ in true })
    #expect(first.path == "objects/Tag/0")
    #expect(first.sha256 == Checksum.sha256([0]))
    pipe.cancel()
    done.wait()
    #expect(progress.stopped)
    #expect(progress.written < 10)
  }
}
