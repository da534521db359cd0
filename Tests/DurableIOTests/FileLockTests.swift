import Foundation
import TestSupport
import Testing

@testable import DurableIO

@Suite("Kernel file locks")
struct FileLockTests {
  /// The time a lock file records is what Foundation's ISO 8601 formatter says of it.
  @Test func theTimeALockRecordsIsISO8601InUTC() {
    let formatter = ISO8601DateFormatter()
    for seconds in [0, 951_782_400, 1_795_000_334, 4_102_444_799] {
      #expect(
        FileLock.utcTimestamp(time_t(seconds))
          == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))))
    }
  }

  @Test func aSecondTakerIsRefusedNamingTheHolder() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path(".lock").path
    let first = try FileLock(path: path)
    #expect {
      _ = try FileLock(path: path)
    } throws: { error in
      guard case .held(let holder) = error as? FileLock.Failure else { return false }
      return holder.pid == getpid() && holder.host != nil && holder.since != nil
        && holder.description.contains("pid \(getpid())")
    }
    first.release()
    _ = try FileLock(path: path)
  }

  @Test func aWaitingTakerGetsTheLockOnceItIsReleased() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path(".lock").path
    let first = try FileLock(path: path)
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { first.release() }
    let second = try FileLock(path: path, wait: 10)
    second.release()
  }

  @Test func aLockOfAKilledProcessDoesNotBlock() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path(".lock").path
    // A holder that is killed with SIGKILL while it holds the lock.
    let result = try Subprocess.python(
      """
      import fcntl, os, sys
      f = open(sys.argv[1], "w")
      fcntl.flock(f, fcntl.LOCK_EX)
      f.write("999999 elsewhere 2026-01-01T00:00:00Z\\n"); f.flush()
      os.kill(os.getpid(), 9)
      """, [path])
    #expect(result.status != 0)
    let lock = try FileLock(path: path)
    lock.release()
  }

  @Test func sharedHoldersExcludeOnlyAnExclusiveTaker() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path(".folder.lock").path
    let first = try FileLock(path: path, shared: true)
    let second = try FileLock(path: path, shared: true)
    #expect(throws: FileLock.Failure.self) { _ = try FileLock(path: path) }
    first.release()
    #expect(throws: FileLock.Failure.self) { _ = try FileLock(path: path) }
    second.release()
    let exclusive = try FileLock(path: path)
    #expect(throws: FileLock.Failure.self) { _ = try FileLock(path: path, shared: true) }
    exclusive.release()
  }

  @Test func theLastSharedHolderRemovesTheLockFileAndEarlierOnesLeaveIt() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path(".folder.lock").path
    let first = try FileLock(path: path, shared: true)
    let second = try FileLock(path: path, shared: true)
    first.release()
    #expect(FileManager.default.fileExists(atPath: path))
    // The file left is still the lock: an exclusive taker is refused while the second holds it.
    #expect(throws: FileLock.Failure.self) { _ = try FileLock(path: path) }
    second.release()
    #expect(!FileManager.default.fileExists(atPath: path))
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
  }

  /// Threads taking shared and exclusive locks on one file over and over, each removing it as
  /// it goes: no exclusive holder ever overlaps another holder, no taker that waits is refused,
  /// and nothing is left.
  @Test func manyTakersRemovingTheFileAsTheyGoNeverOverlapAnExclusiveHolder() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path(".folder.lock").path
    let tally = Tally()
    DispatchQueue.concurrentPerform(iterations: 8) { worker in
      for round in 0..<40 {
        let exclusive = (worker + round) % 4 == 0
        do {
          let lock = try FileLock(path: path, shared: !exclusive, wait: 30)
          tally.take(exclusive: exclusive)
          usleep(UInt32(200 + (worker * 37 + round * 11) % 500))
          tally.leave(exclusive: exclusive)
          lock.release()
        } catch {
          tally.fail("\(error)")
        }
      }
    }
    #expect(tally.overlaps == 0)
    #expect(tally.failures.isEmpty, "\(tally.failures)")
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func aSharedTakerThatDoesNotWaitIsNotRefusedByAHolderLettingGo() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path(".folder.lock").path
    // Holders come and go while takers that do not wait arrive: the only holders are shared,
    // so no taker may be refused, whatever instant it arrives at.
    let tally = Tally()
    DispatchQueue.concurrentPerform(iterations: 6) { _ in
      for _ in 0..<60 {
        do {
          let lock = try FileLock(path: path, shared: true)
          lock.release()
        } catch {
          tally.fail("\(error)")
        }
      }
    }
    #expect(tally.failures.isEmpty, "\(tally.failures)")
  }

  @Test func anExclusiveHolderRemovesItsLockFileAndAWaiterStillGetsALockOthersSee() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path(".store.lock").path
    let first = try FileLock(path: path)
    DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) { first.release() }
    // The waiter opened the file before it was removed; it must end up holding the new one.
    let second = try FileLock(path: path, wait: 10)
    #expect(FileManager.default.fileExists(atPath: path))
    #expect(throws: FileLock.Failure.self) { _ = try FileLock(path: path) }
    second.release()
    #expect(!FileManager.default.fileExists(atPath: path))
  }
}

/// Who holds a lock at once, counted by the takers of a concurrency test.
final class Tally: @unchecked Sendable {
  private let guardian = NSLock()
  private var shared = 0
  private var exclusive = 0
  private var overlapCount = 0
  private var failureTexts: [String] = []

  var overlaps: Int { guardian.withLock { overlapCount } }
  var failures: [String] { guardian.withLock { failureTexts } }

  func take(exclusive taking: Bool) {
    guardian.withLock {
      if exclusive > 0 || (taking && shared > 0) { overlapCount += 1 }
      if taking { exclusive += 1 } else { shared += 1 }
    }
  }

  func leave(exclusive leaving: Bool) {
    guardian.withLock {
      if leaving { exclusive -= 1 } else { shared -= 1 }
    }
  }

  func fail(_ text: String) {
    guardian.withLock { failureTexts.append(text) }
  }

  /// A secret file of another's that a planted name points at, with its bytes and mode.
  func secret(in directory: TemporaryDirectory) throws -> String {
    let secret = directory.path("secret").path
    try Data("root's secret\n".utf8).write(to: URL(fileURLWithPath: secret))
    chmod(secret, 0o600)
    return secret
  }

  func isUntouched(_ secret: String) throws -> Bool {
    let attributes = try FileManager.default.attributesOfItem(atPath: secret)
    return try String(contentsOfFile: secret, encoding: .utf8) == "root's secret\n"
      && (attributes[.posixPermissions] as? Int) == 0o600
  }

  @Test(arguments: [false, true])
  func aSymbolicLinkPlantedAtTheLocksNameIsRefusedAndItsTargetUntouched(shared: Bool) throws {
    let directory = try TemporaryDirectory()
    let secret = try secret(in: directory)
    let path = directory.path(".lock").path
    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: secret)
    #expect {
      _ = try FileLock(path: path, shared: shared)
    } throws: { error in
      guard case .io(let failure) = error as? FileLock.Failure else { return false }
      return failure.description.contains("symbolic link")
    }
    #expect(try isUntouched(secret))
    // A dangling link is not followed into a new file either.
    let dangling = directory.path(".dangling.lock").path
    try FileManager.default.createSymbolicLink(
      atPath: dangling, withDestinationPath: directory.path("made-by-us").path)
    #expect(throws: FileLock.Failure.self) { _ = try FileLock(path: dangling, shared: shared) }
    #expect(!FileManager.default.fileExists(atPath: directory.path("made-by-us").path))
  }

  @Test func aHardLinkOrAPipePlantedAtTheLocksNameIsRefused() throws {
    let directory = try TemporaryDirectory()
    let secret = try secret(in: directory)
    let linked = directory.path(".linked.lock").path
    #expect(link(secret, linked) == 0)
    #expect {
      _ = try FileLock(path: linked)
    } throws: { error in
      "\(error)".contains("not a plain file with one name")
    }
    #expect(try isUntouched(secret))
    let pipe = directory.path(".pipe.lock").path
    #expect(mkfifo(pipe, 0o600) == 0)
    #expect(throws: FileLock.Failure.self) { _ = try FileLock(path: pipe) }
  }

  @Test func aPlainFileThatHoldsSomethingElseIsLockedButNotOverwritten() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path(".lock").path
    try Data("not a holder line".utf8).write(to: URL(fileURLWithPath: path))
    let lock = try FileLock(path: path)
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "not a holder line")
    lock.release()
  }
}
