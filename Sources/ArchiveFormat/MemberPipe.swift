import Foundation
import PropertyList

/// A backup's members handed to a scan in the same process, without an archive between them:
/// a writer on one thread (``MemberSink``) and a reader on another (``MemberSource``, what
/// ``ArchiveScanner`` reads), at most `depth` members waiting, so memory stays bounded.
///
/// The members, their order and the index are those the writer would put in an archive, so the
/// scan checks them as it checks an archive's. The writer ends with ``finish()`` or
/// ``fail(_:)`` (the reader then gets the error); a reader that stops early calls
/// ``cancel()``, and the writer's next member throws.
package final class MemberPipe: MemberSink, MemberSource, @unchecked Sendable {
  /// Why a writer's member is refused after the reader stopped.
  package struct Cancelled: Error, CustomStringConvertible {
    package var description: String { "the reader of the members stopped" }
  }

  private let condition = NSCondition()
  private let depth: Int
  /// Guarded by `condition`.
  private var waiting: [MemberStream.Member] = []
  private var ended = false
  private var failure: (any Error)?
  private var cancelled = false
  /// The writer's members so far, for the index (the writer's thread only).
  private var entries: [MemberWriter.Entry] = []

  /// A pipe holding at most `depth` members between writer and reader.
  package init(depth: Int = 4) {
    self.depth = max(1, depth)
  }

  // MARK: The writer's side

  /// Hands one member over, waiting while `depth` wait already.
  /// - Throws: ``Cancelled`` once the reader has stopped.
  package func write(
    _ path: String, _ bytes: [UInt8], ranges: ChunkRanges?, spans: [ColumnSpan]
  ) throws {
    let sha256 = Checksum.sha256(bytes)
    var entry = MemberWriter.Entry(path: path, size: bytes.count, sha256: sha256)
    entry.ranges = ranges
    entries.append(entry)
    condition.lock()
    defer { condition.unlock() }
    while waiting.count >= depth && !cancelled { condition.wait() }
    guard !cancelled else { throw Cancelled() }
    waiting.append(MemberStream.Member(path: path, bytes: bytes, size: bytes.count, sha256: sha256))
    condition.broadcast()
  }

  /// The index of every member handed over, with the counts: what an archive ends with.
  package func index(formatVersion: Int64, counts: [String: Int], rows: [String: Int])
    -> PropertyListValue
  {
    ArchiveIndex.make(formatVersion: formatVersion, members: entries, counts: counts, rows: rows)
  }

  /// Ends the members: the reader gets nil after the last.
  package func finish() {
    end(nil)
  }

  /// Ends the members with `error`, which the reader gets after those already handed over.
  package func fail(_ error: any Error) {
    end(error)
  }

  private func end(_ error: (any Error)?) {
    condition.lock()
    ended = true
    failure = error
    condition.broadcast()
    condition.unlock()
  }

  // MARK: The reader's side

  /// The next member, waiting for the writer; nil after the last.
  /// - Throws: what the writer failed with, once the members before it were read.
  package func next(hash: Bool, wantBytes: (String) -> Bool) throws -> MemberStream.Member? {
    condition.lock()
    defer { condition.unlock() }
    while waiting.isEmpty && !ended { condition.wait() }
    guard !waiting.isEmpty else {
      if let failure { throw failure }
      return nil
    }
    let member = waiting.removeFirst()
    condition.broadcast()
    return member
  }

  /// Stops reading: the writer's next member throws ``Cancelled``, and what waits is dropped.
  package func cancel() {
    condition.lock()
    cancelled = true
    waiting.removeAll()
    condition.broadcast()
    condition.unlock()
  }
}
