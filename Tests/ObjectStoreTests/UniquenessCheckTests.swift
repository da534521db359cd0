import Foundation
import ObjectModel
import SQLite
import Testing

@testable import ObjectStore

/// What `verify` judges of the unique indexes a restore builds, without a store: each table's
/// values kept in a private database, its indexes built once another table's objects begin.
@Suite("Uniqueness checked without a store")
struct UniquenessCheckTests {
  /// Items unique by code, and by the pair (box, slot); boxes unique by label; notes not
  /// unique.
  static func model() throws -> ObjectModel {
    try ObjectModel(
      name: "Shop", versionIdentifiers: ["1"],
      entities: [
        EntityDescription(
          name: "Item", uniquenessConstraints: [["code"], ["box", "slot"]],
          attributes: [
            AttributeDescription(name: "code", type: .string),
            AttributeDescription(name: "price", type: .decimal),
            AttributeDescription(name: "slot", type: .integer32),
          ],
          relationships: [
            RelationshipDescription(name: "box", destination: "Box", inverse: "items", maxCount: 1)
          ]),
        EntityDescription(
          name: "Box", uniquenessConstraints: [["label"]],
          attributes: [AttributeDescription(name: "label", type: .string)],
          relationships: [
            RelationshipDescription(
              name: "items", destination: "Item", inverse: "box", maxCount: 0)
          ]),
        EntityDescription(
          name: "Note", attributes: [AttributeDescription(name: "text", type: .string)]),
      ])
  }

  static func check() throws -> UniquenessCheck {
    let model = try model()
    let schema = try StoreSchema(model: model)
    let statements = try schema.statements.map { try SchemaStatement(parsing: $0) }
    let layout = try StoreLayout(
      model: model, schema: SchemaSnapshot(statements: statements),
      entityRows: schema.entityRows(maxima: [:]))
    return try UniquenessCheck(
      schema: try CheckedSchema(objects: schema.schemaObjects, model: model), layout: layout)
  }

  /// Items with keys from `first`, codes `codes` (nil: none), each in box `box` in slot
  /// `slot` from its key (the key itself by default).
  static func items(
    _ codes: [String?], first: Int64 = 1, box: Int64 = 1, slot: (Int64) -> Int64 = { $0 }
  ) -> ObjectBatch {
    var batch = ObjectBatch(
      entity: "Item", primaryKeys: codes.indices.map { first + Int64($0) },
      versions: codes.map { _ in 1 })
    let coded = codes.indices.filter { codes[$0] != nil }
    batch.attributes = [
      ObjectBatch.Attribute(
        name: "code", type: .string, records: coded,
        values: .texts(StoreLoaderTests.texts(coded.map { codes[$0]! }))),
      ObjectBatch.Attribute(
        name: "slot", type: .integer32, records: Array(codes.indices),
        values: .integers(codes.indices.map { slot(first + Int64($0)) })),
    ]
    batch.toOne = [
      ObjectBatch.ToOne(
        name: "box", records: Array(codes.indices), keys: codes.map { _ in box },
        entities: codes.map { _ in "Box" })
    ]
    return batch
  }

  static func boxes(_ labels: [String]) -> ObjectBatch {
    var batch = ObjectBatch(
      entity: "Box", primaryKeys: labels.indices.map { Int64($0 + 1) },
      versions: labels.map { _ in 1 })
    batch.attributes = [
      ObjectBatch.Attribute(
        name: "label", type: .string, records: Array(labels.indices),
        values: .texts(StoreLoaderTests.texts(labels)))
    ]
    return batch
  }

  @Test func distinctValuesAndMissingOnesPass() throws {
    let check = try Self.check()
    // NULLs are never equal: two items without a code pass.
    try check.add(Self.items(["a", nil, "b", nil, "c"]))
    try check.add(Self.boxes(["one", "two"]))
    try check.add(Self.items(["d", "e"], first: 100, box: 2))
    try check.finish()
  }

  /// Another table's objects begin, whether or not that table has unique indexes: the items'
  /// indexes are built then, and the duplicate is refused, naming the index.
  @Test(arguments: ["Box", "Note"])
  func aTablesIndexesAreBuiltOnceAnotherTablesObjectsBegin(next: String) throws {
    let check = try Self.check()
    try check.add(Self.items(["a", "b", "a"]))
    #expect(!check.isBuilding("ZITEM"))
    var others = ObjectBatch(entity: next, primaryKeys: [1], versions: [1])
    others.attributes = [
      ObjectBatch.Attribute(
        name: next == "Box" ? "label" : "text", type: .string, records: [0],
        values: .texts(StoreLoaderTests.texts(["one"])))
    ]
    try check.add(others)
    #expect(check.isBuilding("ZITEM"))
    #expect(!check.isBuilding("ZBOX"))
    let error = try #require(throws: StoreError.self) { try check.finish() }
    #expect(error.description.contains("unique index Z_Item_UNIQUE_code"), "\(error)")
    #expect((error.underlying as? SQLiteError)?.isConstraint == true)
  }

  /// A duplicate the background build found is refused at the table's next objects too.
  @Test func aDuplicateFoundInTheBackgroundIsRefusedWhenTheTablesObjectsComeBack() throws {
    let check = try Self.check()
    try check.add(Self.items(["a", "a"]))
    try check.add(Self.boxes(["one"]))
    let error = try #require(throws: StoreError.self) {
      try check.add(Self.items(["c"], first: 10))
    }
    #expect(error.description.contains("unique index Z_Item_UNIQUE_code"), "\(error)")
  }

  @Test func aDuplicateOfTheLastTableIsRefusedAtTheEnd() throws {
    let check = try Self.check()
    try check.add(Self.items(["a", "b"]))
    try check.add(Self.boxes(["one", "two", "one"]))
    let error = try #require(throws: StoreError.self) { try check.finish() }
    #expect(error.description.contains("unique index Z_Box_UNIQUE_label"), "\(error)")
  }

  /// An item that comes after the boxes began, with a code an earlier item has: its table's
  /// index is built, and refuses it as it is added.
  @Test func anObjectComingBackToATableAlreadyIndexedIsCheckedAsItIsAdded() throws {
    let check = try Self.check()
    try check.add(Self.items(["a", "b"]))
    try check.add(Self.boxes(["one"]))
    try check.add(Self.items(["c"], first: 10))
    let error = try #require(throws: StoreError.self) {
      try check.add(Self.items(["d", "b"], first: 20))
    }
    #expect(error.description.contains("Item/p21"), "\(error)")
    #expect(error.description.contains("unique index of ZITEM"), "\(error)")
  }

  /// The pair (box, slot) is judged from the to-one's key and the slot, as the loader binds
  /// them: items in different boxes may share a slot, not in one box.
  @Test func aConstraintOverAToOneAndAnAttributeIsJudgedByBoth() throws {
    let check = try Self.check()
    try check.add(Self.items(["a", "b"], first: 1, box: 1))
    try check.add(Self.items(["c", "d"], first: 50, box: 2) { $0 - 49 })
    try check.finish()

    let twice = try Self.check()
    try twice.add(Self.items(["a", "b"], first: 1, box: 1))
    try twice.add(Self.items(["c"], first: 60, box: 1) { _ in 2 })
    let error = try #require(throws: StoreError.self) { try twice.finish() }
    #expect(error.description.contains("unique index Z_Item_UNIQUE_box_slot"), "\(error)")
  }
}
