import Migration
import ObjectModel
import Testing

/// Which hops can be done in SQL on the store itself (``MigrationHop/inPlaceAttributes``), read
/// from the hop's rules alone: no store, no SQLite.
@Suite("Hops done in place")
struct InPlaceHopTests {
  /// A one-entity model with `attributes` and a to-one `shelf`.
  static func model(_ attributes: [AttributeDescription], version: String) throws -> ObjectModel {
    try ObjectModel(
      name: "Shop", versionName: version,
      entities: [
        EntityDescription(
          name: "Item", attributes: attributes,
          relationships: [
            RelationshipDescription(name: "shelf", destination: "Shelf", maxCount: 1)
          ]),
        EntityDescription(
          name: "Shelf", attributes: [AttributeDescription(name: "label", type: .string)]),
      ])
  }

  static let name = AttributeDescription(name: "name", type: .string)
  static let count = AttributeDescription(name: "count", type: .integer32)

  static func describe(_ rule: MigrationHop.InPlaceAttribute) -> String {
    "\(rule.entity).\(rule.attribute)\(rule.fill.map { " = \($0)" } ?? "")"
      + (rule.isRequired ? ", required" : "")
      + (rule.renamedFrom.map { ", was \($0)" } ?? "")
  }

  func hop(_ from: [AttributeDescription], _ to: [AttributeDescription]) throws -> MigrationHop {
    try MigrationHop(
      from: Self.model(from, version: "1"), to: Self.model(to, version: "2"), mapping: nil)
  }

  @Test func attributesAddedAndDroppedAreDoneInPlaceWithTheirDefaults() throws {
    let added = AttributeDescription(
      name: "stock", type: .integer32, isOptional: false, defaultValue: .integer(5))
    let note = AttributeDescription(name: "note", type: .string)
    let rules = try hop([Self.name, Self.count], [Self.name, added, note]).inPlaceAttributes
    #expect(rules?.map(Self.describe) == ["Item.stock = integer(5), required"])
  }

  @Test func anAttributeMadeRequiredIsCheckedInPlace() throws {
    let required = AttributeDescription(name: "name", type: .string, isOptional: false)
    let rules = try hop([Self.name], [required]).inPlaceAttributes
    #expect(rules?.map(Self.describe) == ["Item.name, required"])
  }

  @Test func anAttributeRenamedIsDoneInPlaceUnderItsNewName() throws {
    let renamed = AttributeDescription(name: "title", type: .string, renamingIdentifier: "name")
    #expect(
      try hop([Self.name], [renamed]).inPlaceAttributes?.map(Self.describe) == [
        "Item.title, was name"
      ])
    let required = AttributeDescription(
      name: "title", type: .string, isOptional: false, renamingIdentifier: "name")
    #expect(
      try hop([Self.name, Self.count], [required]).inPlaceAttributes?.map(Self.describe) == [
        "Item.title, required, was name"
      ])
  }

  @Test func typeChangesAreNotDoneInPlace() throws {
    let renamedAndWidened = AttributeDescription(
      name: "total", type: .integer64, renamingIdentifier: "count")
    #expect(try hop([Self.count], [renamedAndWidened]).inPlaceAttributes == nil)
    let widened = AttributeDescription(name: "count", type: .integer64)
    #expect(try hop([Self.count], [widened]).inPlaceAttributes == nil)
  }

  /// A relationship renamed by its renaming identifier is kept under its new name, which the
  /// store's side renames its columns to; one removed is not kept.
  @Test func aRelationshipRenamedIsKeptUnderItsNewNameInPlace() throws {
    let source = try Self.model([Self.name], version: "1")
    let renamed = try ObjectModel(
      name: "Shop", versionName: "2",
      entities: source.entities.map { entity in
        guard entity.name == "Item" else { return entity }
        return EntityDescription(
          name: "Item", attributes: entity.attributes,
          relationships: [
            RelationshipDescription(
              name: "rack", destination: "Shelf", maxCount: 1, renamingIdentifier: "shelf")
          ])
      })
    let hop = try MigrationHop(from: source, to: renamed, mapping: nil)
    #expect(hop.inPlaceAttributes == [])
    #expect(hop.keptRelationship("shelf", of: "Item") == "rack")
    let bare = try ObjectModel(
      name: "Shop", versionName: "2",
      entities: source.entities.map { entity in
        entity.name == "Item"
          ? EntityDescription(name: "Item", attributes: entity.attributes) : entity
      })
    #expect(
      try MigrationHop(from: source, to: bare, mapping: nil).keptRelationship("shelf", of: "Item")
        == nil)
  }

  /// An entity added (with a relationship to a kept one), removed or renamed leaves the kept
  /// entities' rules as they were (a renamed one's under its new name, saying the old).
  @Test func entitiesAddedRemovedOrRenamedAreDoneInPlace() throws {
    let source = try Self.model([Self.name], version: "1")
    var entities = try Self.model([Self.name, Self.count], version: "2").entities
    entities.append(
      EntityDescription(
        name: "Tag", attributes: [Self.name],
        relationships: [RelationshipDescription(name: "item", destination: "Item", maxCount: 1)]))
    let grown = try ObjectModel(name: "Shop", versionName: "2", entities: entities)
    #expect(try MigrationHop(from: source, to: grown, mapping: nil).inPlaceAttributes == [])
    let shrunk = try ObjectModel(
      name: "Shop", versionName: "2", entities: source.entities.filter { $0.name == "Shelf" })
    #expect(try MigrationHop(from: source, to: shrunk, mapping: nil).inPlaceAttributes == [])
    let renamed = try ObjectModel(
      name: "Shop", versionName: "2",
      entities: source.entities.map { entity in
        guard entity.name == "Shelf" else {
          return EntityDescription(
            name: entity.name, attributes: entity.attributes,
            relationships: [
              RelationshipDescription(name: "shelf", destination: "Rack", maxCount: 1)
            ])
        }
        return EntityDescription(
          name: "Rack", renamingIdentifier: "Shelf",
          attributes: [AttributeDescription(name: "label", type: .string, isOptional: false)])
      })
    let rules = try MigrationHop(from: source, to: renamed, mapping: nil).inPlaceAttributes
    #expect(rules?.map(Self.describe) == ["Rack.label, required"])
    #expect(rules?.first?.sourceEntity == "Shelf")
  }
}
