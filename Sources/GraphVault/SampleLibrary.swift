import Foundation
import ObjectModel
import ObjectStore

/// The sample model (`Fixtures/Library.xcdatamodeld`, built here in Swift code) and a
/// deterministic generator of stores of it, for the README's main job, load tests and fixtures.
public enum SampleLibrary {
  /// The sample model's current version, `Library 3`: abstract `Writer` ← `Author`, `Book` ←
  /// `GraphicNovel`, `Page`, `Tag`; to-one, ordered one-to-many, many-to-many; every common
  /// attribute type. Its older versions, `Library` and `Library 2`, are only in the Xcode model.
  public static func model() throws(VaultError) -> ObjectModel {
    let builder = ModelBuilder(
      name: "Library", versionName: "Library 3", versionIdentifiers: ["3"])
    func attribute(
      _ name: String, _ type: AttributeType, optional: Bool = true, default value: String? = nil
    )
      -> AttributeDescription
    {
      AttributeDescription(
        name: name, type: type, isOptional: optional,
        defaultValue: value.flatMap { AttributeValue(defaultValueString: $0, type: type) })
    }
    do {
      try builder.addEntity(
        EntityDescription(
          name: "Writer", className: "Writer", isAbstract: true, uniquenessConstraints: [["alias"]],
          attributes: [
            attribute("alias", .string, optional: false),
            AttributeDescription(
              name: "color", type: .transformable,
              valueTransformerName: "NSSecureUnarchiveFromDataTransformer",
              valueClassName: "NSColor"),
          ]))
      try builder.addEntity(
        EntityDescription(
          name: "Author", className: "Author", parent: "Writer",
          attributes: [attribute("age", .integer16, default: "0"), attribute("siteURL", .uri)]))
      try builder.addEntity(
        EntityDescription(
          name: "Book", className: "Book", uniquenessConstraints: [["uniqueID"]],
          attributes: [
            attribute("cover", .binaryData), attribute("edition", .integer32, default: "1"),
            attribute("inPrint", .boolean, default: "YES"),
            attribute("price", .decimal, default: "0.0"),
            attribute("publishedAt", .date), attribute("rating", .double, default: "0.0"),
            attribute("sales", .integer64, default: "0"),
            attribute("title", .string, optional: false),
            attribute("uniqueID", .uuid), attribute("weight", .float, default: "0.0"),
          ]))
      try builder.addEntity(
        EntityDescription(
          name: "GraphicNovel", className: "GraphicNovel", parent: "Book",
          attributes: [attribute("isBlackAndWhite", .boolean)]))
      try builder.addEntity(
        EntityDescription(
          name: "Page", className: "Page",
          attributes: [attribute("number", .integer32, default: "0"), attribute("text", .string)]))
      try builder.addEntity(
        EntityDescription(
          name: "Tag", className: "Tag",
          attributes: [attribute("name", .string, optional: false, default: "untagged")]))
      try builder.relate(
        "Book", RelationshipDescription(name: "author", destination: "Writer"),
        inverse: RelationshipDescription(
          name: "books", destination: "Book", maxCount: 0, deleteRule: .deny))
      try builder.relate(
        "Book",
        RelationshipDescription(
          name: "pages", destination: "Page", maxCount: 0, isOrdered: true, deleteRule: .cascade),
        inverse: RelationshipDescription(name: "book", destination: "Book"))
      try builder.relate(
        "Book",
        RelationshipDescription(
          name: "tags", destination: "Tag", maxCount: 0, renamingIdentifier: "tag"),
        inverse: RelationshipDescription(name: "books", destination: "Book", maxCount: 0))
      return try builder.build()
    } catch {
      throw VaultError(wrapping: error)
    }
  }

  /// Creates a store of the sample model at `path` holding about `objects` objects: authors,
  /// books (a third of them graphic novels) with ordered pages, and tags shared many-to-many;
  /// strings, dates, numbers, UUIDs and cover images of a few kilobytes. The same `seed` gives
  /// the same store.
  public static func generate(
    at path: String, objects: Int, seed: UInt64 = 1, overwrite: Bool = false
  )
    throws(VaultError)
  {
    let model = try model()
    try vault {
      var options = StoreCreator.Options()
      options.overwrite = overwrite
      try StoreCreator.create(at: path, model: model, options: options)
      let context = try ObjectContext(storePath: path, model: model)
      var random = SeededRandom(seed: seed)
      let authorCount = max(1, objects / 50)
      let tagCount = max(1, min(20, objects / 100))
      var authors: [ObjectReference] = []
      var tags: [ObjectReference] = []
      for i in 0..<authorCount {
        let author = try context.insert("Author")
        try author.setValue(.string("author-\(i)"), for: "alias")
        try author.setValue(.integer(Int64(20 + random.next(60))), for: "age")
        try author.setValue(.uri("https://example.org/authors/\(i)"), for: "siteURL")
        authors.append(author.reference)
      }
      for i in 0..<tagCount {
        let tag = try context.insert("Tag")
        try tag.setValue(
          .string(["classic", "sci-fi", "poetry", "history", "travel"][i % 5] + "-\(i)"),
          for: "name")
        tags.append(tag.reference)
      }
      try context.save()
      var made = authorCount + tagCount
      var bookNumber = 0
      while made < objects {
        let book = try context.insert(bookNumber % 3 == 2 ? "GraphicNovel" : "Book")
        try book.setValue(.string("Book \(bookNumber): \(random.words(3))"), for: "title")
        try book.setValue(.uuid(random.bytes(16)), for: "uniqueID")
        try book.setValue(
          .decimal("\(random.next(9_000) + 100).\(random.next(90) + 10)"), for: "price")
        try book.setValue(.date(Double(random.next(700_000_000))), for: "publishedAt")
        try book.setValue(.double(Double(random.next(50)) / 10), for: "rating")
        try book.setValue(.integer(Int64(random.next(1_000_000))), for: "sales")
        try book.setValue(.double(Double(random.next(2_000)) / 1_000), for: "weight")
        if bookNumber % 10 == 0 {
          try book.setValue(.data(random.bytes(2_048 + random.next(4_096))), for: "cover")
        }
        if book.entity == "GraphicNovel" {
          try book.setValue(.bool(random.next(2) == 0), for: "isBlackAndWhite")
        }
        try book.setObject(
          try context.object(with: authors[random.next(authors.count)]), for: "author")
        for tag in Set((0..<random.next(4)).map { _ in tags[random.next(tags.count)] }).sorted(by: {
          $0.primaryKey < $1.primaryKey
        }) {
          try book.add(try context.object(with: tag), to: "tags")
        }
        made += 1
        for number in 0..<min(objects - made, 1 + random.next(3)) {
          let page = try context.insert("Page")
          try page.setValue(.integer(Int64(number + 1)), for: "number")
          try page.setValue(.string(random.words(12)), for: "text")
          try book.add(page, to: "pages")
          made += 1
        }
        bookNumber += 1
        if bookNumber % 500 == 0 {
          try context.save()
          try context.reset()
        }
      }
      try context.save()
    }
  }
}

/// A small deterministic generator (SplitMix64) for sample data.
struct SeededRandom {
  private var state: UInt64
  init(seed: UInt64) { state = seed }

  mutating func nextRaw() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A number in 0..<bound.
  mutating func next(_ bound: Int) -> Int { Int(nextRaw() % UInt64(max(bound, 1))) }

  mutating func bytes(_ count: Int) -> [UInt8] {
    (0..<count).map { _ in UInt8(truncatingIfNeeded: nextRaw()) }
  }

  mutating func words(_ count: Int) -> String {
    let words = [
      "river", "stone", "light", "winter", "garden", "signal", "paper", "harbor", "orbit", "maple",
      "echo", "lantern",
    ]
    return (0..<count).map { _ in words[next(words.count)] }.joined(separator: " ")
  }
}
