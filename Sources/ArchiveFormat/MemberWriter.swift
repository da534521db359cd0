import Foundation
import LibArchive
import PropertyList

/// Writes archive members and keeps the index: each member's size and SHA-256, in order.
///
/// With a seal, every member is sealed (``ArchiveSeal``) under its own name, the header inside
/// the clear header; the index lists each member's path, size and SHA-256 as without one.
///
/// Hashing, compressing, sealing and writing happen on a second thread while the caller encodes the next
/// member: at most two members wait, so memory stays bounded. A failure there is thrown by the
/// next call.
package final class MemberWriter: MemberSink, @unchecked Sendable {
  package struct Entry {
    package let path: String
    package let size: Int
    package let sha256: String
    /// Where its frame is, in a framed archive (``FramedStream``).
    package var place: FramedStream.Place? = nil
    /// What it holds by key, for a chunk of objects (``ChunkRanges``).
    package var ranges: ChunkRanges? = nil
    /// Its frames, when a framed archive gave it several (``MemberFrames``).
    package var frames: MemberFrames? = nil
    /// Where its tar records are and its position, in a sealed archive whose writer counts
    /// the bytes written (what its ``SealedTrailer`` names for the index).
    package var sealedAt: SealedTrailer? = nil
  }

  private let archive: ArchiveWriter
  private let modificationTime: Int64
  private let seal: ArchiveSeal?
  private let frames: FramedStream?
  /// The bytes of the archive written so far, for a sealed archive's places.
  private let tally: (() -> Int64)?
  /// The archive's format version, written in the index (and a sealed archive's clear header).
  private let formatVersion: Int64
  /// Used on the second thread only.
  private var position: UInt64 = 0
  private let worker = DispatchQueue(label: "graphvault.archive-writer")
  private let slots = DispatchSemaphore(value: 2)
  private let lock = NSLock()
  /// Guarded by `lock`.
  private var written: [Entry] = []
  /// Guarded by `lock`.
  private var failure: (any Error)?

  /// A writer of `archive`'s members in format `formatVersion`, sealed with `seal` when there
  /// is one; when `frames` is given (the archive writes its tar stream into it), each member
  /// becomes one frame, and the index says where. With a seal and `tally` (the bytes an
  /// unblocked `archive` has written so far), each entry says where its records are
  /// (``Entry/sealedAt``).
  package init(
    archive: ArchiveWriter, modificationTime: Int64, seal: ArchiveSeal? = nil,
    frames: FramedStream? = nil, formatVersion: Int64 = ArchiveLayout.formatVersion,
    tally: (() -> Int64)? = nil
  ) {
    self.archive = archive
    self.modificationTime = modificationTime
    self.seal = seal
    self.frames = frames
    self.formatVersion = formatVersion
    self.tally = tally
  }

  /// Queues one member (a chunk of objects with its ranges, for the index, and in a framed
  /// archive the spans of its large columns, each given a frame); throws the error of an
  /// earlier member, if one failed.
  package func write(
    _ path: String, _ bytes: [UInt8], ranges: ChunkRanges?, spans: [ColumnSpan]
  ) throws {
    try rethrow()
    slots.wait()
    worker.async { [self] in
      defer { slots.signal() }
      guard lock.withLock({ failure == nil }) else { return }
      do {
        var sealedAt: SealedTrailer?
        if let seal {
          let start = tally?()
          var sealed = try seal.seal(bytes, path: path, position: position)
          if position == 0 {
            // The real header travels sealed inside the clear one.
            guard path == ArchiveLayout.header else {
              throw ArchiveFormatError(
                member: path, "a sealed archive must begin with \(ArchiveLayout.header)")
            }
            sealed = seal.clearHeader(sealedHeader: sealed, formatVersion: formatVersion)
              .binaryPropertyList()
          }
          try archive.writeEntry(
            path: path, contents: sealed, modificationTime: modificationTime)
          if let start, let end = tally?() {
            sealedAt = SealedTrailer(offset: start, length: end - start, position: position)
          }
          position += 1
        } else {
          try archive.writeEntry(
            path: path, contents: bytes, modificationTime: modificationTime)
        }
        var entry = Entry(path: path, size: bytes.count, sha256: Checksum.sha256(bytes))
        if let frames {
          (entry.place, entry.frames) = try frames.cut(contentSize: bytes.count, spans: spans)
        }
        entry.ranges = ranges
        entry.sealedAt = sealedAt
        lock.withLock { written.append(entry) }
        ChunkBufferPool.shared.giveBack(bytes)
      } catch {
        lock.withLock { failure = error }
      }
    }
  }

  /// Waits until every queued member is written; throws the first failure.
  package func finish() throws {
    drain()
    try rethrow()
  }

  /// Waits until the second thread is idle (before the archive's file is closed, whatever
  /// happened).
  package func drain() {
    worker.sync {}
  }

  /// The members written so far (after ``finish()``, all of them).
  package var entries: [Entry] { lock.withLock { written } }

  private func rethrow() throws {
    if let failure = lock.withLock({ failure }) { throw failure }
  }

  /// The index of every member, once all are written.
  package func index(counts: [String: Int], rows: [String: Int]) throws -> PropertyListValue {
    try finish()
    return ArchiveIndex.make(
      formatVersion: formatVersion, members: entries, counts: counts, rows: rows)
  }
}
