internal import Bytes
import Foundation
import SQLite

#if os(Linux)
  internal import CFile
#endif

/// Entries (a key and its bytes) written to a file that has no name, then read back in the
/// order they were written: rows that must wait for their turn without being held in memory.
///
/// The file is removed from its folder as soon as it is made, so nothing of it outlives the
/// process, however it ends.
final class SpoolFile {
  private let descriptor: Int32
  /// Where the file was made (the error names it).
  let folder: String
  private var buffer: [UInt8] = []
  private var written: Int64 = 0
  private var readOffset: Int64 = 0
  private var readBuffer: [UInt8] = []
  private var readStart = 0
  private static let bufferSize = 1 << 20

  /// Makes a spool in `folder`.
  /// - Throws: ``StoreError`` when no file can be made there.
  init(in folder: String) throws(StoreError) {
    self.folder = folder
    descriptor = try Self.unnamedFile(in: folder, named: "spool", for: "a spool file")
    buffer.reserveCapacity(Self.bufferSize)
  }

  /// Makes a file in `folder` (`.graphvault-NAME-…` while it has a name) and removes its name
  /// at once, so that nothing of it outlives the process; returns its descriptor.
  /// - Throws: ``StoreError`` saying it cannot make `what` there.
  static func unnamedFile(in folder: String, named name: String, for what: String)
    throws(StoreError) -> Int32
  {
    var template = Array((folder + "/.graphvault-\(name)-XXXXXX").utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard descriptor >= 0 else {
      throw StoreError(
        .database, "cannot make \(what)", path: folder,
        underlying: SQLiteError.fileFailure(writing: true, path: folder))
    }
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    return descriptor
  }

  deinit { close(descriptor) }

  /// The bytes of disk the file takes now (what was written and not yet given back).
  var allocatedBytes: Int64 {
    var status = stat()
    guard fstat(descriptor, &status) == 0 else { return 0 }
    return Int64(status.st_blocks) * 512
  }

  /// Appends an entry.
  /// - Throws: ``StoreError`` when the file cannot be written.
  func append(_ key: Int64, _ bytes: [UInt8]) throws(StoreError) {
    withUnsafeBytes(of: key.littleEndian) { buffer.append(contentsOf: $0) }
    withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { buffer.append(contentsOf: $0) }
    buffer.append(contentsOf: bytes)
    if buffer.count >= Self.bufferSize { try flush() }
  }

  /// Writes what waits; the entries can be read from the start once this is done.
  /// - Throws: ``StoreError`` when the file cannot be written.
  func flush() throws(StoreError) {
    do {
      try PositionalWrite.write(buffer, to: descriptor, at: written, path: folder)
    } catch {
      throw StoreError(.database, "cannot write a spool file", path: folder, underlying: error)
    }
    written += Int64(buffer.count)
    buffer.removeAll(keepingCapacity: true)
  }

  /// The key of the entry ``advance()`` read.
  private(set) var key: Int64 = 0
  /// Where that entry's bytes are in the read buffer.
  private var current: Range<Int> = 0..<0

  /// Reads the next entry (``key``, ``withBytes(_:)``); false after the last.
  /// - Throws: ``StoreError`` when the file cannot be read or ends inside an entry.
  func advance() throws(StoreError) -> Bool {
    readStart = current.upperBound
    guard try fill(12) else { return false }
    let (key, length) = readBuffer.withUnsafeBytes {
      (
        Int64(littleEndian: $0.loadUnaligned(fromByteOffset: readStart, as: Int64.self)),
        Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: readStart + 8, as: UInt32.self)))
      )
    }
    guard try fill(12 + length) else {
      throw StoreError(.database, "a spool file ends inside an entry", path: folder)
    }
    self.key = key
    current = (readStart + 12)..<(readStart + 12 + length)
    return true
  }

  /// Runs `body` on the bytes of the entry ``advance()`` read.
  func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try readBuffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[current])) }
  }

  /// Makes `count` bytes from `readStart` available; false at the end of the file.
  private func fill(_ count: Int) throws(StoreError) -> Bool {
    if readBuffer.count - readStart >= count { return true }
    readBuffer.removeSubrange(0..<readStart)
    readStart = 0
    current = 0..<0
    while readBuffer.count < count && readOffset < written {
      let want = max(count - readBuffer.count, Self.bufferSize)
      let old = readBuffer.count
      readBuffer.appendZeros(count: want)
      let got = readBuffer.withUnsafeMutableBytes {
        pread(descriptor, $0.baseAddress! + old, want, off_t(readOffset))
      }
      guard got >= 0 else {
        throw StoreError(
          .database, "cannot read a spool file", path: folder,
          underlying: SQLiteError.fileFailure(writing: false, path: folder))
      }
      readBuffer.removeLast(want - got)
      release(from: readOffset, count: got)
      readOffset += Int64(got)
      if got == 0 { break }
    }
    return readBuffer.count - readStart >= count
  }

  /// Gives the file's bytes from `offset`, read already, back to the file system (a hole
  /// punched where they were): a spool read while the table it feeds is written then never
  /// holds as much disk, or page cache, as the table, on top of it. Where the file system
  /// cannot punch holes, the bytes stay until the file is closed.
  private func release(from offset: Int64, count: Int) {
    #if os(Linux)
      guard count > 0 else { return }
      _ = gv_punch_hole(descriptor, off_t(offset), off_t(count))
    #endif
  }
}
