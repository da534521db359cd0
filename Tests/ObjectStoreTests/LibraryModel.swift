import ObjectModel

/// A model built in code: inheritance (Writer ← Author, Book ← GraphicNovel), one-to-many
/// (ordered), many-to-many, a derived count, and every attribute type.
enum LibraryModel {
  static func make() throws -> ObjectModel {
    try ObjectModel(
      name: "Library", versionIdentifiers: ["1"],
      entities: [
        EntityDescription(
          name: "Writer", isAbstract: true, uniquenessConstraints: [["alias"]],
          attributes: [AttributeDescription(name: "alias", type: .string, isOptional: false)],
          relationships: [
            RelationshipDescription(
              name: "books", destination: "Book", inverse: "author", maxCount: 0, deleteRule: .deny)
          ]),
        EntityDescription(
          name: "Author", parent: "Writer",
          attributes: [
            AttributeDescription(name: "age", type: .integer16, defaultValue: .integer(30))
          ]),
        EntityDescription(
          name: "Book",
          fetchIndexes: [FetchIndex(name: "byTitle", elements: [.init(property: "title")])],
          attributes: [
            AttributeDescription(name: "title", type: .string, isOptional: false),
            AttributeDescription(name: "uniqueID", type: .uuid),
            AttributeDescription(name: "price", type: .decimal),
            AttributeDescription(name: "rating", type: .double),
            AttributeDescription(name: "weight", type: .float),
            AttributeDescription(name: "edition", type: .integer32),
            AttributeDescription(name: "sales", type: .integer64),
            AttributeDescription(name: "inPrint", type: .boolean, defaultValue: .bool(true)),
            AttributeDescription(name: "publishedAt", type: .date),
            AttributeDescription(name: "cover", type: .binaryData),
            AttributeDescription(name: "site", type: .uri),
            AttributeDescription(
              name: "color", type: .transformable, valueTransformerName: "NSSecureUnarchiveFromData"
            ),
            AttributeDescription(name: "scratch", type: .string, isTransient: true),
            AttributeDescription(
              name: "pagesCount", type: .integer64, isDerived: true,
              derivationExpression: "pages.@count"),
          ],
          relationships: [
            RelationshipDescription(
              name: "author", destination: "Writer", inverse: "books", maxCount: 1),
            RelationshipDescription(
              name: "pages", destination: "Page", inverse: "book", maxCount: 0, isOrdered: true,
              deleteRule: .cascade),
            RelationshipDescription(
              name: "tags", destination: "Tag", inverse: "books", maxCount: 0),
          ]),
        EntityDescription(
          name: "GraphicNovel", parent: "Book",
          attributes: [AttributeDescription(name: "isBlackAndWhite", type: .boolean)]),
        EntityDescription(
          name: "Page",
          attributes: [AttributeDescription(name: "number", type: .integer32)],
          relationships: [
            RelationshipDescription(
              name: "book", destination: "Book", inverse: "pages", maxCount: 1)
          ]),
        EntityDescription(
          name: "Tag",
          attributes: [AttributeDescription(name: "name", type: .string)],
          relationships: [
            RelationshipDescription(
              name: "books", destination: "Book", inverse: "tags", maxCount: 0)
          ]),
      ])
  }
}
