import DurableIO
import Foundation

/// Archives piped through standard input and output (`-` on the command line): read and
/// written as streams, never held whole.
public enum StandardStream {
  /// What messages call standard input or output.
  public static let name = "-"

  /// Standard input, as an archive being read.
  public static func input() -> any ArchiveInput { DescriptorInput(fd: STDIN_FILENO) }

  /// Standard output, as an archive being written. Nothing can be taken back from a pipe: an
  /// abandoned archive ends without its index, which every reader rejects as incomplete.
  public static func output() -> any ArchiveOutput { DescriptorOutput(fd: STDOUT_FILENO) }
}

private final class DescriptorInput: ArchiveInput {
  let fd: Int32

  init(fd: Int32) { self.fd = fd }

  /// A pipe's size is not known.
  var size: Int64? { nil }

  func read(into buffer: UnsafeMutableRawBufferPointer) throws(StorageError) -> Int {
    while true {
      let count = Foundation.read(fd, buffer.baseAddress, buffer.count)
      if count >= 0 { return count }
      if errno == EINTR { continue }
      throw StorageError(
        .io, DurableIOError("cannot read", path: "standard input", errno: errno).description)
    }
  }

  func read(at offset: Int64, count: Int) throws(StorageError) -> [UInt8] {
    throw StorageError(.notAnArchive, "standard input is read from start to end only")
  }
}

private final class DescriptorOutput: ArchiveOutput {
  let fd: Int32
  private var written: Int64 = 0

  init(fd: Int32) { self.fd = fd }

  var location: String { StandardStream.name }

  func write(_ bytes: UnsafeRawBufferPointer) throws(StorageError) {
    var remaining = bytes
    while !remaining.isEmpty {
      let count = Foundation.write(fd, remaining.baseAddress, remaining.count)
      if count < 0 {
        if errno == EINTR { continue }
        throw StorageError(
          .io, DurableIOError("cannot write", path: "standard output", errno: errno).description)
      }
      written += Int64(count)
      remaining = UnsafeRawBufferPointer(rebasing: remaining[count...])
    }
  }

  func publish() throws(StorageError) -> Int64 { written }

  func abandon() {}
}
