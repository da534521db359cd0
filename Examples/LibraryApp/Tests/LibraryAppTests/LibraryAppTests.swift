import Foundation
import GraphVaultTesting
import LibraryModel
import ObjectStore
import Testing

/// Written as a new user writes tests from graphvault's README: a fixture cut from a sample
/// store (`graphvault fixture`, books rated above 2 with their pages and tags, the writers'
/// aliases scrubbed), the model's generated classes, typed fetches, change tracking.
@Suite("The library app's model")
struct LibraryAppTests {
  let store: TemporaryStore

  init() throws {
    let fixture = try #require(Bundle.module.path(forResource: "Fixtures/books", ofType: "gvault"))
    store = try TemporaryStore(loading: fixture)
    try LibraryEntityClasses.register(on: store.context)
  }

  @Test func theFixturesBooksComeAsTheirGeneratedClasses() throws {
    let books = try store.context.fetch(Book.self, FetchRequest(entity: "Book"))
    #expect(books.count == 40)
    for book in books {
      #expect(!book.title.isEmpty)
      #expect(book.rating > 2)
      if let author = book.author { #expect(!author.alias.isEmpty) }
      #expect(book.pages.allSatisfy { $0.book == book })
    }
    // Each object is made by its own entity's class: graphic novels by GraphicNovel.
    for book in books { #expect(type(of: book).entityName == book.entity) }
    #expect(books.contains { $0 is GraphicNovel })
  }

  @Test func fetchesSortByKeyPathsAndTakeLimitsOffsetsAndArguments() throws {
    let context = store.context
    let sorted = [
      ObjectStore.SortDescriptor("author.alias"), ObjectStore.SortDescriptor("title"),
    ]
    let all = try context.fetch(Book.self, FetchRequest(entity: "Book", sortDescriptors: sorted))
    let page = try context.fetch(
      Book.self,
      FetchRequest(entity: "Book", sortDescriptors: sorted, fetchLimit: 5, fetchOffset: 2))
    #expect(page == Array(all[2..<7]))
    let aliases = all.map { $0.author?.alias ?? "" }
    #expect(aliases == aliases.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })

    let threshold = 3.5
    let rated = FetchRequest(
      entity: "Book", predicate: ObjectStore.Predicate(format: "rating >= %f", threshold))
    let count = try context.count(for: rated)
    #expect(count == all.filter { $0.rating >= threshold }.count)
    #expect(try context.fetch(rated).count == count)
    let title = try #require(all.first?.title)
    let named = try context.fetch(
      Book.self,
      FetchRequest(
        entity: "Book", predicate: ObjectStore.Predicate(format: "%K == %@", "title", title)))
    #expect(named.allSatisfy { $0.title == title } && !named.isEmpty)
  }

  @Test func changesAreTrackedAndASaveIsMergedIntoASecondContext() throws {
    let writer = store.context
    let reader = try ObjectContext(storePath: store.path, model: store.model)
    try LibraryEntityClasses.register(on: reader)
    let book = try #require(try writer.fetch(Book.self, FetchRequest(entity: "Book")).first)
    let same = try #require(
      try reader.fetch(
        Book.self,
        FetchRequest(
          entity: "Book", predicate: ObjectStore.Predicate(format: "title == %@", book.title))
      ).first { $0.primaryKey == book.primaryKey })

    book.title = "Retitled"
    #expect(book.hasChanges && book.isUpdated && writer.updatedObjects.contains(book))
    #expect(try book.changedValues() == ["title": .attribute(.string("Retitled"))])
    let merging = reader.mergeChanges(fromSavesOf: writer)
    try writer.save()
    #expect(!book.hasChanges)
    #expect(same.title == "Retitled")
    #expect(merging.lastError == nil)
  }

  @Test func anAuthorImportedAgainIsUpsertedByItsAliasAndScalarsTakeArithmetic() throws {
    let context = store.context
    let authors = try context.fetch(Author.self, Author.fetchRequest())
    let existing = try #require(authors.first)
    // An import that meets an author it has already: Core Data's merge policy upserts it.
    context.mergePolicy = .mergeByKey
    let again = try Author(context: context)
    again.alias = existing.alias
    again.age = 44
    let book = try Book(context: context)
    book.title = "Imported"
    book.author = again
    book.edition += 1
    try context.save()

    #expect(again.isDeleted)
    #expect(book.author == existing)
    #expect(existing.age == 44 && book.edition == 2)
    #expect(try context.count(for: Author.fetchRequest()) == authors.count)
  }

  @Test func aBatchInsertWritesAFeedWithoutObjectsAndUpsertsByAlias() throws {
    let context = store.context
    let authors = try context.fetch(Author.self, Author.fetchRequest())
    let existing = try #require(authors.first)
    let feed: [(alias: String, age: Int16)] = [
      ("new-1", 31), (existing.alias, 77), ("new-2", 32),
    ]
    context.mergePolicy = .mergeByKey
    var request = BatchInsertRequest(entity: "Author") { row in
      guard row.index < feed.count else { return true }
      try row.setValue(feed[row.index].alias, for: "alias")
      try row.setValue(feed[row.index].age, for: "age")
      return false
    }
    request.resultType = .objectReferences
    let result = try context.execute(request)

    #expect(result.inserted == 2 && result.updated == 1)
    #expect(result.objects?[1] == existing.reference)
    // The context's objects are as they were until refreshed, as with Core Data.
    try context.refresh(existing, mergeChanges: false)
    #expect(existing.age == 77)
    #expect(try context.count(for: Author.fetchRequest()) == authors.count + 2)
  }
}
