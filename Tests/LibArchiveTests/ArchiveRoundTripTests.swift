import Foundation
import LibArchive
import TestSupport
import Testing

/// Deterministic, moderately compressible bytes, produced chunk by chunk so a 50 MB entry is
/// never held in memory by the test either.
struct PatternStream {
  private var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next(_ count: Int) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: count)
    for i in 0..<count {
      if i % 8 == 0 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      }
      // Half the bytes random, half a repeating pattern.
      out[i] = i % 2 == 0 ? UInt8(truncatingIfNeeded: state >> UInt64((i % 8) * 8)) : UInt8(i % 61)
    }
    return out
  }
}

@Suite("Archive round trips")
struct ArchiveRoundTripTests {
  static let small: [(String, [UInt8])] = [
    ("graphvault.plist", Array("header".utf8)),
    ("objects/Book/000001.plist", (0..<10_000).map { UInt8($0 % 251) }),
    ("empty", []),
    ("unicode/名前.plist", Array("ü".utf8)),
  ]

  func write(
    _ entries: [(String, [UInt8])], to path: String, format: ArchiveFormat = .pax,
    filter: ArchiveFilter
  ) throws {
    let writer = try ArchiveWriter(path: path, format: format, filter: filter)
    for (name, contents) in entries { try writer.writeEntry(path: name, contents: contents) }
    try writer.close()
  }

  func readAll(_ path: String) throws -> [(String, [UInt8])] {
    let reader = try ArchiveReader(path: path)
    var result: [(String, [UInt8])] = []
    while let entry = try reader.nextEntry() { result.append((entry.path, try reader.readAll())) }
    return result
  }

  @Test(arguments: ArchiveFilter.allCases)
  func smallEntriesRoundTripThroughEveryFilter(filter: ArchiveFilter) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("a.tar").path
    try write(Self.small, to: path, filter: filter)
    let read = try readAll(path)
    #expect(read.map(\.0) == Self.small.map(\.0))
    #expect(read.map(\.1) == Self.small.map(\.1))
  }

  @Test(arguments: [ArchiveFilter.none, .zstd])
  func entriesReadIntoOneBufferComeBackWholeAndKeepItsStorage(filter: ArchiveFilter) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("a.tar").path
    // The largest entry first: the others fit in the storage it left.
    let entries = Self.small.sorted { $0.1.count > $1.1.count }
    try write(entries, to: path, filter: filter)
    let reader = try ArchiveReader(path: path)
    var buffer: [UInt8] = []
    var read: [(String, [UInt8])] = []
    var storage: Set<UnsafeRawPointer> = []
    while let entry = try reader.nextEntry() {
      try reader.readAll(into: &buffer)
      read.append((entry.path, buffer))
      if !buffer.isEmpty {
        storage.insert(buffer.withUnsafeBytes { UnsafeRawPointer($0.baseAddress!) })
      }
    }
    #expect(read.map(\.0) == entries.map(\.0))
    #expect(read.map(\.1) == entries.map(\.1))
    // Each entry read while a copy of the last was still held took new storage; with none
    // held, one buffer serves every entry.
    var again: [UInt8] = []
    let second = try ArchiveReader(path: path)
    storage = []
    while try second.nextEntry() != nil {
      try second.readAll(into: &again)
      if !again.isEmpty {
        storage.insert(again.withUnsafeBytes { UnsafeRawPointer($0.baseAddress!) })
      }
    }
    #expect(storage.count == 1)
    #expect {
      let third = try ArchiveReader(path: path)
      _ = try third.nextEntry()
      try third.readAll(limit: 100, into: &again)
    } throws: { error in
      if case .entryTooLarge = (error as? ArchiveError)?.kind { return true }
      return false
    }
  }

  @Test(arguments: [ArchiveFilter.none, .gzip])
  func zipArchivesRoundTripStoredOrDeflated(filter: ArchiveFilter) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("a.zip").path
    try write(Self.small, to: path, format: .zip, filter: filter)
    let read = try readAll(path)
    #expect(read.map(\.0) == Self.small.map(\.0))
    #expect(read.map(\.1) == Self.small.map(\.1))
  }

  @Test func zipCannotTakeTheWholeStreamFilters() throws {
    let directory = try TemporaryDirectory()
    #expect(throws: ArchiveError.self) {
      try ArchiveWriter(path: directory.path("a.zip").path, format: .zip, filter: .zstd)
    }
  }

  @Test(arguments: ArchiveFilter.allCases)
  func aFiftyMegabyteEntryStreamsThroughByteIdentical(filter: ArchiveFilter) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("big.tar").path
    let size = 50 * 1024 * 1024
    let chunk = 1024 * 1024
    // xz at its default level takes long on 50 MB: level 0 keeps the test quick.
    let writer = try ArchiveWriter(
      path: path, filter: filter, compressionLevel: filter == .xz ? 0 : nil)
    try writer.beginEntry(path: "big.bin", size: Int64(size))
    var source = PatternStream(seed: 7)
    for _ in 0..<(size / chunk) { try writer.write(source.next(chunk)) }
    try writer.writeEntry(path: "after", contents: Array("tail".utf8))
    try writer.close()

    let reader = try ArchiveReader(path: path)
    #expect(try reader.nextEntry()?.size == Int64(size))
    var expected = PatternStream(seed: 7)
    var pending: [UInt8] = []
    var total = 0
    var mismatch = false
    try reader.readData { piece in
      pending.append(contentsOf: piece)
      while pending.count >= chunk {
        if Array(pending[0..<chunk]) != expected.next(chunk) { mismatch = true }
        pending.removeFirst(chunk)
        total += chunk
      }
    }
    #expect(total == size && pending.isEmpty && !mismatch)
    #expect(try reader.nextEntry()?.path == "after")
    #expect(try reader.readAll() == Array("tail".utf8))
    #expect(try reader.nextEntry() == nil)
  }

  @Test func writingMoreOrLessThanTheDeclaredSizeIsAnError() throws {
    let directory = try TemporaryDirectory()
    let writer = try ArchiveWriter(path: directory.path("a.tar").path, filter: .none)
    try writer.beginEntry(path: "short", size: 10)
    try writer.write([1, 2, 3])
    do {
      try writer.finishEntry()
      Issue.record("a short entry was accepted")
    } catch {
      #expect(error.kind == .sizeMismatch(declared: 10, written: 3))
      #expect(error.entry == "short")
    }
    try writer.beginEntry(path: "long", size: 2)
    #expect(throws: ArchiveError.self) { try writer.write([1, 2, 3]) }
  }

  @Test func aFullDiskIsAnErrorCarryingEnospc() throws {
    guard FileManager.default.fileExists(atPath: "/dev/full") else { return }
    do {
      let writer = try ArchiveWriter(path: "/dev/full", filter: .none)
      try writer.beginEntry(path: "data", size: 1 << 20)
      for _ in 0..<16 { try writer.write([UInt8](repeating: 1, count: 65_536)) }
      try writer.close()
      Issue.record("writing to /dev/full succeeded")
    } catch {
      #expect(error.errno == 28)  // ENOSPC
    }
  }
}

@Suite(
  "Archives read by other tools",
  .enabled(if: Subprocess.isInstalled("bsdtar"), "needs bsdtar (libarchive-tools)"))
struct ArchiveToolInteropTests {
  @Test(arguments: ArchiveFilter.allCases)
  func bsdtarListsAndExtractsWhatWeWrite(filter: ArchiveFilter) throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("a.tar").path
    try ArchiveRoundTripTests().write(ArchiveRoundTripTests.small, to: path, filter: filter)
    let listing = try Subprocess.run("bsdtar", ["-tf", path])
    #expect(listing.status == 0, "\(listing.stderr)")
    #expect(
      listing.stdout.split(separator: "\n").map(String.init) == ArchiveRoundTripTests.small.map(\.0)
    )
    let extracted = try Subprocess.run("bsdtar", ["-xOf", path, "objects/Book/000001.plist"])
    #expect(extracted.stdoutBytes == ArchiveRoundTripTests.small[1].1)
  }

  @Test func weReadWhatBsdtarWrites() throws {
    let directory = try TemporaryDirectory()
    try Data("from bsdtar".utf8).write(to: directory.path("note.txt"))
    let path = directory.path("theirs.tar.zst").path
    let created = try Subprocess.run(
      "bsdtar", ["--zstd", "-cf", path, "-C", directory.url.path, "note.txt"])
    #expect(created.status == 0, "\(created.stderr)")
    let reader = try ArchiveReader(path: path)
    #expect(try reader.nextEntry()?.path == "note.txt")
    #expect(try reader.readAll() == Array("from bsdtar".utf8))
  }

  @Test func aNonAsciiNameBsdtarWroteUnderAUtf8LocaleReadsBackExactly() throws {
    let directory = try TemporaryDirectory()
    try Data("x".utf8).write(to: directory.path("名前.txt"))
    let path = directory.path("theirs.tar").path
    var environment = ProcessInfo.processInfo.environment
    environment["LC_ALL"] = "C.UTF-8"
    let created = try Subprocess.run(
      "bsdtar", ["--format", "pax", "-cf", path, "-C", directory.url.path, "名前.txt"],
      environment: environment)
    #expect(created.status == 0, "\(created.stderr)")
    let reader = try ArchiveReader(path: path)
    #expect(try reader.nextEntry()?.path == "名前.txt")
  }
}
