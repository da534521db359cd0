import DurableIO
import Foundation
import ObjectModel
import ObjectStore
import PropertyList

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
        "Book", RelationshipDescription(name: "author", destination: "Writer", maxCount: 1),
        inverse: RelationshipDescription(
          name: "books", destination: "Book", maxCount: 0, deleteRule: .deny))
      try builder.relate(
        "Book",
        RelationshipDescription(
          name: "pages", destination: "Page", maxCount: 0, isOrdered: true, deleteRule: .cascade),
        inverse: RelationshipDescription(name: "book", destination: "Book", maxCount: 1))
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

  /// Creates a store of the sample model at `path` holding `objects` objects: authors, tags
  /// shared many-to-many, books (a third of them graphic novels) each followed by one to three
  /// ordered pages; strings, dates, decimals, doubles, integers, UUIDs, URIs, transformable
  /// colors and cover images of 2–6 KB on one book in ten. The same `seed` gives the same store.
  ///
  /// Rows go straight into the store layer's bulk loader (one prepared statement per entity,
  /// one transaction, indexes built last), so memory stays flat and millions of objects take
  /// seconds; the store appears under `path` only when complete.
  public static func generate(
    at path: String, objects: Int, seed: UInt64 = 1, overwrite: Bool = false
  )
    throws(VaultError)
  {
    let model = try model()
    try vault {
      if FileManager.default.fileExists(atPath: path) && !overwrite {
        throw VaultError(
          .destinationExists, "the store exists (use --force to replace it) (\(path))")
      }
      try StoreFile.build(at: path) { temporary in
        try fill(temporary, model: model, objects: objects, seed: seed)
      }
    }
  }

  private static func fill(_ path: String, model: ObjectModel, objects: Int, seed: UInt64) throws {
    let schema = try StoreSchema(model: model)
    let loader = try StoreLoader(path: path)
    try loader.createTables(schema.schemaObjects)
    try loader.prepare(model: model, entityRows: schema.entityRows(maxima: [:]))
    guard
      let orderColumn = loader.layout?.tables.lazy.compactMap({ $0.orderKeys["Book.pages"] }).first
    else {
      throw VaultError(.modelUnavailable, "the sample model has no order keys for Book.pages")
    }
    var random = SeededRandom(seed: seed)
    let authorCount = max(1, objects / 50)
    let tagCount = max(1, min(20, objects / 100))
    for i in 0..<authorCount {
      var author = ObjectRecord(entity: "Author", primaryKey: Int64(i + 1))
      author.attributes = [
        "alias": .string("author-\(i)"), "age": .integer(Int64(20 + random.next(60))),
        "siteURL": .uri("https://example.org/authors/\(i)"),
        "color": .transformed(random.bytes(24)),
      ]
      try loader.insert(author)
    }
    let tagNames = ["classic", "sci-fi", "poetry", "history", "travel"]
    for i in 0..<tagCount {
      try loader.insert(
        ObjectRecord(
          entity: "Tag", primaryKey: Int64(i + 1),
          attributes: ["name": .string(tagNames[i % 5] + "-\(i)")]))
    }
    var made = authorCount + tagCount
    var book: Int64 = 0
    var page: Int64 = 0
    while made < objects {
      book += 1
      var record = ObjectRecord(
        entity: book % 3 == 0 ? "GraphicNovel" : "Book", primaryKey: book,
        attributes: [
          "title": .string("Book \(book): \(random.words(3))"), "uniqueID": .uuid(random.bytes(16)),
          "price": .decimal("\(random.next(9_000) + 100).\(random.next(90) + 10)"),
          "publishedAt": .date(Double(random.next(700_000_000))),
          "rating": .double(Double(random.next(50)) / 10),
          "sales": .integer(Int64(random.next(1_000_000))),
          "weight": .double(Double(random.next(2_000)) / 1_000), "edition": .integer(1),
          "inPrint": .bool(true),
        ],
        toOne: [
          "author": ObjectReference(
            entity: "Author", primaryKey: Int64(random.next(authorCount) + 1))
        ])
      if book % 10 == 1 {
        record.attributes["cover"] = .data(random.bytes(2_048 + random.next(4_096)))
      }
      if record.entity == "GraphicNovel" {
        record.attributes["isBlackAndWhite"] = .bool(random.next(2) == 0)
      }
      let tags = Set((0..<random.next(4)).map { _ in Int64(random.next(tagCount) + 1) }).sorted()
      try loader.insert(record, manyToMany: ["tags": tags.map { ($0, nil) }])
      made += 1
      for number in 0..<min(objects - made, 1 + random.next(3)) {
        page += 1
        var leaf = ObjectRecord(
          entity: "Page", primaryKey: page,
          attributes: ["number": .integer(Int64(number + 1)), "text": .string(random.words(12))],
          toOne: ["book": record.reference])
        leaf.extraColumns[orderColumn] = .integer(Int64(number + 1))
        try loader.insert(leaf)
        made += 1
      }
    }
    try loader.writeBookkeeping(
      entityRows: schema.entityRows(maxima: [
        "Writer": Int64(authorCount), "Tag": Int64(tagCount), "Book": book, "Page": page,
      ]),
      uuid: UUID().uuidString,
      metadata: PropertyListValue.dictionary(StoreMetadata.make(for: model)).binaryPropertyList(),
      modelCache: try CompiledModelWriter.modelCache(model))
    try loader.finish(indexesAndTriggers: schema.schemaObjects, journalMode: "wal")
  }
}

/// A small deterministic generator (``SplitMix64``) for sample data.
struct SeededRandom {
  private var generator: SplitMix64
  init(seed: UInt64) { generator = SplitMix64(seed: seed) }

  mutating func nextRaw() -> UInt64 { generator.next() }

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
