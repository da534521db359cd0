import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import PropertyList
import TestSupport
import Testing

/// What SwiftData keeps in binary attributes (a Codable collection as JSON text, a property
/// list) is shown by `diff` as what it holds, decoded as data; other bytes stay a summary.
@Suite("Binary values shown as the JSON or property list they hold")
struct CodableValueTextTests {
  static func model() throws -> ObjectModel {
    try ObjectModel(
      name: "Cafe",
      entities: [
        EntityDescription(
          name: "Order",
          attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "drinks", type: .binaryData),
            AttributeDescription(name: "settings", type: .binaryData),
            AttributeDescription(name: "photo", type: .binaryData),
          ])
      ])
  }

  func store(
    at path: String, drinks: String, settings: PropertyListValue, photo: [UInt8]
  ) throws {
    let model = try Self.model()
    try StoreCreator.create(at: path, model: model)
    let context = try ObjectContext(storePath: path, model: model)
    let order = try context.insert("Order")
    try order.setValue(.string("Ann"), for: "name")
    try order.setValue(.data(Array(drinks.utf8)), for: "drinks")
    try order.setValue(.data(settings.binaryPropertyList()), for: "settings")
    try order.setValue(.data(photo), for: "photo")
    try context.save()
  }

  @Test func aDiffShowsCodableCollectionsAsJSONAndPropertyListsAsWhatTheyHold() throws {
    let directory = try TemporaryDirectory()
    let old = directory.path("old.sqlite").path
    let new = directory.path("new.sqlite").path
    try store(
      at: old, drinks: #"["Coffee"]"#, settings: .dictionary(["milk": .bool(false)]),
      photo: [0xFF, 0xD8, 0xFF, 0x01])
    try store(
      at: new, drinks: #"[{"name":"Tea","size":2},"Coffee"]"#,
      settings: .dictionary(["milk": .bool(true)]), photo: [0xFF, 0xD8, 0xFF, 0x02])
    var changes: [ObjectChange] = []
    _ = try DiffService.diff(old: old, new: new, options: DiffService.Options()) {
      changes.append($0)
    }
    let properties = Dictionary(
      uniqueKeysWithValues: try #require(changes.first).properties.map { ($0.name, $0) })
    #expect(properties["drinks"]?.old == #"json ["Coffee"]"#)
    #expect(properties["drinks"]?.new == #"json [{"name":"Tea","size":2},"Coffee"]"#)
    #expect(properties["settings"]?.old == #"plist {"milk":false}"#)
    #expect(properties["settings"]?.new == #"plist {"milk":true}"#)
    #expect(properties["photo"]?.new == "<4 bytes: ffd8ff02>")
  }
}
