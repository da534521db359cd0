import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// The classes `graphvault generate` writes for the sample model, kept in `GeneratedLibrary/`
/// and compiled into these tests: held equal to the generator's output, then used as an app
/// uses Xcode's generated classes.
@Suite("Generated entity classes")
struct GeneratedClassesTests {
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("GeneratedLibrary")

  @Test func theCheckedInClassesAreWhatTheGeneratorWrites() throws {
    let model = try ModelSource.model(
      at: SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Library.xcdatamodeld").path)
    try Self.expect(ClassGenerator.files(for: model), keptIn: Self.folder)
  }

  /// Expects `folder` to hold exactly `files`, as the generator writes them.
  static func expect(_ files: [ClassGenerator.File], keptIn folder: URL) throws {
    #expect(
      files.map(\.name).sorted()
        == (try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()))
    for file in files {
      let kept = try String(contentsOf: folder.appendingPathComponent(file.name), encoding: .utf8)
      #expect(
        kept == file.text,
        "\(file.name): run graphvault generate into \(folder.lastPathComponent)")
    }
  }

  @Test func objectsAreMadeAndFetchedAsCoreDataDevelopersWriteIt() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: path, objects: 300)
    let context = try ObjectContext(storePath: path, model: try SampleLibrary.model())
    // No registration first: the class registers itself.
    let novel = try GraphicNovel(context: context)
    novel.title = "Maus"
    let author = try Author(context: context)
    author.alias = "art"
    novel.author = author
    #expect(novel.isInserted && novel.entity == "GraphicNovel")
    try context.save()

    let novels = try context.fetch(GraphicNovel.self, GraphicNovel.fetchRequest())
    #expect(novels.contains { $0.title == "Maus" })
    #expect(GraphicNovel.fetchRequest().entity == "GraphicNovel")
    // A book's request reaches its sub-entity's objects too, as Core Data's does.
    let books = try context.fetch(Book.self, Book.fetchRequest())
    #expect(books.contains { $0.primaryKey == novel.primaryKey })
    #expect(
      try sqlRows(path, "SELECT count(*) FROM ZBOOK WHERE ZTITLE = 'Maus'") == ["1"])
  }

  @Test func scalarsTakeArithmeticAndARequiredValueReadBeforeItIsSetDoesNotStop() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: path, objects: 30)
    let context = try ObjectContext(storePath: path, model: try SampleLibrary.model())
    let book = try Book(context: context)
    // The model's defaults, as scalars; an optional scalar left nil reads as 0.
    #expect(book.edition == 1 && book.inPrint && book.rating == 0)
    book.edition += 1
    book.sales += 250
    try book.setValue(nil as Double?, for: "rating")
    #expect(book.rating == 0)
    #expect(try book.value(for: "rating") == nil)
    // Required and not set: its empty value, and the save names it.
    #expect(book.title == "")
    #expect(try book.value(for: "title") == nil)
    let error = #expect(throws: StoreError.self) { try context.save() }
    #expect(error?.kind == .validation)
    #expect(error?.description.contains("Book.title is required and has no value") == true)
    book.title = "Dune"
    try context.save()
    #expect(
      try sqlRows(path, "SELECT ZEDITION, ZSALES, ZRATING IS NULL FROM ZBOOK WHERE ZTITLE = 'Dune'")
        == ["2|250|1"])
  }

  @Test func typedObjectsFetchChangeAndSaveThroughTheirProperties() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: path, objects: 600)
    let context = try ObjectContext(storePath: path, model: try SampleLibrary.model())
    try LibraryEntityClasses.register(on: context)

    let request = FetchRequest(
      entity: "Book", predicate: ObjectStore.Predicate(format: "rating > %f", 2.0),
      sortDescriptors: [
        ObjectStore.SortDescriptor("author.alias"), ObjectStore.SortDescriptor("title"),
      ],
      fetchLimit: 5)
    let books = try context.fetch(Book.self, request)
    let untyped = try ObjectContext(storePath: path, model: try SampleLibrary.model())
    let plain = try untyped.fetch(request)
    #expect(books.count == 5)
    #expect(books.map(\.primaryKey) == plain.map(\.primaryKey))
    for (book, same) in zip(books, plain) {
      #expect(book.title == (try same.value(for: "title", as: String.self)))
      #expect(book.rating > 2)
      #expect(book.author?.primaryKey == (try same.object(for: "author"))?.primaryKey)
      #expect(book.pages.map(\.primaryKey) == (try same.objects(for: "pages")).map(\.primaryKey))
      #expect(
        Set(book.tags.map(\.primaryKey)) == Set(try same.objects(for: "tags").map(\.primaryKey)))
    }
    #expect(
      try context.fetch(FetchRequest(entity: "GraphicNovel")).allSatisfy { $0 is GraphicNovel })
    #expect(try context.fetch(FetchRequest(entity: "Author")).allSatisfy { $0 is Author })

    let book = books[0]
    book.title = "Changed"
    let tag = try context.insert(Tag.self)
    tag.name = "generated"
    book.tags = book.tags.union([tag])
    #expect(book.hasChanges && tag.isInserted)
    #expect(try book.changedValues()["title"] == .attribute(.string("Changed")))
    try context.save()

    let reread = try ObjectContext(storePath: path, model: try SampleLibrary.model())
    try LibraryEntityClasses.register(on: reread)
    let saved = try #require(
      try reread.fetch(
        Book.self,
        FetchRequest(
          entity: "Book", predicate: ObjectStore.Predicate(format: "title == %@", "Changed"))
      ).first)
    #expect(saved.primaryKey == book.primaryKey)
    #expect(saved.tags.contains { $0.name == "generated" })
  }

  /// The README's example with the generated classes, as it is written there.
  @Test func theReadmesGeneratedClassExampleRuns() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("Library.sqlite").path
    try SampleLibrary.generate(at: path, objects: 600)
    let model = try SampleLibrary.model()
    let alias = try #require(
      try sqlRows(path, "SELECT ZALIAS FROM ZWRITER ORDER BY Z_PK LIMIT 1").first)
    var printed: [String] = []
    func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }

    let context = try ObjectContext(storePath: path, model: model)
    try LibraryEntityClasses.register(on: context)  // each entity's objects made by its class

    let books = try context.fetch(
      Book.self,
      FetchRequest(
        entity: "Book", predicate: ObjectStore.Predicate(format: "author.alias == %@", alias),
        sortDescriptors: [ObjectStore.SortDescriptor("publishedAt", ascending: false)],
        fetchLimit: 10))
    for book in books {
      print(book.title, book.rating, book.author?.alias ?? "", book.pages.count)
    }
    let tag = try Tag(context: context)  // or context.insert(Tag.self)
    tag.name = "classics"
    books[0].tags.insert(tag)  // Set<Tag>; the inverse follows
    try context.save()
    let everyTag = try context.fetch(Tag.self, Tag.fetchRequest())

    #expect(everyTag.contains { $0 === tag })
    #expect(!books.isEmpty && printed.count == books.count)
    #expect(printed.allSatisfy { $0.contains(alias) })
    #expect(tag.books.map(\.primaryKey) == [books[0].primaryKey])
    let book = books[0]
    #expect(throws: Never.self) { try book.setValue(3, for: "rating") }
    #expect(book.rating == 3)
    #expect {
      try book.setValue(2.5, for: "edition")
    } throws: { error in
      (error as? StoreError)?.description.contains(
        "Book.edition is Integer 32; 2.5 (Double) does not convert to it") == true
    }
  }
}
