import ArchiveStorage
import Foundation
import TestSupport
import Testing

@Suite("Archives kept in a local folder")
struct LocalFolderBackendTests {
  static func write(_ text: String, as name: String, to backend: LocalFolderBackend) throws {
    let output = try backend.create(name)
    try Array(text.utf8).withUnsafeBytes { try output.write($0) }
    #expect(try output.publish() == Int64(text.utf8.count))
  }

  static func read(_ name: String, from backend: LocalFolderBackend) throws -> String {
    let input = try backend.openForReading(name)
    var bytes: [UInt8] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 3, alignment: 1)
    defer { buffer.deallocate() }
    while case let count = try input.read(into: buffer), count > 0 {
      bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  @Test func writtenArchivesAreListedReadBackAndDeleted() throws {
    let directory = try TemporaryDirectory()
    let backend = LocalFolderBackend(folder: directory.url.path)
    try Self.write("first archive", as: "a.gvault", to: backend)
    try Self.write("second", as: "b.gvault", to: backend)
    try Data("not an archive".utf8).write(to: directory.path("notes.txt"))
    #expect(
      try backend.list().sorted { $0.name < $1.name }
        == [StoredArchive(name: "a.gvault", size: 13), StoredArchive(name: "b.gvault", size: 6)])
    #expect(try Self.read("a.gvault", from: backend) == "first archive")
    #expect(backend.exists("b.gvault"))
    try backend.delete("b.gvault")
    #expect(!backend.exists("b.gvault"))
    #expect(throws: StorageError.self) { try backend.delete("b.gvault") }
  }

  @Test func rangedReadsIntoOneBufferGiveTheBytesAskedForAndStopAtTheEnd() throws {
    let directory = try TemporaryDirectory()
    let backend = LocalFolderBackend(folder: directory.url.path)
    let text = String((0..<5_000).map { Character(UnicodeScalar(UInt8(65 + $0 % 26))) })
    try Self.write(text, as: "a.gvault", to: backend)
    let input = try backend.openForReading("a.gvault")
    let bytes = Array(text.utf8)
    var buffer: [UInt8] = []
    var storage: Set<UnsafeRawPointer> = []
    for (offset, count) in [(0, 4_000), (10, 100), (4_990, 100), (5_000, 10), (1_234, 2_000)] {
      try input.read(at: Int64(offset), count: count, into: &buffer)
      let expected = Array(bytes[min(offset, bytes.count)..<min(offset + count, bytes.count)])
      #expect(buffer == expected, "\(offset)+\(count)")
      #expect(try input.read(at: Int64(offset), count: count) == expected)
      if !buffer.isEmpty {
        storage.insert(buffer.withUnsafeBytes { UnsafeRawPointer($0.baseAddress!) })
      }
    }
    // The first read's storage served them all.
    #expect(storage.count == 1)
  }

  @Test func anAbandonedArchiveLeavesNothing() throws {
    let directory = try TemporaryDirectory()
    let backend = LocalFolderBackend(folder: directory.url.path)
    let output = try backend.create("a.gvault")
    try Array("partial".utf8).withUnsafeBytes { try output.write($0) }
    output.abandon()
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    #expect(try backend.list().isEmpty)
  }

  @Test func missingArchivesAndFoldersAreNotFound() throws {
    let directory = try TemporaryDirectory()
    let backend = LocalFolderBackend(folder: directory.url.path)
    #expect {
      _ = try backend.openForReading("none.gvault")
    } throws: { ($0 as? StorageError)?.kind == .notFound }
    #expect {
      _ = try LocalFolderBackend(folder: directory.path("missing").path).list()
    } throws: { ($0 as? StorageError)?.kind == .notFound }
    try FileManager.default.createDirectory(
      at: directory.path("folder.gvault"), withIntermediateDirectories: false)
    #expect {
      _ = try backend.openForReading("folder.gvault")
    } throws: { ($0 as? StorageError)?.kind == .notAnArchive }
  }

  @Test func aLockIsRefusedToASecondRunUntilReleased() throws {
    let directory = try TemporaryDirectory()
    let backend = LocalFolderBackend(folder: directory.url.path)
    let lock = try backend.lock("Library.sqlite", shared: false, wait: nil)
    #expect {
      _ = try backend.lock("Library.sqlite", shared: false, wait: nil)
    } throws: { error in
      let error = error as? StorageError
      return error?.kind == .locked && error?.detail.contains("pid \(getpid())") == true
    }
    // Another name is another lock.
    try backend.lock("Other.sqlite", shared: false, wait: nil).release()
    lock.release()
    try backend.lock("Library.sqlite", shared: false, wait: nil).release()
  }

  @Test func archiveNamesSortByTimeAndEndInGvault() throws {
    let early = ArchiveNaming.name(
      forStoreAt: "/data/Library.sqlite", at: Date(timeIntervalSince1970: 1_800_000_000))
    let late = ArchiveNaming.name(
      forStoreAt: "/data/Library.sqlite", at: Date(timeIntervalSince1970: 1_800_003_600))
    #expect(early == "Library-20270115T080000.000Z.gvault")
    #expect(early < late)
    #expect(ArchiveNaming.isArchive(early))
    #expect(!ArchiveNaming.isArchive("Library.sqlite"))
    #expect(!ArchiveNaming.isArchive(".Library-20270115T080000.000Z.gvault"))
  }

  @Test func aTakenNameMovesToTheNextFreeMillisecondAndStillSortsByTime() {
    let time = Date(timeIntervalSince1970: 1_800_000_000.999)
    var taken: Set<String> = []
    for _ in 0..<3 {
      taken.insert(
        ArchiveNaming.freeName(forStoreAt: "Library.sqlite", at: time, taken: taken.contains))
    }
    #expect(
      taken.sorted() == [
        "Library-20270115T080000.999Z.gvault", "Library-20270115T080001.000Z.gvault",
        "Library-20270115T080001.001Z.gvault",
      ])
  }
}
