import ArchiveFormat
import Foundation
import Testing

@Suite("Members read one ahead of the scan")
struct ReadAheadMembersTests {
  /// Members made on demand, counting the calls, failing at `failingAt` when given.
  final class CountingSource: MemberSource, @unchecked Sendable {
    let count: Int
    let failingAt: Int?
    private let lock = NSLock()
    private var made = 0
    private(set) var threads: Set<UInt> = []

    init(count: Int, failingAt: Int? = nil) {
      self.count = count
      self.failingAt = failingAt
    }

    var calls: Int { lock.withLock { made } }

    struct Broken: Error, Equatable { let at: Int }

    func next(hash: Bool, wantBytes: (String) -> Bool) throws -> MemberStream.Member? {
      let number = lock.withLock {
        made += 1
        threads.insert(UInt(pthread_self()))
        return made
      }
      if number == failingAt { throw Broken(at: number) }
      guard number <= count else { return nil }
      let bytes = Array("member \(number)".utf8)
      return MemberStream.Member(
        path: "objects/T/\(number).plist", bytes: bytes, size: bytes.count,
        sha256: hash ? "hash \(number)" : nil)
    }
  }

  @Test func membersComeInTheirOrderWithTheirBytesAndHashesAndThenTheEnd() throws {
    let source = CountingSource(count: 5)
    let ahead = ReadAheadMembers(source)
    var paths: [String] = []
    // Whatever the caller asks, every member comes with its bytes and its hash.
    while let member = try ahead.next(hash: false, wantBytes: { _ in false }) {
      paths.append(member.path)
      #expect(member.bytes == Array("member \(paths.count)".utf8))
      #expect(member.sha256 == "hash \(paths.count)")
    }
    #expect(paths == (1...5).map { "objects/T/\($0).plist" })
    #expect(try ahead.next(hash: true, wantBytes: { _ in true }) == nil)
  }

  @Test func anErrorComesWhereItHappenedAfterTheMembersBeforeIt() throws {
    let ahead = ReadAheadMembers(CountingSource(count: 9, failingAt: 4))
    for number in 1...3 {
      #expect(
        try ahead.next(hash: true, wantBytes: { _ in true })?.path == "objects/T/\(number).plist")
    }
    #expect(throws: CountingSource.Broken(at: 4)) {
      try ahead.next(hash: true, wantBytes: { _ in true })
    }
    // And again: the end stays the end.
    #expect(throws: CountingSource.Broken(at: 4)) {
      try ahead.next(hash: true, wantBytes: { _ in true })
    }
  }

  @Test func atMostOneMemberIsReadAheadAndAReaderLetGoStopsReading() throws {
    let source = CountingSource(count: 1_000)
    var ahead: ReadAheadMembers? = ReadAheadMembers(source)
    _ = try ahead?.next(hash: true, wantBytes: { _ in true })
    _ = try ahead?.next(hash: true, wantBytes: { _ in true })
    // Two taken, one waiting, one being read at most.
    Thread.sleep(forTimeInterval: 0.2)
    #expect(source.calls <= 4)
    ahead = nil
    let stopped = source.calls
    Thread.sleep(forTimeInterval: 0.1)
    #expect(source.calls == stopped)
    // The first member was read on the caller's thread, the rest on another.
    #expect(source.threads.count == 2)
  }
}
