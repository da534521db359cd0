import ArchiveFormat
import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// Members handed from a writer to a reader in the same process (what a framed archive's
/// first members are checked through): bounded, and stopped cleanly from either end.
@Suite("Members handed over in memory")
struct MemberPipeTests {
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
