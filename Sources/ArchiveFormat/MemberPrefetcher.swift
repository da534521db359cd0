import Foundation
import ObjectModel
import ObjectStore
import PropertyList

/// Reads an archive's members on a second thread, a few ahead of the caller, and decodes the
/// object chunks there too (once the model descriptor has gone by), so that a restore inserts
/// on one core while the next chunks are decompressed, checked and decoded on the other.
///
/// Members come out in archive order, exactly as ``MemberStream/next(hash:wantBytes:)`` gives
/// them (hashed, whole); an error on the reading side comes out where it happened. ``cancel()``
/// (or releasing the prefetcher) stops the reading thread and waits for it.
package final class MemberPrefetcher: @unchecked Sendable {
  /// A member, with its decoded objects when it is an object chunk.
  package struct Item {
    /// The member as read.
    package let member: MemberStream.Member
    /// The chunk's objects, when it is one and decoded without error (else the caller decodes
    /// it, and meets the error itself).
    package let objects: DecodedChunk?
  }

  private let stream: MemberStream
  private let condition = NSCondition()
  private var ready: [Result<Item?, any Error>] = []
  private var cancelled = false
  private var running = true
  private let depth: Int

  /// Starts reading `stream` with up to `depth` members read ahead.
  package init(stream: MemberStream, depth: Int = 1) {
    self.stream = stream
    self.depth = depth
    Thread.detachNewThread { [self] in run() }
  }

  deinit { cancel() }

  /// The next member, or nil after the last.
  /// - Throws: what reading or opening the archive threw, at the member where it happened.
  package func next() throws -> Item? {
    condition.lock()
    defer { condition.unlock() }
    while ready.isEmpty { condition.wait() }
    let first = ready.removeFirst()
    condition.broadcast()
    if case .success(nil) = first { ready.insert(first, at: 0) }  // the end stays the end
    if case .failure = first { ready.insert(first, at: 0) }
    return try first.get()
  }

  /// Stops the reading thread and waits until it has stopped.
  package func cancel() {
    condition.lock()
    cancelled = true
    condition.broadcast()
    while running { condition.wait() }
    condition.unlock()
  }

  private func run() {
    var model: ObjectModel?
    while true {
      condition.lock()
      while ready.count >= depth && !cancelled { condition.wait() }
      let stop = cancelled
      condition.unlock()
      if stop { break }
      let result: Result<Item?, any Error>
      do {
        if let member = try stream.next(hash: true, wantBytes: { _ in true }) {
          result = .success(Item(member: member, objects: decoded(member, model: &model)))
        } else {
          result = .success(nil)
        }
      } catch {
        result = .failure(error)
      }
      condition.lock()
      ready.append(result)
      condition.broadcast()
      condition.unlock()
      if case .success(let item) = result, item != nil { continue }
      break
    }
    condition.lock()
    running = false
    condition.broadcast()
    condition.unlock()
  }

  /// The objects of an object chunk, decoded with the model seen before it; nil for other
  /// members and for anything that does not decode (the caller then reports it).
  private func decoded(_ member: MemberStream.Member, model: inout ObjectModel?)
    -> DecodedChunk?
  {
    guard let bytes = member.bytes else { return nil }
    if member.path == ArchiveLayout.modelDescriptor {
      model = (try? PropertyListValue(binaryPropertyList: bytes)).flatMap {
        try? ModelDescriptor.decode($0)
      }
      return nil
    }
    guard let model, member.path.hasPrefix("objects/") else { return nil }
    return try? RecordDecoder(model: model, member: member.path).decodeObjects(bytes)
  }
}
