import Migration
import ObjectModel
import ObjectStore
import Testing

/// A migration by columns (``MigrationRun/migrate(_:into:)``) against the same objects migrated
/// one by one: the same objects, links, values kept as stored, counts and refusals. Models,
/// batches and layouts only: no store, no SQLite.
@Suite("Migrating objects by columns")
struct ColumnMigrationTests {
  static let shelf = RelationshipDescription(
    name: "shelf", destination: "Shelf", inverse: "items", maxCount: 1)
  static let items = RelationshipDescription(
    name: "items", destination: "Item", inverse: "shelf", isOrdered: true)
  static let favourites = RelationshipDescription(
    name: "favourites", destination: "Item", isOrdered: true)

  /// Version 1: shelves keep ordered items and ordered favourites (no inverse); items have
  /// tags (many-to-many).
  static func first(item: [AttributeDescription]? = nil) throws -> ObjectModel {
    try ObjectModel(
      name: "Shop", versionName: "1",
      entities: [
        EntityDescription(
          name: "Item",
          attributes: item ?? [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "count", type: .integer32),
            AttributeDescription(name: "weight", type: .double),
          ],
          relationships: [
            shelf, RelationshipDescription(name: "tags", destination: "Tag", inverse: "items"),
          ]),
        EntityDescription(
          name: "Shelf", attributes: [AttributeDescription(name: "label", type: .string)],
          relationships: [items, favourites]),
        EntityDescription(
          name: "Tag", attributes: [AttributeDescription(name: "title", type: .string)],
          relationships: [
            RelationshipDescription(name: "items", destination: "Item", inverse: "tags")
          ]
        ),
      ])
  }

  /// Version 2: `weight` dropped, `stock` (required, 5) and `note` (optional, "none") added,
  /// `Shelf.label` renamed `caption`, `Tag` renamed `Label`.
  static func second(item: [AttributeDescription]? = nil) throws -> ObjectModel {
    try ObjectModel(
      name: "Shop", versionName: "2",
      entities: [
        EntityDescription(
          name: "Item",
          attributes: item ?? [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "count", type: .integer32),
            AttributeDescription(
              name: "stock", type: .integer32, isOptional: false, defaultValue: .integer(5)),
            AttributeDescription(name: "note", type: .string, defaultValue: .string("none")),
          ],
          relationships: [
            shelf, RelationshipDescription(name: "tags", destination: "Label", inverse: "items"),
          ]),
        EntityDescription(
          name: "Shelf",
          attributes: [
            AttributeDescription(name: "caption", type: .string, renamingIdentifier: "label")
          ],
          relationships: [items, favourites]),
        EntityDescription(
          name: "Label", renamingIdentifier: "Tag",
          attributes: [AttributeDescription(name: "title", type: .string)],
          relationships: [
            RelationshipDescription(name: "items", destination: "Item", inverse: "tags")
          ]
        ),
      ])
  }

  /// The snapshot and `Z_PRIMARYKEY` rows of a store of `model`, made without SQLite.
  static func schema(_ model: ObjectModel) throws -> (SchemaSnapshot, [CoreDataStore.EntityRow]) {
    let schema = try StoreSchema(model: model)
    let statements = try schema.statements.map { try SchemaStatement(parsing: $0) }
    return (SchemaSnapshot(statements: statements), schema.entityRows(maxima: [:]))
  }

  /// A run of objects of `from` to `to`.
  static func run(_ from: ObjectModel, _ to: ObjectModel) throws -> MigrationRun {
    let (snapshot, rows) = try schema(from)
    let set = ModelVersionSet(name: "Shop", versions: [from, to], currentVersionName: "2")
    let plan = try MigrationPlan.make(
      source: from, schema: snapshot, set: set, targetVersion: versionName(to))
    return try MigrationRun(plan: plan, archiveModel: from, schema: snapshot, entityRows: rows)
  }

  static func versionName(_ model: ObjectModel) -> String { model.versionName ?? model.name }

  /// The layout of a new store of `model`.
  static func layout(_ model: ObjectModel) throws -> StoreLayout {
    let (snapshot, rows) = try schema(model)
    return try StoreLayout(model: model, schema: snapshot, entityRows: rows)
  }

  /// Four items: values missing here and there, a count kept as text, shelves with and without
  /// places, tags, favourites, and a column the model does not describe.
  static func items(_ layout: StoreLayout) throws -> ObjectBatch {
    var batch = ObjectBatch(entity: "Item", primaryKeys: [1, 2, 3, 4], versions: [1, 1, 2, 1])
    batch.attributes = [
      ObjectBatch.Attribute(
        name: "name", type: .string, records: [0, 1, 3],
        values: .texts(
          ObjectBatch.Bytes(copying: Array("penink".utf8), ranges: [0..<3, 3..<6, 6..<6]))),
      ObjectBatch.Attribute(
        name: "count", type: .integer32, records: [0, 2], values: .integers([3, 9])),
      ObjectBatch.Attribute(name: "weight", type: .double, records: [1], values: .reals([0.5])),
    ]
    batch.toOne = [
      ObjectBatch.ToOne(
        name: "shelf", records: [0, 1, 3], keys: [1, 1, 2], entities: ["Shelf", "Shelf", "Shelf"])
    ]
    batch.toMany = [
      ObjectBatch.ToMany(name: "tags", records: [0, 2], rows: [[(1, nil), (2, nil)], [(2, nil)]])
    ]
    let places = try #require(layout.orderColumn(ofToOne: shelf, in: "Item"))
    let owner = try #require(layout.ownerColumns(ofToMany: "favourites", in: "Shelf"))
    let count = try #require(layout.column(ofAttribute: "count", in: "Item"))
    batch.storedColumns = [
      // Item 2 has no place on its shelf (given its key), item 3 a place but no shelf.
      ObjectBatch.StoredColumn(name: places, records: [0, 2, 3], values: .integers([20, 30, 40])),
      ObjectBatch.StoredColumn(name: owner.column, records: [1, 3], values: .integers([1, 2])),
      ObjectBatch.StoredColumn(
        name: try #require(owner.orderColumn), records: [3], values: .integers([7])),
      ObjectBatch.StoredColumn(
        name: count, records: [3],
        values: .texts(ObjectBatch.Bytes(copying: Array("7".utf8), ranges: [0..<1]))),
      ObjectBatch.StoredColumn(name: "ZLEGACY", records: [1, 2], values: .integers([1, 1])),
    ]
    return batch
  }

  /// An object as the new store keeps it, told apart from how it travelled: links with the
  /// place the new store gives them, owners, values kept as stored.
  struct Written: Equatable, CustomStringConvertible {
    var reference: ObjectReference
    var version: Int64
    var attributes: [String: AttributeValue]
    var storedAsIs: [String: AttributeValue]
    var links: [String: [String]]
    var owners: [String]

    var description: String {
      "\(reference) v\(version) \(attributes) stored \(storedAsIs) links \(links) owners \(owners)"
    }
  }

  /// `object` (target version) as written into a store of `layout`: a to-one's place is its
  /// key when it has none and the layout keeps one.
  static func written(_ object: MigratingObject, layout: StoreLayout) -> Written {
    var links: [String: [String]] = [:]
    for (name, targets) in object.relationships {
      let relationship = layout.model.relationships(of: object.entity).first { $0.name == name }
      let keepsPlace =
        relationship.map {
          !$0.isToMany && layout.orderColumn(ofToOne: $0, in: object.entity) != nil
        }
        ?? false
      links[name] = targets.map {
        let order = $0.order ?? (keepsPlace ? object.primaryKey : nil)
        return "\($0.target)@\(order.map(String.init) ?? "-")"
      }.sorted()
    }
    return Written(
      reference: object.reference, version: object.version, attributes: object.attributes,
      storedAsIs: object.storedAsIs, links: links,
      owners: object.owners.map {
        "\($0.owner).\($0.relationship)@\($0.order.map(String.init) ?? "-")"
      }.sorted())
  }

  /// The batch migrated by columns, read back as a store of the target would read its rows.
  static func byColumns(_ batch: ObjectBatch, from: ObjectModel, to: ObjectModel) throws -> (
    [Written], MigrationReport
  ) {
    let run = try run(from, to)
    let target = try layout(to)
    guard case .migrated(let migrated) = try run.migrate(batch, into: target) else {
      Issue.record("the batch was not migrated by columns")
      return ([], run.report(notes: []))
    }
    let reader = try Self.run(to, to)
    let written = migrated.records.map { record, manyToMany in
      var object = reader.migrating(record, manyToMany: manyToMany)
      // The owner's entity is the declaring one, as a row tells it.
      object.owners.sort { $0.relationship < $1.relationship }
      return Self.written(object, layout: target)
    }
    return (written, run.report(notes: []))
  }

  /// The batch migrated object by object.
  static func oneByOne(_ batch: ObjectBatch, from: ObjectModel, to: ObjectModel) throws -> (
    [Written], MigrationReport
  ) {
    let run = try run(from, to)
    let target = try layout(to)
    var written: [Written] = []
    for (record, manyToMany) in batch.records {
      let (objects, links) = try run.migrate(run.migrating(record, manyToMany: manyToMany))
      var made = objects
      // An owner's link travels loose; the member's row keeps it.
      for link in links {
        guard let index = made.firstIndex(where: { $0.reference == link.link.target }) else {
          continue
        }
        made[index].owners.append(
          MigratingObject.OwnerLink(
            owner: link.from, relationship: link.relationship, order: link.link.order))
      }
      written += made.map { object in
        var object = object
        object.owners = object.owners.map {
          let ordered =
            target.ownerColumns(ofToMany: $0.relationship, in: $0.owner.entity)?
            .orderColumn != nil
          return MigratingObject.OwnerLink(
            owner: $0.owner, relationship: $0.relationship,
            order: $0.order ?? (ordered ? object.primaryKey : nil))
        }
        return Self.written(object, layout: target)
      }
    }
    return (written, run.report(notes: []))
  }

  @Test func attributesAddedDroppedAndRenamedGiveTheObjectsAndCountsOfMigratingEachObject()
    throws
  {
    let from = try Self.first()
    let to = try Self.second()
    let batch = try Self.items(Self.layout(from))
    let (columns, columnReport) = try Self.byColumns(batch, from: from, to: to)
    let (objects, objectReport) = try Self.oneByOne(batch, from: from, to: to)
    #expect(columns == objects)
    #expect(columnReport == objectReport)
    #expect(columns.map { $0.attributes["stock"] } == Array(repeating: .integer(5), count: 4))
    #expect(columns[2].links["shelf"] == nil)
    #expect(columns[1].links["shelf"] == ["Shelf/p1@2"])
    #expect(columnReport.notes.contains { $0.contains("ZLEGACY: 2 values") })
  }

  @Test func aRenamedEntitysLinksAndItsOwnObjectsGoByColumns() throws {
    var tags = ObjectBatch(entity: "Tag", primaryKeys: [1, 2], versions: [1, 1])
    tags.attributes = [
      ObjectBatch.Attribute(
        name: "title", type: .string, records: [1],
        values: .texts(ObjectBatch.Bytes(copying: Array("red".utf8), ranges: [0..<3])))
    ]
    let from = try Self.first()
    let to = try Self.second()
    let (columns, columnReport) = try Self.byColumns(tags, from: from, to: to)
    let (objects, objectReport) = try Self.oneByOne(tags, from: from, to: to)
    #expect(columns == objects)
    #expect(columns.map(\.reference.entity) == ["Label", "Label"])
    #expect(columnReport == objectReport)
  }

  @Test func aRequiredAttributeWithoutADefaultRefusesTheSameObjectEitherWay() throws {
    let name = AttributeDescription(name: "name", type: .string)
    let required = AttributeDescription(name: "name", type: .string, isOptional: false)
    let from = try Self.first(item: [name])
    let to = try Self.second(item: [required])
    var batch = ObjectBatch(entity: "Item", primaryKeys: [4, 5, 6], versions: [1, 1, 1])
    batch.attributes = [
      ObjectBatch.Attribute(
        name: "name", type: .string, records: [0, 2],
        values: .texts(ObjectBatch.Bytes(copying: Array("ab".utf8), ranges: [0..<1, 1..<2])))
    ]
    let columns = #expect(throws: MigrationError.self) {
      try Self.run(from, to).migrate(batch, into: Self.layout(to))
    }
    let objects = #expect(throws: MigrationError.self) {
      try Self.oneByOne(batch, from: from, to: to)
    }
    #expect(columns?.description.contains("Item/p5 has no value for Item.name") == true)
    #expect(columns?.description == objects?.description)
  }

  @Test func aTypeChangeGoesObjectByObjectAndCountsNothing() throws {
    let from = try Self.first(item: [AttributeDescription(name: "count", type: .integer32)])
    let to = try Self.second(item: [AttributeDescription(name: "count", type: .integer64)])
    var batch = ObjectBatch(entity: "Item", primaryKeys: [1], versions: [1])
    batch.attributes = [
      ObjectBatch.Attribute(name: "count", type: .integer32, records: [0], values: .integers([2]))
    ]
    let run = try Self.run(from, to)
    guard case .objectByObject = try run.migrate(batch, into: Self.layout(to)) else {
      Issue.record("a widened attribute went by columns")
      return
    }
    #expect(run.report(notes: []).hops.allSatisfy { $0.objects.isEmpty })
  }

  @Test func objectsOfARemovedEntityAreDroppedAndCountedAsOneByOne() throws {
    let from = try Self.first()
    var entities = try Self.second().entities.filter { $0.name != "Label" }
    entities[0].relationships.removeAll { $0.name == "tags" }
    let to = try ObjectModel(name: "Shop", versionName: "2", entities: entities)
    var tags = ObjectBatch(entity: "Tag", primaryKeys: [1, 2], versions: [1, 1])
    tags.toMany = [ObjectBatch.ToMany(name: "items", records: [0], rows: [[(1, nil)]])]
    let run = try Self.run(from, to)
    guard case .dropped = try run.migrate(tags, into: Self.layout(to)) else {
      Issue.record("objects of a removed entity were kept")
      return
    }
    #expect(run.report(notes: []) == (try Self.oneByOne(tags, from: from, to: to)).1)
    let items = try Self.items(Self.layout(from))
    let (columns, columnReport) = try Self.byColumns(items, from: from, to: to)
    let (objects, objectReport) = try Self.oneByOne(items, from: from, to: to)
    #expect(columns == objects)
    #expect(columnReport == objectReport)
    #expect(columnReport.hops[0].objects["Item"]?.droppedLinks == ["tags": 3])
  }
}
