import Foundation
import ObjectModel
import ObjectStore
import SQLite
import TestSupport
import Testing

@Suite("The object context")
struct ObjectContextTests {
  let directory: TemporaryDirectory
  let path: String
  let model: ObjectModel

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Library.sqlite").path
    model = try LibraryModel.make()
    try StoreCreator.create(at: path, model: model)
  }

  /// Fills the store: an author with two books (one a graphic novel), pages in order, tags.
  @discardableResult
  func populate() throws -> (author: ObjectReference, books: [ObjectReference]) {
    let context = try ObjectContext(storePath: path, model: model)
    let author = try context.insert("Author")
    try author.setValue(.string("frank"), for: "alias")
    let dune = try context.insert("Book")
    try dune.setValue(.string("Dune"), for: "title")
    try dune.setValue(.uuid(Array(0..<16)), for: "uniqueID")
    try dune.setValue(.decimal("10.5"), for: "price")
    try dune.setValue(.double(4.25), for: "rating")
    try dune.setValue(.double(0.5), for: "weight")
    try dune.setValue(.integer(3), for: "edition")
    try dune.setValue(.integer(20_000_000_000), for: "sales")
    try dune.setValue(.date(-31_536_000.5), for: "publishedAt")
    try dune.setValue(.data([1, 2, 3]), for: "cover")
    try dune.setValue(.uri("https://example.org/dune"), for: "site")
    try dune.setValue(.transformed(Array("bplist00".utf8)), for: "color")
    try dune.setValue(.string("not stored"), for: "scratch")
    let novel = try context.insert("GraphicNovel")
    try novel.setValue(.string("Watchmen"), for: "title")
    try novel.setValue(.bool(false), for: "isBlackAndWhite")
    try dune.setObject(author, for: "author")
    try author.add(novel, to: "books")
    for number in [3, 1, 2] {
      let page = try context.insert("Page")
      try page.setValue(.integer(Int64(number)), for: "number")
      try dune.add(page, to: "pages")
    }
    let classic = try context.insert("Tag")
    try classic.setValue(.string("classic"), for: "name")
    try classic.add(dune, to: "books")
    try novel.add(classic, to: "tags")
    try context.save()
    return (author.reference, [dune.reference, novel.reference])
  }

  @Test func everyAttributeTypeAndRelationshipKindSurvivesSaveAndReopen() throws {
    let (author, books) = try populate()
    let context = try ObjectContext(storePath: path, model: model)
    let dune = try context.object(with: books[0])
    #expect(try dune.value(for: "title") == .string("Dune"))
    #expect(try dune.value(for: "uniqueID") == .uuid(Array(0..<16)))
    #expect(try dune.value(for: "price") == .decimal("10.5"))
    #expect(try dune.value(for: "rating") == .double(4.25))
    #expect(try dune.value(for: "sales") == .integer(20_000_000_000))
    #expect(try dune.value(for: "inPrint") == .bool(true))  // the default
    #expect(try dune.value(for: "publishedAt") == .date(-31_536_000.5))
    #expect(try dune.value(for: "cover") == .data([1, 2, 3]))
    #expect(try dune.value(for: "site") == .uri("https://example.org/dune"))
    #expect(try dune.value(for: "color") == .transformed(Array("bplist00".utf8)))
    #expect(try dune.value(for: "scratch") == nil)  // transient: never stored
    #expect(try dune.value(for: "pagesCount") == .integer(3))  // kept by Core Data's triggers
    #expect(try dune.object(for: "author")?.reference == author)
    // The ordered to-many keeps insertion order, not page number or key order.
    #expect(
      try dune.objects(for: "pages").map { try $0.value(for: "number") } == [
        .integer(3), .integer(1), .integer(2),
      ])
    let writer = try context.object(with: author)
    #expect(try writer.objects(for: "books").map(\.reference) == books)
    #expect(try writer.value(for: "age") == .integer(30))
    let novel = try context.object(with: books[1])
    #expect(
      try novel.objects(for: "tags").map { try $0.value(for: "name") } == [.string("classic")])
    #expect(try novel.objects(for: "tags").first?.objects(for: "books").count == 2)
  }

  @Test func theBackupReaderSeesWhatTheContextSaved() throws {
    try populate()
    let store = try CoreDataStore(path: path)
    let layout = try store.layout(for: model)
    var records: [ObjectRecord] = []
    try store.read { store in
      for table in layout.tables {
        try store.forEachObject(in: table, layout: layout) { records.append($0) }
      }
    }
    #expect(records.count == 7)
    #expect(Set(records.map(\.entity)) == ["Author", "Book", "GraphicNovel", "Page", "Tag"])
    #expect(records.allSatisfy { $0.version == 1 })
    var pairs = 0
    for join in layout.joins { try store.forEachPair(in: join) { _, _, _ in pairs += 1 } }
    #expect(pairs == 2)
  }

  @Test func savingKeepsPrimaryKeyCountersAndIncrementsVersions() throws {
    let (_, books) = try populate()
    let db = try Database(path: path, mode: .readOnly)
    #expect(
      try db.prepare("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'").scalar() == .integer(2)
    )
    #expect(
      try db.prepare("SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Page'").scalar() == .integer(3)
    )
    let context = try ObjectContext(storePath: path, model: model)
    let dune = try context.object(with: books[0])
    try dune.setValue(.string("Dune Messiah"), for: "title")
    try context.save()
    #expect(
      try db.prepare("SELECT Z_OPT FROM ZBOOK WHERE Z_PK = \(books[0].primaryKey)").scalar()
        == .integer(2))
    // Keys are never reused, even after a delete.
    let page = try #require(try dune.objects(for: "pages").last)
    try context.delete(page)
    try context.save()
    #expect(try context.insert("Page").primaryKey == 4)
  }

  @Test func fetchFiltersSortsAndIncludesSubentitiesAndPendingChanges() throws {
    try populate()
    let context = try ObjectContext(storePath: path, model: model)
    let all = try context.fetch(
      FetchRequest(entity: "Book", sortDescriptors: [SortDescriptor("title")]))
    #expect(try all.map { try $0.value(for: "title") } == [.string("Dune"), .string("Watchmen")])
    #expect(try context.fetch(FetchRequest(entity: "Book", includesSubentities: false)).count == 1)
    let pages = try context.fetch(
      FetchRequest(
        entity: "Page", predicate: .greaterOrEqual("number", .integer(2)),
        sortDescriptors: [SortDescriptor("number", ascending: false)]))
    #expect(try pages.map { try $0.value(for: "number") } == [.integer(3), .integer(2)])
    let unsaved = try context.insert("Book")
    try unsaved.setValue(.string("Zeta"), for: "title")
    #expect(
      try context.fetch(FetchRequest(entity: "Book", predicate: .equal("title", .string("Zeta"))))
        .map(\.reference) == [unsaved.reference])
    let either = try context.fetch(
      FetchRequest(
        entity: "Book",
        predicate: .or([.equal("title", .string("Dune")), .equal("title", .string("Zeta"))])))
    #expect(either.count == 2)
    #expect(
      try context.fetch(
        FetchRequest(entity: "Book", predicate: .not(.equal("title", .string("Dune"))))
      ).count == 2)
    #expect(try context.fetch(FetchRequest(entity: "Book", fetchLimit: 1)).count == 1)
  }

  /// A Deny rule is judged when the context saves, as Core Data validates a deletion: the
  /// delete is pending, the save refuses and keeps it pending, a rollback brings the object
  /// back.
  @Test func denyRefusesAtSaveCascadeFollowsAndNullifyDetaches() throws {
    let (author, books) = try populate()
    let context = try ObjectContext(storePath: path, model: model)
    let writer = try context.object(with: author)
    try context.delete(writer)
    #expect(writer.isDeleted)
    do {
      try context.save()
      Issue.record("a Deny rule let the author go")
    } catch {
      #expect(error.kind == .deleteDenied)
      #expect(error.description.contains("Author.books"))
    }
    #expect(writer.isDeleted)
    context.rollback()
    #expect(!writer.isDeleted)
    // Cascade: the book takes its pages along; nullify: the tag forgets the book.
    let dune = try context.object(with: books[0])
    let tag = try #require(try dune.objects(for: "tags").first)
    try context.delete(dune)
    #expect(try context.fetch(FetchRequest(entity: "Page")).isEmpty)
    #expect(try tag.objects(for: "books").map(\.reference) == [books[1]])
    #expect(try writer.objects(for: "books").map(\.reference) == [books[1]])
    try context.save()
    let db = try Database(path: path, mode: .readOnly)
    #expect(try db.prepare("SELECT count(*) FROM ZPAGE").scalar() == .integer(0))
    #expect(try db.prepare("SELECT count(*) FROM ZBOOK").scalar() == .integer(1))
    #expect(try db.prepare("SELECT count(*) FROM Z_1TAGS").scalar() == .integer(1))
    // With its books gone, the author can go.
    try context.delete(try context.object(with: books[1]))
    try context.delete(writer)
    try context.save()
    #expect(try db.prepare("SELECT count(*) FROM ZWRITER").scalar() == .integer(0))
  }

  @Test func aConcurrentChangeIsAConflictNotALostUpdate() throws {
    let (_, books) = try populate()
    let first = try ObjectContext(storePath: path, model: model)
    let second = try ObjectContext(storePath: path, model: model)
    try first.object(with: books[0]).setValue(.string("First"), for: "title")
    try second.object(with: books[0]).setValue(.string("Second"), for: "title")
    try first.save()
    do {
      try second.save()
      Issue.record("the second save overwrote the first")
    } catch {
      #expect(error.kind == .conflict)
    }
    let db = try Database(path: path, mode: .readOnly)
    #expect(
      try db.prepare("SELECT ZTITLE FROM ZBOOK WHERE Z_PK = \(books[0].primaryKey)").scalar()
        == .text("First"))
  }

  @Test func validationNamesTheObjectAndPropertyAndSavesNothing() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let book = try context.insert("Book")
    do {
      try context.save()
      Issue.record("saved a book without a title")
    } catch {
      #expect(error.kind == .validation)
      #expect(error.description.contains("Book.title"))
    }
    #expect(context.hasChanges)
    #expect(throws: StoreError.self) { try book.setValue(.string("wrong"), for: "edition") }
    #expect(throws: StoreError.self) { try book.setValue(.integer(1), for: "pagesCount") }
    #expect(throws: StoreError.self) { try book.setValue(.integer(1), for: "nonexistent") }
    #expect(throws: StoreError.self) { try context.insert("Writer") }  // abstract
  }

  @Test func rollbackDiscardsInsertsAndRestoresStoredValues() throws {
    let (_, books) = try populate()
    let context = try ObjectContext(storePath: path, model: model)
    let dune = try context.object(with: books[0])
    try dune.setValue(.string("Changed"), for: "title")
    let extra = try context.insert("Tag")
    context.rollback()
    #expect(!context.hasChanges)
    #expect(try dune.value(for: "title") == .string("Dune"))
    #expect(extra.isDeleted)
    #expect(try context.fetch(FetchRequest(entity: "Tag")).count == 1)
  }

  @Test func oneToOneRelationshipsKeepBothForeignKeys() throws {
    let model = try ObjectModel(
      name: "Posts",
      entities: [
        EntityDescription(
          name: "Post",
          relationships: [.init(name: "color", destination: "Color", inverse: "post", maxCount: 1)]
        ),
        EntityDescription(
          name: "Color",
          relationships: [.init(name: "post", destination: "Post", inverse: "color", maxCount: 1)]
        ),
      ])
    let store = directory.path("Posts.sqlite").path
    try StoreCreator.create(at: store, model: model)
    let context = try ObjectContext(storePath: store, model: model)
    let post = try context.insert("Post")
    let red = try context.insert("Color")
    let blue = try context.insert("Color")
    try post.setObject(red, for: "color")
    try post.setObject(blue, for: "color")
    #expect(try red.object(for: "post") == nil)
    #expect(try blue.object(for: "post")?.reference == post.reference)
    try context.save()
    let db = try Database(path: store, mode: .readOnly)
    #expect(try db.prepare("SELECT ZCOLOR FROM ZPOST").scalar() == .integer(blue.primaryKey))
    #expect(
      try db.prepare("SELECT ZPOST FROM ZCOLOR WHERE Z_PK = \(blue.primaryKey)").scalar()
        == .integer(post.primaryKey))
    #expect(
      try db.prepare("SELECT ZPOST FROM ZCOLOR WHERE Z_PK = \(red.primaryKey)").scalar() == .null)
  }
}
