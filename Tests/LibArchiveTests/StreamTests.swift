import Foundation
import LibArchive
import TestSupport
import Testing

@Suite("Archives through stream callbacks")
struct StreamTests {
  struct Broken: Error, CustomStringConvertible {
    var description: String { "the disk went away" }
  }

  @Test(arguments: [ArchiveFilter.zstd, .xz, .gzip, .none])
  func anArchiveWrittenToAStreamReadsBackFromOneAndEqualsTheFileWritten(filter: ArchiveFilter)
    throws
  {
    let directory = try TemporaryDirectory()
    let file = directory.path("file.tar").path
    var streamed: [UInt8] = []
    let contents = (0..<3).map { index in (0..<50_000).map { UInt8(($0 * 7 + index) % 251) } }
    func fill(_ writer: ArchiveWriter) throws {
      for (index, bytes) in contents.enumerated() {
        try writer.writeEntry(path: "member-\(index)", contents: bytes, modificationTime: 1)
      }
      try writer.close()
    }
    try fill(ArchiveWriter(path: file, filter: filter))
    try fill(ArchiveWriter(name: "stream", filter: filter) { streamed += Array($0) })
    // The same bytes as a regular file gets: no padding of the last block.
    #expect(streamed == Array(try Data(contentsOf: URL(fileURLWithPath: file))))

    var offset = 0
    let reader = try ArchiveReader(name: "stream", blockSize: 1000) { buffer in
      let count = min(buffer.count, streamed.count - offset)
      streamed[offset..<offset + count].withUnsafeBytes { buffer.copyMemory(from: $0) }
      offset += count
      return count
    }
    var read: [[UInt8]] = []
    while try reader.nextEntry() != nil { read.append(try reader.readAll()) }
    #expect(read == contents)
  }

  @Test func aFailingSinkIsAnErrorWithItsReason() throws {
    let writer = try ArchiveWriter(name: "out.gvault", filter: .none) { _ in throw Broken() }
    #expect {
      try writer.writeEntry(path: "a", contents: Array(repeating: 1, count: 100_000))
      try writer.close()
    } throws: { error in
      // The sink's reason comes first, not libarchive's code.
      let text = String(describing: error)
      return (error as? ArchiveError)?.kind == .stream
        && text.hasPrefix("writing the archive failed: the disk went away")
        && text.contains("out.gvault") && !text.contains("libarchive")
    }
  }

  @Test func aFailingSourceIsAnErrorWithItsReason() throws {
    #expect {
      let reader = try ArchiveReader(name: "in.gvault") { _ in throw Broken() }
      _ = try reader.nextEntry()
    } throws: { error in
      let archiveError = error as? ArchiveError
      return archiveError?.kind == .stream
        && archiveError?.description.hasPrefix("reading the archive failed: the disk went away")
          == true
        && archiveError?.description.contains("libarchive") == false
    }
  }
}
