import Foundation
import ObjectModel
import ObjectStore
import TestSupport
import Testing

@Suite("Objects as class-tagged dictionaries", .serialized)
struct ObjectDictionaryTests {
  let directory: TemporaryDirectory
  let path: String
  let model: ObjectModel

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Library.sqlite").path
    model = try LibraryModel.make()
    try StoreCreator.create(at: path, model: model)
  }

  /// An author with two books that point back at it, three ordered pages, a tag on both books.
  func populate(_ context: ObjectContext) throws -> (author: ManagedObject, dune: ManagedObject) {
    let author = try context.insert("Author")
    try author.setValue(.string("frank"), for: "alias")
    let dune = try context.insert("Book")
    try dune.setValue(.string("Dune"), for: "title")
    try dune.setValue(.date(-0.25), for: "publishedAt")
    try dune.setValue(.string("kept in memory"), for: "scratch")
    let novel = try context.insert("GraphicNovel")
    try novel.setValue(.string("Watchmen"), for: "title")
    try dune.setObject(author, for: "author")
    try novel.setObject(author, for: "author")
    for number in [3, 1, 2] {
      let page = try context.insert("Page")
      try page.setValue(.integer(Int64(number)), for: "number")
      try dune.add(page, to: "pages")
    }
    let tag = try context.insert("Tag")
    try tag.setValue(.string("classic"), for: "name")
    try tag.setObjects([novel, dune], for: "books")
    try context.save()
    return (author, dune)
  }

  @Test func anObjectBecomesADictionaryOfValuesAndReferencesAsOftenAsAsked() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let (author, dune) = try populate(context)
    let first = try author.dictionary()
    // Converting again (and converting what it points at) needs no "traversed" flag.
    _ = try dune.dictionary()
    #expect(try author.dictionary() == first)
    #expect(first.entity == "Author")
    #expect(first.primaryKey == author.primaryKey)
    #expect(first.attributes == ["alias": .string("frank"), "age": .integer(30)])
    #expect(
      first.toMany["books"]?.map(\.description) == [
        "Book/p\(dune.primaryKey)", "GraphicNovel/p\(dune.primaryKey + 1)",
      ])
    let book = try dune.dictionary()
    #expect(book.toOne["author"] == .some(.init(author.reference)))
    // Ordered members keep their order; derived and transient attributes are left out.
    #expect(
      try book.toMany["pages"]?.map { try context.object(resolving: $0).value(for: "number") }
        == [.integer(3), .integer(1), .integer(2)])
    #expect(book.attributes["pagesCount"] == nil)
    #expect(book.attributes["scratch"] == nil)
    #expect(book.attributes["publishedAt"] == .some(.date(-0.25)))
  }

  @Test func aGraphCopiedThroughDictionariesIntoAnotherStoreIsTheSame() throws {
    let source = try ObjectContext(storePath: path, model: model)
    _ = try populate(source)
    let copyPath = directory.path("Copy.sqlite").path
    try StoreCreator.create(at: copyPath, model: model)
    let copy = try ObjectContext(storePath: copyPath, model: model)
    var originals: [ObjectDictionary] = []
    for entity in ["Author", "Book", "GraphicNovel", "Page", "Tag"] {
      try source.forEachObject(of: entity, includesSubentities: false, batchSize: 2) {
        originals.append(try $0.dictionary())
      }
    }
    // Objects first, then relationships: references may point forward.
    for original in originals {
      try copy.insert(
        ObjectDictionary(
          entity: original.entity, primaryKey: original.primaryKey,
          attributes: original.attributes))
    }
    for original in originals {
      try copy.object(resolving: .init(entity: original.entity, primaryKey: original.primaryKey!))
        .populate(
          from: ObjectDictionary(
            entity: original.entity, toOne: original.toOne, toMany: original.toMany))
    }
    try copy.save()
    let reread = try ObjectContext(storePath: copyPath, model: model)
    for original in originals {
      let object = try reread.object(
        resolving: .init(entity: original.entity, primaryKey: original.primaryKey!))
      #expect(try object.dictionary() == original)
    }
    // The derived count is the store's own, recomputed in the copy.
    let dune = try reread.fetch(FetchRequest(entity: "Book", predicate: "title == 'Dune'"))
    #expect(try dune.first?.value(for: "pagesCount") == .integer(3))
  }

  @Test func aGivenPrimaryKeyIsKeptAndFreshKeysComeAfterIt() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let kept = try context.insert(
      ObjectDictionary(entity: "Tag", primaryKey: 50, attributes: ["name": .string("kept")]))
    #expect(kept.primaryKey == 50)
    #expect(try context.insert("Tag").primaryKey == 51)
    #expect(throws: StoreError.self) { try context.insert("Tag", primaryKey: 50) }
    #expect(throws: StoreError.self) { try context.insert("Tag", primaryKey: 0) }
    try context.save()
    let reopened = try ObjectContext(storePath: path, model: model)
    #expect(try reopened.insert("Tag").primaryKey == 52)
    // A key taken in the store (not in memory) is refused too.
    #expect(throws: StoreError.self) { try reopened.insert("Tag", primaryKey: 51) }
  }

  @Test func populatingSetsExactlyWhatTheDictionaryNames() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let (_, dune) = try populate(context)
    let pages = try dune.objects(for: "pages")
    try dune.populate(
      from: ObjectDictionary(
        entity: "Book", attributes: ["publishedAt": nil, "rating": .double(4.5)],
        toOne: ["author": nil],
        toMany: ["pages": [pages[2], pages[0]].map { .init($0.reference) }]))
    try context.save()
    let reopened = try ObjectContext(storePath: path, model: model)
    let book = try reopened.object(with: dune.reference)
    #expect(try book.value(for: "publishedAt") == nil)
    #expect(try book.value(for: "rating") == .double(4.5))
    #expect(try book.value(for: "title") == .string("Dune"))  // not named: unchanged
    #expect(try book.object(for: "author") == nil)
    #expect(
      try book.objects(for: "pages").map(\.reference) == [pages[2], pages[0]].map(\.reference))
    #expect(try book.value(for: "pagesCount") == .integer(2))
    // The page left out lost its book, as Core Data's nullify does.
    #expect(try reopened.object(with: pages[1].reference).object(for: "book") == nil)
  }

  @Test func aNaturalKeyPicksOutExactlyOneObject() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let (author, _) = try populate(context)
    let byAlias = ObjectDictionary.Reference(
      entity: "Writer", naturalKey: ["alias": .string("frank")])
    #expect(try context.object(resolving: byAlias) === context.object(with: author.reference))
    // Pending inserts count too.
    let second = try context.insert("Tag")
    try second.setValue(.string("classic"), for: "name")
    #expect {
      try context.object(resolving: .init(entity: "Tag", naturalKey: ["name": .string("classic")]))
    } throws: { error in
      "\(error)".contains(#"2 objects match Tag(name: "classic"); a natural key must pick out one"#)
    }
    #expect {
      try context.object(
        resolving: .init(entity: "Author", naturalKey: ["alias": .string("nobody")]),
        for: "Book.author")
    } throws: { error in
      "\(error)".contains(#"no Author(alias: "nobody") (Book.author)"#)
    }
    #expect(throws: StoreError.self) {
      try context.object(resolving: .init(entity: "Author", naturalKey: ["nickname": .string("x")]))
    }
    // A key names an object in the entity's hierarchy, not just the entity itself.
    let novel = try context.fetch(FetchRequest(entity: "GraphicNovel")).first!
    #expect(
      try context.object(resolving: .init(entity: "Book", primaryKey: novel.primaryKey)) === novel)
    #expect(throws: StoreError.self) {
      try context.object(resolving: .init(entity: "Page", primaryKey: novel.primaryKey + 1000))
    }
  }

  @Test func aReadOnlyContextReadsButNeverSaves() throws {
    let writer = try ObjectContext(storePath: path, model: model)
    _ = try populate(writer)
    let before = try Data(contentsOf: URL(fileURLWithPath: path))
    let reader = try ObjectContext(storePath: path, model: model, readOnly: true)
    var titles: [String] = []
    try reader.reading {
      try reader.forEachObject(of: "Book", batchSize: 1) { book in
        if case .string(let title) = try book.value(for: "title") { titles.append(title) }
      }
    }
    #expect(titles == ["Dune", "Watchmen"])
    let tag = try reader.insert("Tag")
    try tag.setValue(.string("new"), for: "name")
    #expect(throws: StoreError.self) { try reader.save() }
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
  }
}
