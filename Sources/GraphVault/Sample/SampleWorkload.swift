import DurableIO
import Foundation
import ObjectModel
import ObjectStore
import PropertyList

/// Generated stores of three shapes, for benchmarks that must not flatter graphvault:
/// - ``library``: the sample model (``SampleLibrary``), with incompressible cover images;
/// - ``text``: text and numbers, as most apps' data: 10% authors (a name, a date, a UUID), 2%
///   tags, 88% books (a seventh of them novels, a sub-entity) with a three-word title, an
///   8–24-word summary from a small vocabulary, a price, a date, an integer and a 64-byte
///   blob on every fourth; three author↔tag links per author;
/// - ``relationships``: links outnumbering objects: 40% people, 10% teams, 50% posts; each
///   person in five teams, each post in two, and each person's posts an ordered to-many.
///
/// Every store carries its model (`Z_MODELCACHE`); the same seed gives the same rows.
public enum SampleWorkload: String, CaseIterable, Sendable {
  /// The sample library, with cover images.
  case library
  /// Text-heavy data.
  case text
  /// Relationship-heavy data.
  case relationships

  /// Creates a store of this shape with about `objects` objects at `path`.
  public func generate(at path: String, objects: Int, seed: UInt64 = 1) throws(VaultError) {
    if self == .library {
      try SampleLibrary.generate(at: path, objects: objects, seed: seed)
      return
    }
    let model = try model()
    try vault {
      if FileManager.default.fileExists(atPath: path) {
        throw VaultError(.destinationExists, "the store exists (\(path))")
      }
      try StoreFile.build(at: path) { temporary in
        try fill(temporary, model: model, objects: objects, seed: seed)
      }
    }
  }

  /// The workload's model.
  public func model() throws(VaultError) -> ObjectModel {
    do {
      switch self {
      case .library: return try SampleLibrary.model()
      case .text:
        let builder = ModelBuilder(name: "Catalog", versionName: "Catalog 1")
        try builder.addEntity(
          EntityDescription(
            name: "Author",
            attributes: [
              AttributeDescription(name: "name", type: .string, isOptional: false),
              AttributeDescription(name: "born", type: .date),
              AttributeDescription(name: "identifier", type: .uuid),
            ]))
        try builder.addEntity(
          EntityDescription(
            name: "Tag", attributes: [AttributeDescription(name: "label", type: .string)]))
        try builder.addEntity(
          EntityDescription(
            name: "Book",
            attributes: [
              AttributeDescription(name: "title", type: .string, isOptional: false),
              AttributeDescription(name: "summary", type: .string),
              AttributeDescription(name: "price", type: .decimal),
              AttributeDescription(name: "publishedAt", type: .date),
              AttributeDescription(name: "copies", type: .integer32),
              AttributeDescription(name: "checksum", type: .binaryData),
            ]))
        try builder.addEntity(
          EntityDescription(
            name: "Novel", parent: "Book",
            attributes: [AttributeDescription(name: "chapters", type: .integer16)]))
        try builder.relate(
          "Book", RelationshipDescription(name: "author", destination: "Author", maxCount: 1),
          inverse: RelationshipDescription(name: "books", destination: "Book", maxCount: 0))
        try builder.relate(
          "Author", RelationshipDescription(name: "tags", destination: "Tag", maxCount: 0),
          inverse: RelationshipDescription(name: "authors", destination: "Author", maxCount: 0))
        return try builder.build()
      case .relationships:
        let builder = ModelBuilder(name: "Network", versionName: "Network 1")
        try builder.addEntity(
          EntityDescription(
            name: "Person", attributes: [AttributeDescription(name: "handle", type: .string)]))
        try builder.addEntity(
          EntityDescription(
            name: "Team", attributes: [AttributeDescription(name: "name", type: .string)]))
        try builder.addEntity(
          EntityDescription(
            name: "Post", attributes: [AttributeDescription(name: "score", type: .integer32)]))
        try builder.relate(
          "Person", RelationshipDescription(name: "teams", destination: "Team", maxCount: 0),
          inverse: RelationshipDescription(name: "members", destination: "Person", maxCount: 0))
        try builder.relate(
          "Post", RelationshipDescription(name: "teams", destination: "Team", maxCount: 0),
          inverse: RelationshipDescription(name: "posts", destination: "Post", maxCount: 0))
        try builder.relate(
          "Person",
          RelationshipDescription(
            name: "posts", destination: "Post", maxCount: 0, isOrdered: true,
            deleteRule: .cascade),
          inverse: RelationshipDescription(name: "author", destination: "Person", maxCount: 1))
        return try builder.build()
      }
    } catch let error as VaultError {
      throw error
    } catch {
      throw VaultError(wrapping: error)
    }
  }

  private static let vocabulary = [
    "river", "stone", "light", "winter", "garden", "signal", "paper", "harbor", "orbit", "maple",
    "echo", "lantern", "quiet", "north", "silver", "morning", "glass", "forest", "letter", "salt",
    "thread", "window", "summer", "shadow", "copper", "meadow", "island", "ember", "cloud",
    "bridge",
    "violet", "engine", "canvas", "market", "harvest", "pilot", "valley", "mirror", "ocean", "tide",
  ]

  private func words(_ count: Int, _ random: inout SeededRandom) -> String {
    (0..<count).map { _ in Self.vocabulary[random.next(Self.vocabulary.count)] }
      .joined(separator: " ")
  }

  private func fill(_ path: String, model: ObjectModel, objects: Int, seed: UInt64) throws {
    let schema = try StoreSchema(model: model)
    let loader = try StoreLoader(path: path)
    try loader.createTables(schema.schemaObjects)
    try loader.prepare(model: model, entityRows: schema.entityRows(maxima: [:]))
    var random = SeededRandom(seed: seed)
    var maxima: [String: Int64] = [:]
    switch self {
    case .library: return
    case .text:
      let authors = max(1, objects / 10)
      let tags = max(1, objects / 50)
      let books = max(0, objects - authors - tags)
      for i in 1...tags {
        try loader.insert(
          ObjectRecord(
            entity: "Tag", primaryKey: Int64(i), attributes: ["label": .string(words(2, &random))]))
      }
      for i in 1...authors {
        let links = Set((0..<3).map { _ in Int64(random.next(tags) + 1) }).sorted()
        try loader.insert(
          ObjectRecord(
            entity: "Author", primaryKey: Int64(i),
            attributes: [
              "name": .string("\(words(1, &random).capitalized) \(words(1, &random).capitalized)"),
              "born": .date(Double(random.next(2_000_000_000)) - 1_800_000_000),
              "identifier": .uuid(random.bytes(16)),
            ]), manyToMany: ["tags": links.map { ($0, nil) }])
      }
      for i in 0..<books {
        let key = Int64(i + 1)
        var record = ObjectRecord(
          entity: i % 7 == 6 ? "Novel" : "Book", primaryKey: key,
          attributes: [
            "title": .string(words(3, &random)),
            "summary": .string(words(8 + random.next(17), &random)),
            "price": .decimal("\(random.next(90) + 5).\(random.next(90) + 10)"),
            "publishedAt": .date(Double(random.next(750_000_000))),
            "copies": .integer(Int64(random.next(100_000))),
          ],
          toOne: [
            "author": ObjectReference(entity: "Author", primaryKey: Int64(random.next(authors) + 1))
          ])
        if i % 4 == 0 { record.attributes["checksum"] = .data(random.bytes(64)) }
        if record.entity == "Novel" {
          record.attributes["chapters"] = .integer(Int64(random.next(60) + 1))
        }
        try loader.insert(record)
      }
      maxima = ["Author": Int64(authors), "Tag": Int64(tags), "Book": Int64(books)]
    case .relationships:
      let teams = max(1, objects / 10)
      let people = max(1, objects * 4 / 10)
      let posts = max(0, objects - teams - people)
      guard
        let orderColumn = loader.layout?.tables.lazy.compactMap({ $0.orderKeys["Person.posts"] })
          .first
      else {
        throw VaultError(.modelUnavailable, "the network model has no order keys for Person.posts")
      }
      for i in 1...teams {
        try loader.insert(
          ObjectRecord(
            entity: "Team", primaryKey: Int64(i), attributes: ["name": .string("team-\(i)")]))
      }
      for i in 1...people {
        let links = Set((0..<5).map { _ in Int64(random.next(teams) + 1) }).sorted()
        try loader.insert(
          ObjectRecord(
            entity: "Person", primaryKey: Int64(i), attributes: ["handle": .string("p\(i)")]),
          manyToMany: ["teams": links.map { ($0, nil) }])
      }
      var written = [Int](repeating: 0, count: people + 1)
      for i in 1...max(1, posts) where posts > 0 {
        let author = random.next(people) + 1
        written[author] += 1
        var post = ObjectRecord(
          entity: "Post", primaryKey: Int64(i),
          attributes: ["score": .integer(Int64(random.next(1_000)))],
          toOne: ["author": ObjectReference(entity: "Person", primaryKey: Int64(author))])
        post.extraColumns[orderColumn] = .integer(Int64(written[author]))
        let links = Set((0..<2).map { _ in Int64(random.next(teams) + 1) }).sorted()
        try loader.insert(post, manyToMany: ["teams": links.map { ($0, nil) }])
      }
      maxima = ["Team": Int64(teams), "Person": Int64(people), "Post": Int64(posts)]
    }
    try loader.writeBookkeeping(
      entityRows: schema.entityRows(maxima: maxima),
      uuid: String(format: "%08X-0000-4000-8000-%012llX", UInt32(truncatingIfNeeded: seed), seed),
      metadata: PropertyListValue.dictionary(StoreMetadata.make(for: model)).binaryPropertyList(),
      modelCache: try CompiledModelWriter.modelCache(model))
    try loader.finish(indexesAndTriggers: schema.schemaObjects, journalMode: "wal")
  }
}
