import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// The rules of the model-in-code write-up (`../shared/reference/techniques/
/// core-data-model-in-code.txt`), each quoted, on models built in Swift.
@Suite("A model built in code follows Core Data's rules")
struct ModelInCodeRulesTests {
  /// An event with locations, both sides built with the counts given.
  static func model(
    eventToLocation: Int? = nil, locationToEvent: Int? = nil, versionName: String? = nil
  ) throws -> ObjectModel {
    let builder = ModelBuilder(name: "Events", versionName: versionName)
    func relationship(_ name: String, _ destination: String, _ inverse: String, _ count: Int?)
      -> RelationshipDescription
    {
      count.map {
        RelationshipDescription(
          name: name, destination: destination, inverse: inverse, maxCount: $0)
      } ?? RelationshipDescription(name: name, destination: destination, inverse: inverse)
    }
    try builder.addEntity(
      EntityDescription(
        name: "Event", attributes: [AttributeDescription(name: "title", type: .string)],
        relationships: [relationship("locations", "Location", "events", eventToLocation)]))
    try builder.addEntity(
      EntityDescription(
        name: "Location", attributes: [AttributeDescription(name: "name", type: .string)],
        relationships: [relationship("events", "Event", "locations", locationToEvent)]))
    return try builder.build()
  }

  /// "locationToEvent.maxCount = 0 // 0 is the default but this makes it clear"; "If maxCount
  /// is 0, it's a to-many relationship with no upper bound."
  @Test func aRelationshipsMaxCountDefaultsToZeroAnUnboundedToMany() throws {
    let relationship = RelationshipDescription(name: "events", destination: "Event")
    #expect(relationship.maxCount == 0)
    #expect(relationship.isToMany)
    // Both sides left at the default: many-to-many, kept in a join table.
    let directory = try TemporaryDirectory()
    let path = directory.path("Events.sqlite").path
    try StoreCreator.create(at: path, model: try Self.model())
    let context = try ObjectContext(storePath: path, model: try Self.model())
    let event = try context.insert("Event")
    for name in ["a", "b", "c"] {
      let location = try context.insert("Location")
      try location.setValue(.string(name), for: "name")
      try event.add(location, to: "locations")
    }
    try context.save()
    let joins = try sqlRows(
      path, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\'")
    #expect(joins.contains { $0.hasSuffix("LOCATIONS") || $0.hasSuffix("EVENTS") }, "\(joins)")
    let reread = try ObjectContext(storePath: path, model: try Self.model())
    #expect(try reread.object(with: event.reference).objects(for: "locations").count == 3)
  }

  /// "If maxCount is 1, it's a to-one relationship."
  @Test func aMaxCountOfOneIsAToOne() throws {
    let model = try Self.model(eventToLocation: 1)
    let locations = try #require(
      model.relationships(of: "Event").first { $0.name == "locations" })
    #expect(!locations.isToMany)
  }

  /// "Strangely maxCount is unsigned, so negative values are permitted. Using negative numbers
  /// has the same effect as setting maxCount to 0."
  @Test func aNegativeMaxCountIsAnUnboundedToMany() throws {
    let model = try Self.model(eventToLocation: -1, locationToEvent: 1)
    let locations = try #require(
      model.relationships(of: "Event").first { $0.name == "locations" })
    #expect(locations.isToMany)
    let directory = try TemporaryDirectory()
    let path = directory.path("Events.sqlite").path
    try StoreCreator.create(at: path, model: model)
    let context = try ObjectContext(storePath: path, model: model)
    let event = try context.insert("Event")
    for _ in 0..<5 { try event.add(try context.insert("Location"), to: "locations") }
    try context.save()
    #expect(try event.objects(for: "locations").count == 5)
  }

  /// Core Data's `value(forKey:)` and `setValue(_:forKey:)` both refuse a key the entity does
  /// not have.
  @Test func readingAKeyTheEntityDoesNotHaveIsAnErrorAsWritingIs() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("Events.sqlite").path
    let model = try Self.model()
    try StoreCreator.create(at: path, model: model)
    let context = try ObjectContext(storePath: path, model: model)
    let event = try context.insert("Event")
    #expect(try event.value(for: "title") == nil)
    #expect {
      try event.value(for: "titel")
    } throws: { error in
      (error as? StoreError)?.description.contains("Event has no attribute titel") == true
    }
    #expect(throws: StoreError.self) { try event.setValue(.string("x"), for: "titel") }
  }

  /// The version name given to the builder is the archive's model version when the store is
  /// backed up from its own model cache.
  @Test func aVersionNameGivenToTheBuilderSurvivesBackup() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("Events.sqlite").path
    try StoreCreator.create(at: path, model: try Self.model(versionName: "Events 2"))
    var options = BackupService.Options()
    options.output = Location(path: directory.path("events.gvault").path)
    let result = try BackupService.backup(storePath: path, options: options)
    #expect(result.modelVersion == "Events 2")
    let restored = directory.path("restored.sqlite").path
    let restore = try RestoreService.restore(
      archive: Location(path: result.archive), to: restored, options: RestoreOptions())
    #expect(restore.modelVersion == "Events 2")
  }
}
