import DurableIO
import Foundation
import GraphVault
import TestSupport
import Testing

/// A run that is killed leaves its scratch folder behind; the next run removes it, and never a
/// folder whose run is alive, one that is not a scratch folder, or one that is not the user's.
@Suite("Scratch folders left by killed runs")
struct ScratchSweepTests {
  let folder: TemporaryDirectory
  let now = Date()

  init() throws {
    folder = try TemporaryDirectory()
  }

  /// Makes a folder as a run makes one, with an owner file (not locked) unless `owner` is
  /// false, last changed `age` seconds ago.
  @discardableResult
  func leave(_ name: String, owner: Bool = true, age: TimeInterval) throws -> String {
    let path = folder.path(name).path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    try Data("work".utf8).write(to: URL(fileURLWithPath: path + "/source.sqlite"))
    if owner {
      try Data().write(to: URL(fileURLWithPath: path + "/" + ScratchFolder.ownerFile))
    }
    try setAge(path, age)
    return path
  }

  func setAge(_ path: String, _ seconds: TimeInterval) throws {
    try FileManager.default.setAttributes(
      [.modificationDate: now.addingTimeInterval(-seconds)], ofItemAtPath: path)
  }

  func remaining() throws -> Set<String> {
    Set(try FileManager.default.contentsOfDirectory(atPath: folder.url.path))
  }

  @Test func aFolderWhoseOwnerLockNoOneHoldsIsRemovedOnceItHasSettled() throws {
    let gone = "graphvault-\(UUID().uuidString)"
    let fixture = "graphvault-fixture-\(UUID().uuidString)"
    let fresh = "graphvault-\(UUID().uuidString)"
    try leave(gone, age: ScratchFolder.settleTime + 1)
    try leave(fixture, age: 3600)
    try leave(fresh, age: 1)
    let removed = ScratchFolder.sweepAbandoned(in: folder.url, now: now)
    #expect(Set(removed) == [gone, fixture])
    #expect(try remaining() == [fresh])
  }

  @Test func aFolderWhoseRunHoldsItsOwnerLockIsKeptHoweverOld() throws {
    let alive = "graphvault-\(UUID().uuidString)"
    let path = try leave(alive, age: 0)
    // The run's lock, taken as a run takes it; closing the descriptor is the run ending.
    let owner = open(path + "/" + ScratchFolder.ownerFile, O_RDWR | O_CLOEXEC)
    try #require(owner >= 0 && flock(owner, LOCK_EX) == 0)
    try setAge(path, 7 * 24 * 3600)
    #expect(ScratchFolder.sweepAbandoned(in: folder.url, now: now).isEmpty)
    #expect(try remaining() == [alive])
    close(owner)
    // A process another test starts meanwhile holds a copy of the descriptor, and so the
    // lock, until it runs its program (`O_CLOEXEC`): the sweep may have to look again.
    var swept: [String] = []
    #expect(
      RunningProcess.eventually(within: 10) {
        swept += ScratchFolder.sweepAbandoned(in: folder.url, now: now)
        return !swept.isEmpty
      })
    #expect(swept == [alive])
  }

  @Test func aFolderWithoutAnOwnerFileIsRemovedOnlyAfterADay() throws {
    let old = "graphvault-\(UUID().uuidString)"
    let recent = "graphvault-\(UUID().uuidString)"
    try leave(old, owner: false, age: ScratchFolder.ownerlessAge + 1)
    try leave(recent, owner: false, age: ScratchFolder.ownerlessAge - 60)
    #expect(ScratchFolder.sweepAbandoned(in: folder.url, now: now) == [old])
    #expect(try remaining() == [recent])
  }

  @Test func whatIsNotAScratchFolderIsNeverTouched() throws {
    let others = [
      "graphvault-test-\(UUID().uuidString)", "graphvault-\(UUID().uuidString)x",
      "graphvault-fuzz-sources-\(UUID().uuidString)", "graphvault-not-a-uuid",
      "Library-\(UUID().uuidString)",
    ]
    for name in others { try leave(name, age: 30 * 24 * 3600) }
    // A link with a scratch folder's name, to a folder that looks abandoned, is not followed.
    let target = try leave("elsewhere", age: 30 * 24 * 3600)
    let link = "graphvault-\(UUID().uuidString)"
    try FileManager.default.createSymbolicLink(
      atPath: folder.path(link).path, withDestinationPath: target)
    // A plain file with a scratch folder's name.
    let file = "graphvault-\(UUID().uuidString)"
    try Data().write(to: folder.path(file))
    try setAge(folder.path(file).path, 30 * 24 * 3600)
    #expect(ScratchFolder.sweepAbandoned(in: folder.url, now: now).isEmpty)
    #expect(try remaining() == Set(others + ["elsewhere", link, file]))
    #expect(FileManager.default.fileExists(atPath: target + "/source.sqlite"))
  }

  @Test func namesAreScratchNamesOnlyWithAKnownKindAndAWholeUUID() {
    let uuid = UUID().uuidString
    #expect(ScratchFolder.isScratchName("graphvault-\(uuid)"))
    #expect(ScratchFolder.isScratchName("graphvault-fixture-\(uuid)"))
    #expect(!ScratchFolder.isScratchName("graphvault-test-\(uuid)"))
    #expect(!ScratchFolder.isScratchName("graphvault--\(uuid)"))
    #expect(!ScratchFolder.isScratchName("xgraphvault-\(uuid)"))
    #expect(!ScratchFolder.isScratchName("graphvault-\(uuid.dropLast())"))
  }

  @Test func aScratchFolderHoldsItsOwnerLockAndLeavesNothingWhenReleased() throws {
    var scratch: ScratchFolder? = try ScratchFolder()
    let path = try #require(scratch).url.path
    #expect(!FileLock.isUnheld(path + "/" + ScratchFolder.ownerFile))
    #expect(FileManager.default.fileExists(atPath: path + "/" + ScratchFolder.ownerFile))
    scratch = nil
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  @Test func aFolderRemovedWhileAnotherThreadMakesAndRemovesFilesInItIsGoneWithNothingLeft()
    throws
  {
    for round in 0..<20 {
      let path = try leave("graphvault-\(UUID().uuidString)", age: 0)
      for index in 0..<200 {
        try Data("x".utf8).write(to: URL(fileURLWithPath: "\(path)/old-\(index)"))
      }
      // A writer busy in the folder by path, as a run's main thread is when a signal comes.
      let finished = DispatchSemaphore(value: 0)
      let writer = Thread {
        var index = 0
        while !Thread.current.isCancelled {
          let file = "\(path)/new-\(round)-\(index % 8)"
          let descriptor = open(file, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
          if descriptor >= 0 { close(descriptor) }
          unlink("\(path)/new-\(round)-\((index + 4) % 8)")
          index += 1
        }
        finished.signal()
      }
      writer.start()
      usleep(2_000)
      ScratchFolder.removeInUse(path)
      writer.cancel()
      finished.wait()
      let left = try remaining()
      #expect(left.isEmpty, "round \(round): \(left)")
    }
  }
}
