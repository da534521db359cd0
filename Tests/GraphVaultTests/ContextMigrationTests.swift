import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// A context opened on a store whose model is not the context's, as Core Data's persistent
/// container opens one: refused naming what differs, or, when asked, the store migrated in
/// place first (automatic lightweight migration).
@Suite("Opening a context on a store of another model version")
struct ContextMigrationTests {
  let directory: TemporaryDirectory
  let versions: ModelVersionSet
  let store: String

  init() throws {
    directory = try TemporaryDirectory()
    versions = try ModelSource.versions(at: LibraryArchive.modelPath)
    let first = try #require(versions.version(named: "Library"))
    store = directory.path("Library.sqlite").path
    try StoreCreator.create(at: store, model: first)
    let context = try ObjectContext(storePath: store, model: first)
    for index in 1...5 {
      let book = try context.insert("Book")
      try book.setValue(.string("Book \(index)"), for: "name")
      let novelist = try context.insert("Novelist")
      try novelist.setValue(.string("novelist-\(index)"), for: "alias")
    }
    try context.save()
  }

  @Test func aStoreOfAnotherVersionIsRefusedNamingTheEntitiesThatDiffer() throws {
    let second = try #require(versions.version(named: "Library 2"))
    do {
      _ = try MigrateService.openContext(storePath: store, model: second)
      Issue.record("a store of another version opened")
    } catch {
      #expect(error.kind == .modelUnavailable)
      for part in ["Novelist removed", "Author added", "Book changed", "migrating: true"] {
        #expect(error.description.contains(part), "\(error.description)")
      }
    }
    // Nothing was written: the store is still at the first version.
    let first = try #require(versions.version(named: "Library"))
    let context = try MigrateService.openContext(storePath: store, model: first)
    #expect(try context.fetch(FetchRequest(entity: "Novelist")).count == 5)
  }

  @Test func askedToMigrateTheContextMigratesTheStoreInPlaceFirst() throws {
    let second = try #require(versions.version(named: "Library 2"))
    let context = try MigrateService.openContext(
      storePath: store, model: second, migrating: true, versions: versions)
    // Novelist became Author and a book's name its title (their renaming identifiers).
    let authors = try context.fetch(FetchRequest(entity: "Author"))
    #expect(authors.count == 5)
    let titles = try context.fetch(FetchRequest(entity: "Book")).compactMap {
      if case .string(let title)? = try $0.value(for: "title") { return try title }
      return nil
    }
    #expect(Set(titles) == Set((1...5).map { "Book \($0)" }))
    #expect(try CoreDataStore(path: store).versionHashes == second.versionHashes)
    // Opened again without migrating: it fits now.
    _ = try MigrateService.openContext(storePath: store, model: second)
  }
}
