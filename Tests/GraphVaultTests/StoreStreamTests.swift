import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// A store read as an object stream (``StoreSource``) into a new store, migrated or not: what
/// `migrate` and a comparison across models make of a store, with no archive between. Held to
/// what an archive of the same store restores.
@Suite("A store's objects as a stream")
struct StoreStreamTests {
  static let fixtures = SharedFixtures.packageRoot.appendingPathComponent("Fixtures")
  static let modelSet = fixtures.appendingPathComponent("Library.xcdatamodeld").path
  /// The sample model's first version, frozen.
  static let firstArchive = fixtures.appendingPathComponent("Archives/Library-1.gvault").path

  /// A store at the sample model's first version, restored from its frozen archive.
  static func firstStore(in directory: TemporaryDirectory) throws -> CoreDataStore {
    let path = directory.path("old.sqlite").path
    try RestoreService.restore(archive: Location(path: firstArchive), to: path)
    return try CoreDataStore(path: path)
  }

  @Test func aStoresObjectsStreamedIntoANewStoreAreWhatItsArchiveRestores() throws {
    let directory = try TemporaryDirectory()
    let source = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: source, objects: 6_000)
    var backup = BackupService.Options()
    backup.output = Location(path: directory.path("Library.gvault").path)
    let archive = try BackupService.backup(storePath: source, options: backup).archive
    let viaArchive = directory.path("via-archive.sqlite").path
    let restored = try RestoreService.restore(archive: Location(path: archive), to: viaArchive)

    let store = try CoreDataStore(path: source)
    let viaStream = directory.path("via-stream.sqlite").path
    let streamed = try RestoreService.restore(
      objects: StoreSource(store: store, model: try SampleLibrary.model()), to: viaStream,
      options: RestoreOptions())
    #expect(streamed.objects == restored.objects)
    #expect(streamed.objects.values.reduce(0, +) == 6_000)
    #expect(try storeRows(viaStream) == storeRows(viaArchive))
  }

  @Test func aStoreMigratedAsAStreamIsTheStoreItsArchiveMigratesInto() throws {
    let directory = try TemporaryDirectory()
    var migrating = RestoreOptions()
    migrating.modelPath = Self.modelSet
    let viaArchive = directory.path("via-archive.sqlite").path
    let restored = try RestoreService.restore(
      archive: Location(path: Self.firstArchive), to: viaArchive, options: migrating)

    let store = try Self.firstStore(in: directory)
    let model = try #require(try ModelSource.versions(at: Self.modelSet).versions.first)
    let viaStream = directory.path("via-stream.sqlite").path
    let streamed = try RestoreService.restore(
      objects: StoreSource(store: store, model: model), to: viaStream, options: migrating)
    #expect(streamed.migration?.to == restored.migration?.to)
    #expect(streamed.migration?.hops.count == 2)
    #expect(streamed.migration?.hops.map(\.objects) == restored.migration?.hops.map(\.objects))
    // Equal to the row, bookkeeping and the store's identity included.
    #expect(try storeRows(viaStream) == storeRows(viaArchive))
  }

  @Test func aMigrationRefusedMidStreamLeavesNothingBehind() throws {
    let directory = try TemporaryDirectory()
    let store = try Self.firstStore(in: directory)
    let edited = directory.path("Library.xcdatamodeld")
    try FileManager.default.copyItem(atPath: Self.modelSet, toPath: edited.path)
    // Version 3 gains a required attribute without a default: no book can fill it.
    let contents = edited.appendingPathComponent("Library 3.xcdatamodel/contents")
    let text = try String(contentsOf: contents, encoding: .utf8)
    try text.replacingOccurrences(
      of:
        "<entity name=\"Book\" representedClassName=\"Book\" syncable=\"YES\" codeGenerationType=\"class\">",
      with:
        "<entity name=\"Book\" representedClassName=\"Book\" syncable=\"YES\" codeGenerationType=\"class\"><attribute name=\"isbn\" optional=\"NO\" attributeType=\"String\"/>"
    ).write(to: contents, atomically: false, encoding: .utf8)
    var migrating = RestoreOptions()
    migrating.modelPath = edited.path
    let destination = directory.path("new.sqlite").path
    let before = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
    let error = try #require(throws: (any Error).self) {
      try RestoreService.restore(
        objects: StoreSource(
          store: store,
          model: try #require(try ModelSource.versions(at: edited.path).versions.first)),
        to: destination, options: migrating)
    }
    #expect("\(error)".contains("isbn"))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted() == before)
  }
}
