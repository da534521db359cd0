import ArchiveFormat
import Foundation
import LibArchive
import ObjectModel
import ObjectStore
import TestSupport
import Testing

@testable import GraphVault

/// The archive's sink takes any source, not only a backup's: an archive's own stream, written
/// again through it, is an archive that restores to the same store, in either format.
@Suite("Archive sink")
struct ArchiveSinkTests {
  let directory: TemporaryDirectory
  let store: String

  init() throws {
    directory = try TemporaryDirectory()
    store = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: store, objects: 2_500, seed: 11)
    // A table of the app's own, whose rows travel as rows.
    try sqlScript(
      store,
      """
      CREATE TABLE APP_NOTES (ID INTEGER PRIMARY KEY, NOTE TEXT);
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1500)
      INSERT INTO APP_NOTES SELECT i, 'note ' || i FROM n;
      """)
  }

  /// `archive`'s stream written again by the sink into `copy` (gzip, format `format`).
  func rewrite(_ archive: String, to copy: String, format: Int64) throws -> ArchiveSink {
    let chain = try ArchiveChain.open(
      Location(path: archive), password: nil, allowingUnencrypted: false)
    FileManager.default.createFile(atPath: copy, contents: nil)
    let file = try #require(FileHandle(forWritingAtPath: copy))
    defer { try? file.close() }
    let writer = try ArchiveWriter(name: copy, filter: .gzip) { file.write(Data($0)) }
    let members = MemberWriter(archive: writer, modificationTime: 0, formatVersion: format)
    let sink = ArchiveSink(members: members, formatVersion: format)
    try ObjectPipeline(
      source: chain.source.objectSource, stage: HeadStage(\.archiveHead), sink: sink
    ).run()
    try writer.close()
    return sink
  }

  @Test(arguments: [Int64(1), 3])
  func anArchivesStreamWrittenAgainRestoresToTheSameStore(format: Int64) throws {
    var options = BackupService.Options()
    options.output = Location(path: directory.path("library.gvault").path)
    options.formatVersion = format
    let backup = try BackupService.backup(storePath: store, options: options)
    let copy = directory.path("copy.gvault").path
    let sink = try rewrite(backup.archive, to: copy, format: format)
    #expect(sink.objects == backup.objects)
    #expect(sink.rows == backup.tables)
    #expect(backup.tables["APP_NOTES"] == 1_500)

    let report = try VerifyService.verify(archive: Location(path: copy))
    #expect(report.ok, "\(report.problems)")
    #expect(report.objects == backup.objects)
    let fromBackup = directory.path("from-backup.sqlite").path
    let fromCopy = directory.path("from-copy.sqlite").path
    _ = try RestoreService.restore(archive: Location(path: backup.archive), to: fromBackup)
    _ = try RestoreService.restore(archive: Location(path: copy), to: fromCopy)
    #expect(try storeRows(fromCopy) == storeRows(fromBackup))
    #expect(try storeRows(fromCopy) == storeRows(store))
  }

  /// A sink that takes what an archive holds before the objects, for the refusals below.
  func openSink(at path: String) throws -> (ArchiveSink, ArchiveHead) {
    var options = BackupService.Options()
    options.output = Location(path: directory.path("head.gvault").path)
    let backup = try BackupService.backup(storePath: store, options: options)
    let chain = try ArchiveChain.open(
      Location(path: backup.archive), password: nil, allowingUnencrypted: false)
    var begun: ArchiveHead?
    while begun == nil, let event = try chain.source.next() {
      if case .begin(let store) = event { begun = store.archiveHead }
    }
    let head = try #require(begun)
    let writer = try ArchiveWriter(name: path, filter: .gzip) { _ in }
    let sink = ArchiveSink(
      members: MemberWriter(archive: writer, modificationTime: 0), formatVersion: 3)
    try sink.begin(head)
    return (sink, head)
  }

  @Test func objectsInAMigrationsTermsAreRefusedNamingWhere() throws {
    let (sink, _) = try openSink(at: directory.path("values.gvault").path)
    let value = ObjectValue(entity: "Tag", primaryKey: 1)
    #expect {
      try sink.take(.objects([value], links: []), from: "objects/Tag/000001.plist")
    } throws: { error in
      "\(error)".contains("objects/Tag/000001.plist")
        && "\(error)".contains("an archive holds objects as stored")
    }
  }

  @Test func anEntityComingAgainAfterAnotherIsRefused() throws {
    let (sink, _) = try openSink(at: directory.path("again.gvault").path)
    func batch(_ entity: String, _ keys: [Int64]) -> ObjectChunk {
      .columns(ObjectBatch(entity: entity, primaryKeys: keys, versions: keys.map { _ in 1 }))
    }
    try sink.take(batch("Tag", [1, 2]), from: "first")
    try sink.take(batch("Tag", [3]), from: "second")
    try sink.take(batch("Author", [1]), from: "third")
    #expect(sink.objects["Tag"] == 3)
    #expect {
      try sink.take(batch("Tag", [4]), from: "fourth")
    } throws: { error in
      "\(error)".contains("fourth") && "\(error)".contains("objects/Tag comes again")
    }
  }
}
