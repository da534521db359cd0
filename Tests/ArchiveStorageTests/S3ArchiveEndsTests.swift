import ArchiveStorage
import Foundation
import S3
import TestSupport
import Testing

@Suite(
  "S3 keeps a copy of each archive's ends beside it (moto's server)",
  .enabled(if: MotoServer.isAvailable, MotoServer.skipNote))
struct S3ArchiveEndsTests {
  let server: MotoServer
  let client: S3Client
  let backend: S3Backend

  init() throws {
    server = try MotoServer()
    try server.createBucket("backups")
    client = S3Client(
      configuration: S3Configuration(
        credentials: S3Credentials(accessKeyID: "testing", secretAccessKey: "testing-secret"),
        region: "us-east-1", endpoint: URL(string: server.endpoint)))
    backend = S3Backend(bucket: "backups", prefix: "nightly", client: client)
    backend.partSize = 5 << 20
  }

  var copyKey: String { "nightly/" + S3Backend.endsFolder + "a.gvault" }

  @Test(
    "a published archive's ends are copied, read in one GET instead of the archive, and removed with it"
  )
  func theCopyIsReadInsteadOfTheArchive() throws {
    let bytes = StorageClause.bytes(6_000_000, seed: 11)
    try StorageClause.publish(bytes, as: "a.gvault", to: backend, piece: 1 << 20)
    let copy = try ArchiveEnds(decoding: [UInt8](client.get(bucket: "backups", key: copyKey)))
    #expect(copy.size == 6_000_000)
    #expect(copy.head == Array(bytes.prefix(ArchiveEnds.headLimit)))
    #expect(copy.tail == Array(bytes.suffix(ArchiveEnds.tailLimit)))
    // Not an archive of the prefix, nor a leftover.
    #expect(try backend.list() == [StoredArchive(name: "a.gvault", size: 6_000_000)])
    #expect(try backend.leftovers().isEmpty)

    try server.startRecording()
    let input = try #require(
      try backend.openForSummary(StoredArchive(name: "a.gvault", size: 6_000_000))
        as? ArchiveEndsInput)
    #expect(try input.read(at: 5_999_968, count: 32) == Array(bytes.suffix(32)))
    #expect(try input.read(at: 0, count: 4_096) == Array(bytes.prefix(4_096)))
    let requests = try server.recorded()
    #expect(requests.count == 1 && requests[0].hasPrefix("GET "), "\(requests)")
    #expect(requests.allSatisfy { $0.hasSuffix(copyKey) }, "\(requests)")
    #expect(input.fetched == Int64(copy.encoded.count))
    // What the copy does not hold comes from the archive.
    #expect(try input.read(at: 3_000_000, count: 100) == Array(bytes[3_000_000..<3_000_100]))
    #expect(try server.recorded().contains { $0.hasSuffix("nightly/a.gvault") })

    try backend.delete("a.gvault")
    #expect(throws: S3Error.self) { _ = try client.get(bucket: "backups", key: copyKey) }
  }

  @Test("a damaged copy, or one of another archive's size, is passed over for the archive")
  func aCopyThatDoesNotFitIsPassedOver() throws {
    let bytes = StorageClause.bytes(400_000, seed: 12)
    try StorageClause.publish(bytes, as: "a.gvault", to: backend)
    let listed = StoredArchive(name: "a.gvault", size: 400_000)
    let other = ArchiveEnds(size: 400_001, head: Array(bytes.prefix(10)), tail: [])
    for body in [Data("not a copy".utf8), Data(other.encoded)] {
      try client.put(bucket: "backups", key: copyKey, body: body)
      _ = try backend.list()
      let input = try backend.openForSummary(listed)
      #expect(!(input is ArchiveEndsInput))
      #expect(try input.read(at: 399_000, count: 1_000) == Array(bytes.suffix(1_000)))
    }
    // A prefix listed without the copy reads the archive.
    try client.delete(bucket: "backups", key: copyKey)
    _ = try backend.list()
    #expect(!(try backend.openForSummary(listed) is ArchiveEndsInput))
  }

  @Test(
    "a copy whose archive is gone is a leftover, removed like one; a refused upload keeps the first copy"
  )
  func anOrphanCopyIsALeftover() throws {
    let bytes = StorageClause.bytes(300_000, seed: 13)
    try StorageClause.publish(bytes, as: "a.gvault", to: backend)
    let first = try client.get(bucket: "backups", key: copyKey)
    #expect(throws: StorageError.self) {
      try StorageClause.publish(
        StorageClause.bytes(200_000, seed: 14), as: "a.gvault", to: self.backend)
    }
    #expect(try client.get(bucket: "backups", key: copyKey) == first)

    try client.put(
      bucket: "backups", key: "nightly/" + S3Backend.endsFolder + "gone.gvault", body: first)
    let leftovers = try backend.leftovers()
    #expect(leftovers.map(\.name) == [S3Backend.endsFolder + "gone.gvault"])
    try backend.removeLeftover(leftovers[0].name)
    #expect(try backend.leftovers().isEmpty)
    #expect(try client.get(bucket: "backups", key: copyKey) == first)
  }
}
