import Foundation
import GraphVault
import ObjectStore
import TestSupport
import Testing

@Suite("Locations, parsed once with the environment given")
struct LocationTests {
  @Test func aDashIsStandardInputOrOutputAndAPathIsALocalPlace() throws {
    let stream = try Location("-", environment: [:])
    #expect(stream.kind == .standardStream)
    #expect(stream.isStandardStream && !stream.isRemote && stream.localPath == nil)
    #expect(stream.description == "-")

    let file = try Location("nightly/Library.gvault", environment: [:])
    #expect(file.kind == .local(path: "nightly/Library.gvault"))
    #expect(file.localPath == "nightly/Library.gvault")
    // Given as a path, a file may be called "-".
    #expect(Location(path: "-").kind == .local(path: "-"))
  }

  @Test func anS3URLNamesItsBucketAndKeyAsWritten() throws {
    let archive = try Location("s3://backups/library/Library-1.gvault", environment: [:])
    #expect(archive.kind == .objectStorage(bucket: "backups", key: "library/Library-1.gvault"))
    #expect(archive.isRemote && archive.localPath == nil)
    #expect(archive.description == "s3://backups/library/Library-1.gvault")
    #expect(
      try Location("s3://backups", environment: [:]).kind
        == .objectStorage(bucket: "backups", key: ""))
    #expect(
      try Location("s3://backups/", environment: [:]).kind
        == .objectStorage(bucket: "backups", key: ""))
  }

  @Test func anS3URLWithoutABucketOrAnEmptyNameIsAUsageError() {
    for text in ["s3://", "s3:///library/", ""] {
      do {
        _ = try Location(text, environment: [:])
        Issue.record("\(text.debugDescription) was accepted")
      } catch {
        #expect(error.kind == .usage, "\(text.debugDescription)")
      }
    }
    #expect(throws: VaultError.self) { try Location("s3:///library/", environment: [:]) }
  }

  @Test func objectStorageWithoutCredentialsIsRefusedWhenReachedNamingWhatToSet() throws {
    // Parsing succeeds: only a command that reaches the place needs credentials.
    let place = try Location("s3://backups/library/", environment: ["AWS_REGION": "eu-west-1"])
    let error = #expect(throws: VaultError.self) { try ListService.list(place) }
    #expect(error?.description.contains("AWS_ACCESS_KEY_ID") == true)
  }

  @Test(.enabled(if: MotoServer.isAvailable, MotoServer.skipNote))
  func theEnvironmentGivenReachesObjectStorageForAChainOfArchivesAndItsParents() throws {
    let server = try MotoServer()
    try server.createBucket("vault")
    // This process's own environment says nothing of the server: only the one given does.
    #expect(ProcessInfo.processInfo.environment["AWS_ENDPOINT_URL"] != server.endpoint)
    let environment = server.environment()
    let directory = try TemporaryDirectory()
    let store = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: store, objects: 300, seed: 5)

    let prefix = try Location("s3://vault/nightly/", environment: environment)
    var options = BackupService.Options()
    options.output = prefix
    options.now = Date(timeIntervalSince1970: 1_800_000_000)
    let full = try BackupService.backup(storePath: store, options: options)
    try sqlScript(store, "UPDATE ZBOOK SET ZTITLE = 'night 1', Z_OPT = Z_OPT + 1 WHERE Z_PK = 2;")
    options.incremental = true
    options.now = Date(timeIntervalSince1970: 1_800_086_400)
    let incremental = try BackupService.backup(storePath: store, options: options)
    #expect(incremental.kind == "incremental")
    #expect(full.archive.hasPrefix("s3://vault/nightly/"))
    #expect(incremental.parent.map { "s3://vault/nightly/" + $0 } == full.archive)

    let listed = try ListService.list(prefix)
    #expect(Set(listed.map(\.archive)) == [full.archive, incremental.archive])

    // The incremental archive is restored with its parent, found beside it in the bucket.
    let restored = directory.path("restored.sqlite").path
    _ = try RestoreService.restore(
      archive: try Location(incremental.archive, environment: environment), to: restored)
    #expect(try storeRows(restored) == storeRows(store))
  }
}
