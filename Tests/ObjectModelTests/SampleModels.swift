import ObjectModel

/// Models built in code for the tests.
enum SampleModels {
  /// A library: inheritance (Writer ← Author, Book ← GraphicNovel), to-one, to-many,
  /// many-to-many, ordered, every attribute type.
  static func libraryEntities() -> [EntityDescription] {
    [
      EntityDescription(
        name: "Writer", isAbstract: true,
        attributes: [AttributeDescription(name: "alias", type: .string, isOptional: false)],
        relationships: [
          RelationshipDescription(
            name: "books", destination: "Book", inverse: "author", maxCount: 0, deleteRule: .cascade
          )
        ]),
      EntityDescription(
        name: "Author", parent: "Writer",
        attributes: [AttributeDescription(name: "age", type: .integer16, defaultValue: .integer(0))]
      ),
      EntityDescription(
        name: "Book", uniquenessConstraints: [["uniqueID"]],
        fetchIndexes: [FetchIndex(name: "byTitle", elements: [.init(property: "title")])],
        attributes: [
          AttributeDescription(
            name: "title", type: .string, isOptional: false, renamingIdentifier: "name"),
          AttributeDescription(name: "uniqueID", type: .uuid),
          AttributeDescription(name: "price", type: .decimal, defaultValue: .decimal("9.99")),
          AttributeDescription(name: "rating", type: .double),
          AttributeDescription(name: "weight", type: .float),
          AttributeDescription(
            name: "pagesCount", type: .integer64, isDerived: true,
            derivationExpression: "pages.@count"),
          AttributeDescription(name: "edition", type: .integer32),
          AttributeDescription(name: "inPrint", type: .boolean, defaultValue: .bool(true)),
          AttributeDescription(name: "publishedAt", type: .date, defaultValue: .date(0)),
          AttributeDescription(
            name: "cover", type: .binaryData, allowsExternalBinaryDataStorage: true),
          AttributeDescription(name: "site", type: .uri),
          AttributeDescription(
            name: "color", type: .transformable, valueTransformerName: "NSSecureUnarchiveFromData",
            valueClassName: "UIColor"),
          AttributeDescription(name: "scratch", type: .undefined, isTransient: true),
        ],
        relationships: [
          RelationshipDescription(
            name: "author", destination: "Writer", inverse: "books", maxCount: 1),
          RelationshipDescription(
            name: "pages", destination: "Page", inverse: "book", minCount: 1, maxCount: 10_000,
            isOrdered: true, deleteRule: .cascade),
          RelationshipDescription(name: "tags", destination: "Tag", inverse: "books", maxCount: 0),
        ]),
      EntityDescription(
        name: "GraphicNovel", parent: "Book",
        attributes: [AttributeDescription(name: "isBlackAndWhite", type: .boolean)]),
      EntityDescription(
        name: "Page",
        attributes: [AttributeDescription(name: "number", type: .integer32)],
        relationships: [
          RelationshipDescription(name: "book", destination: "Book", inverse: "pages", maxCount: 1)
        ]),
      EntityDescription(
        name: "Tag", userInfo: ["note": "many-to-many"],
        attributes: [AttributeDescription(name: "name", type: .string)],
        relationships: [
          RelationshipDescription(
            name: "books", destination: "Book", inverse: "tags", maxCount: 0, deleteRule: .deny)
        ]),
    ]
  }

  static func library() throws -> ObjectModel {
    try ObjectModel(
      name: "Library", versionName: "Library 1", versionIdentifiers: ["1"],
      entities: libraryEntities())
  }
}
