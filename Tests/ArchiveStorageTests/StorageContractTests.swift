import ArchiveStorage
import Foundation
import S3
import TestSupport
import Testing

/// What every ``StorageBackend`` promises (its protocol's documentation), checked on each: a
/// local folder, memory, and S3 (moto's server). The services above work through the
/// protocol alone, so a backend that keeps these clauses serves every command.
enum StorageClause: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case publishedWhole =
    "an archive is invisible until published, then listed, sized and read back whole"
  case abandonedLeavesNothing = "an abandoned archive leaves nothing, not even a leftover"
  case writingIsNoLeftover = "an archive being written is never a leftover"
  case missingIsNotFound = "reading or deleting an archive that is not there is not found"
  case onlyArchivesListed = "only archives are listed, and a deleted one is gone"
  case oneWholeArchivePerName = "publishing under a taken name keeps one whole archive"
  case locksExclude =
    "an exclusive lock excludes every other holder and a shared one only exclusive ones"
  case summaryReadsTheArchive =
    "an archive opened for its summary reads as the archive, and a deleted one is not found"
  case listedReadsAsNamed =
    "an archive opened as listed reads as opened by name, and a deleted one is not found"

  var testDescription: String { rawValue }

  /// Bytes that do not compress, `count` of them, the same for the same seed.
  static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return UInt8(truncatingIfNeeded: state >> 33)
    }
  }

  /// Writes `bytes` as `name` in pieces of `piece` bytes, and publishes.
  @discardableResult
  static func publish(
    _ bytes: [UInt8], as name: String, to backend: StorageBackend, piece: Int = 65_536
  )
    throws -> Int64
  {
    let output = try backend.create(name)
    try write(bytes, to: output, piece: piece)
    return try output.publish()
  }

  static func write(_ bytes: [UInt8], to output: any ArchiveOutput, piece: Int = 65_536) throws {
    var start = 0
    while start < bytes.count {
      let end = min(bytes.count, start + piece)
      try bytes[start..<end].withUnsafeBytes { try output.write($0) }
      start = end
    }
  }

  /// The archive `name` read from its start in reads of odd sizes.
  static func read(_ name: String, from backend: StorageBackend) throws -> [UInt8] {
    let input = try backend.openForReading(name)
    var bytes: [UInt8] = []
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 40_001, alignment: 1)
    defer { buffer.deallocate() }
    while case let count = try input.read(into: buffer), count > 0 {
      bytes += buffer[0..<count]
    }
    return bytes
  }

  static func kind(of body: () throws -> Void) -> StorageError.Kind? {
    do {
      try body()
      return nil
    } catch {
      return (error as? StorageError)?.kind
    }
  }

  /// Checks this clause on `backend`, an empty place.
  func check(_ backend: StorageBackend) throws {
    switch self {
    case .publishedWhole:
      let bytes = Self.bytes(300_000, seed: 1)
      let output = try backend.create("a.gvault")
      try Self.write(bytes, to: output)
      #expect(!backend.exists("a.gvault"))
      #expect(try backend.list().isEmpty)
      #expect(try output.publish() == Int64(bytes.count))
      #expect(backend.exists("a.gvault"))
      #expect(try backend.list() == [StoredArchive(name: "a.gvault", size: Int64(bytes.count))])
      #expect(try Self.read("a.gvault", from: backend) == bytes)
      let input = try backend.openForReading("a.gvault")
      #expect(input.size == Int64(bytes.count))
      #expect(try input.read(at: 0, count: 10) == Array(bytes[0..<10]))
      #expect(try input.read(at: 123_457, count: 70_000) == Array(bytes[123_457..<193_457]))
      // Past the end, fewer bytes come back.
      #expect(try input.read(at: 299_990, count: 100) == Array(bytes[299_990...]))
    case .abandonedLeavesNothing:
      let output = try backend.create("a.gvault")
      try Self.write(Self.bytes(100_000, seed: 2), to: output)
      output.abandon()
      output.abandon()
      #expect(!backend.exists("a.gvault"))
      #expect(try backend.list().isEmpty)
      #expect(try backend.leftovers().isEmpty)
    case .writingIsNoLeftover:
      let output = try backend.create("a.gvault")
      try Self.write(Self.bytes(100_000, seed: 3), to: output)
      #expect(try backend.leftovers().isEmpty)
      output.abandon()
    case .missingIsNotFound:
      #expect(Self.kind { _ = try backend.openForReading("none.gvault") } == .notFound)
      #expect(Self.kind { try backend.delete("none.gvault") } == .notFound)
      #expect(!backend.exists("none.gvault"))
    case .onlyArchivesListed:
      try Self.publish(Self.bytes(10, seed: 4), as: "a.gvault", to: backend)
      try Self.publish(Self.bytes(20, seed: 5), as: "b.gvault", to: backend)
      try Self.publish(Self.bytes(30, seed: 6), as: "notes.txt", to: backend)
      #expect(
        try backend.list().sorted { $0.name < $1.name }
          == [StoredArchive(name: "a.gvault", size: 10), StoredArchive(name: "b.gvault", size: 20)])
      try backend.delete("a.gvault")
      #expect(!backend.exists("a.gvault"))
      #expect(try backend.list().map(\.name) == ["b.gvault"])
      #expect(Self.kind { _ = try backend.openForReading("a.gvault") } == .notFound)
    case .oneWholeArchivePerName:
      let first = Self.bytes(70_000, seed: 7)
      let second = Self.bytes(90_000, seed: 8)
      try Self.publish(first, as: "a.gvault", to: backend)
      let refused = Self.kind { try Self.publish(second, as: "a.gvault", to: backend) }
      // Refused with the first kept, or replaced whole: never a mixture.
      #expect(refused == nil || refused == .exists)
      #expect(try Self.read("a.gvault", from: backend) == (refused == nil ? second : first))
      #expect(try backend.list().count == 1)
    case .locksExclude:
      let exclusive = try backend.lock("Library.sqlite", shared: false, wait: nil)
      #expect(
        Self.kind { _ = try backend.lock("Library.sqlite", shared: false, wait: nil) } == .locked)
      #expect(
        Self.kind { _ = try backend.lock("Library.sqlite", shared: true, wait: nil) } == .locked)
      // Another name is another lock.
      try backend.lock("Other.sqlite", shared: false, wait: nil).release()
      exclusive.release()
      let reader = try backend.lock("Library.sqlite", shared: true, wait: nil)
      let another = try backend.lock("Library.sqlite", shared: true, wait: nil)
      #expect(
        Self.kind { _ = try backend.lock("Library.sqlite", shared: false, wait: nil) } == .locked)
      reader.release()
      another.release()
      try backend.lock("Library.sqlite", shared: false, wait: 5).release()
    case .summaryReadsTheArchive:
      let bytes = Self.bytes(700_000, seed: 9)
      try Self.publish(bytes, as: "a.gvault", to: backend)
      let listed = try #require(try backend.list().first)
      let input = try backend.openForSummary(listed)
      #expect(input.size == Int64(bytes.count))
      for (offset, count) in [(0, 512), (699_968, 32), (480_000, 220_000), (350_000, 1_000)] {
        #expect(
          try input.read(at: Int64(offset), count: count) == Array(bytes[offset..<offset + count]))
      }
      var into: [UInt8] = []
      try input.read(at: 10, count: 20, into: &into)
      #expect(into == Array(bytes[10..<30]))
      try backend.delete("a.gvault")
      #expect(Self.kind { _ = try backend.openForSummary(listed) } == .notFound)
    case .listedReadsAsNamed:
      let bytes = Self.bytes(900_000, seed: 12)
      try Self.publish(bytes, as: "a.gvault", to: backend)
      let listed = try #require(try backend.list().first)
      let input = try backend.openForReading(listed)
      #expect(input.size == Int64(bytes.count))
      #expect(try input.read(at: 850_000, count: 50_000) == Array(bytes[850_000...]))
      var whole: [UInt8] = []
      let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 1)
      defer { buffer.deallocate() }
      let again = try backend.openForReading(listed)
      while case let count = try again.read(into: buffer), count > 0 { whole += buffer[0..<count] }
      #expect(whole == bytes)
      try backend.delete("a.gvault")
      #expect(
        Self.kind {
          let gone = try backend.openForReading(listed)
          _ = try gone.read(at: 0, count: 10)
        } == .notFound)
    }
  }
}

@Suite("Every storage backend keeps the storage contract: a local folder and memory")
struct StorageContractTests {
  enum Place: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case localFolder = "a local folder"
    case memory = "memory"
    var testDescription: String { rawValue }
  }

  @Test(arguments: Place.allCases, StorageClause.allCases)
  func theBackendKeepsTheClause(place: Place, clause: StorageClause) throws {
    switch place {
    case .localFolder:
      let directory = try TemporaryDirectory()
      try clause.check(LocalFolderBackend(folder: directory.url.path))
    case .memory:
      try clause.check(InMemoryBackend())
    }
  }
}

@Suite(
  "Every storage backend keeps the storage contract: S3 (moto's server)",
  .enabled(if: MotoServer.isAvailable, MotoServer.skipNote))
struct S3StorageContractTests {
  /// moto dates every multipart upload 2010-11-10, so an upload under way looks a day old:
  /// that clause holds on S3 itself (the upload's `Initiated`), not on moto.
  static let clauses = StorageClause.allCases.filter { $0 != .writingIsNoLeftover }

  /// A backend on a new bucket `backups` of `server`.
  static func backend(on server: MotoServer, prefix: String) throws -> S3Backend {
    try server.createBucket("backups")
    let client = S3Client(
      configuration: S3Configuration(
        credentials: S3Credentials(accessKeyID: "testing", secretAccessKey: "testing-secret"),
        region: "us-east-1", endpoint: URL(string: server.endpoint)))
    return S3Backend(bucket: "backups", prefix: prefix, client: client)
  }

  @Test(arguments: clauses)
  func s3KeepsTheClause(clause: StorageClause) throws {
    let server = try MotoServer()
    let backend = try Self.backend(on: server, prefix: "nightly")
    // Parts of 5 MiB (S3's smallest but the last) would make the archives here one part.
    backend.partSize = 5 << 20
    try clause.check(backend)
    withExtendedLifetime(server) {}
  }
}

@Suite(
  "An archive on S3 opened as listed",
  .enabled(if: MotoServer.isAvailable, MotoServer.skipNote))
struct S3ListedArchiveTests {
  /// Opened as listed, an archive is read by the version the listing saw (its ETag), with no
  /// request to ask its size again: one replaced since is refused, not read as the new one,
  /// and not read as a mix of the two.
  @Test func anArchiveReplacedSinceItWasListedIsRefusedNotReadAsTheNewOne() throws {
    let server = try MotoServer()
    let backend = try S3StorageContractTests.backend(on: server, prefix: "nightly/")
    let first = StorageClause.bytes(400_000, seed: 3)
    try StorageClause.publish(first, as: "a.gvault", to: backend)
    let listed = try #require(try backend.list().first)
    try backend.delete("a.gvault")
    try StorageClause.publish(StorageClause.bytes(400_000, seed: 4), as: "a.gvault", to: backend)
    let input = try backend.openForReading(listed)
    #expect(throws: StorageError.self) { _ = try input.read(at: 0, count: 1_000) }
    // By name, the archive as it is now.
    #expect(try StorageClause.read("a.gvault", from: backend) != first)
    withExtendedLifetime(server) {}
  }
}

@Suite(
  "An archive on S3 opened by name",
  .enabled(if: MotoServer.isAvailable, MotoServer.skipNote))
struct S3ArchiveStartTests {
  /// Opened by name, an archive's size and ETag come with its first bytes in one GET (no
  /// HEAD); reads within them make no request, the stream starts with them, and what lies
  /// beyond is read pinned to that ETag.
  @Test func itsSizeComesWithItsStartInOneRequest() throws {
    let server = try MotoServer()
    let backend = try S3StorageContractTests.backend(on: server, prefix: "nightly/")
    let bytes = StorageClause.bytes(700_000, seed: 5)
    try StorageClause.publish(bytes, as: "a.gvault", to: backend)
    try server.startRecording()
    let input = try backend.openForReading("a.gvault")
    #expect(input.size == 700_000)
    #expect(try input.read(at: 100, count: 9_000) == Array(bytes[100..<9_100]))
    #expect(try input.read(at: 0, count: S3Backend.startRead).count == S3Backend.startRead)
    let opened = try server.recorded()
    #expect(opened.count == 1 && opened[0].hasPrefix("GET "), "\(opened)")
    #expect(input.bytesFetched == Int64(S3Backend.startRead))
    #expect(try input.read(at: 650_000, count: 50_000) == Array(bytes[650_000...]))
    #expect(try server.recorded().count == 2)
    #expect(input.bytesFetched == Int64(S3Backend.startRead + 50_000))
    // Streamed whole, it reads the same bytes: its start from memory, the rest by parts.
    #expect(try StorageClause.read("a.gvault", from: backend) == bytes)

    // Replaced after it was opened, it is refused rather than read as the new one.
    try backend.delete("a.gvault")
    try StorageClause.publish(StorageClause.bytes(700_000, seed: 6), as: "a.gvault", to: backend)
    #expect(throws: StorageError.self) { _ = try input.read(at: 500_000, count: 1_000) }
    withExtendedLifetime(server) {}
  }

  @Test func anArchiveSmallerThanTheStartReadIsReadWholeInThatRequest() throws {
    let server = try MotoServer()
    let backend = try S3StorageContractTests.backend(on: server, prefix: "nightly/")
    let bytes = StorageClause.bytes(1_000, seed: 7)
    try StorageClause.publish(bytes, as: "small.gvault", to: backend)
    try StorageClause.publish([], as: "empty.gvault", to: backend)
    try server.startRecording()
    let input = try backend.openForReading("small.gvault")
    #expect(input.size == 1_000)
    #expect(try input.read(at: 0, count: 5_000) == bytes)
    #expect(try StorageClause.read("small.gvault", from: backend) == bytes)
    #expect(try server.recorded().count == 2, "one GET for each opening")
    // An empty object has no range to give (416): it is opened as empty.
    let empty = try backend.openForReading("empty.gvault")
    #expect(empty.size == 0)
    #expect(try StorageClause.read("empty.gvault", from: backend).isEmpty)
    #expect(
      StorageClause.kind(of: { _ = try backend.openForReading("missing.gvault") }) == .notFound)
    withExtendedLifetime(server) {}
  }
}
