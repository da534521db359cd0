import DurableIO
import Foundation
import TestSupport
import Testing

@Suite("Kernel file locks")
struct FileLockTests {
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
