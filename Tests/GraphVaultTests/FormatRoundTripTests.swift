import Foundation
import GraphVault
import TestSupport
import Testing

/// Restore reads format 1 object by object and binds format 2's columns as they are: both give
/// back the source's rows.
@Suite("Either format restores the source")
struct FormatRoundTripTests {
  @Test(arguments: SampleWorkload.allCases, [1, 2] as [Int64])
  func aSampleStoreRestoresRowForRowFromEitherFormat(workload: SampleWorkload, format: Int64)
    throws
  {
    let directory = try TemporaryDirectory()
    let store = directory.path("source.sqlite").path
    try workload.generate(at: store, objects: 2_000, seed: 3)
    var options = BackupService.Options()
    options.formatVersion = format
    options.output = Location(path: directory.path("archive.gvault").path)
    let backup = try BackupService.backup(storePath: store, options: options)
    let restored = directory.path("restored.sqlite").path
    let result = try RestoreService.restore(archive: Location(path: backup.archive), to: restored)
    #expect(result.objects == backup.objects.filter { $0.value > 0 })
    let source = try storeRows(store)
    #expect(source.count > 2_000)
    #expect(source == (try storeRows(restored)))
  }
}
