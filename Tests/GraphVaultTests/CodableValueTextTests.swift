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
    _ = try DiffService.diff(
      old: Location(path: old), new: Location(path: new), options: DiffService.Options()
    ) {
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

  /// Exports the single Order of the store at `path` and gives its JSON object as Python reads it.
  func exported(_ path: String, to file: String) throws -> [String: Any] {
    var options = ExportService.Options()
    options.output = file
    _ = try ExportService.export(source: Location(path: path), options: options)
    let document = try JSONSerialization.jsonObject(
      with: Data(contentsOf: URL(fileURLWithPath: file)))
    let objects = (document as? [String: Any])?["objects"] as? [[String: Any]]
    return try #require(objects?.first)
  }

  @Test func exportShowsJSONTextAsItsValueAndImportWritesTheSameBytes() throws {
    let directory = try TemporaryDirectory()
    let cafe = directory.path("cafe.sqlite").path
    // Drinks compact, as Foundation's JSONEncoder writes them; the photo JSON too, but with a
    // space and a real spelled 2.50, which compact text would not give back.
    let drinks = #"[{"name":"Tea","size":2,"note":"a \"hot\" one\n"},"Café",1.5,true,null]"#
    try store(
      at: cafe, drinks: drinks, settings: .dictionary(["milk": .bool(true)]),
      photo: Array(#"{"price": 2.50}"#.utf8))
    let order = try exported(cafe, to: directory.path("cafe.json").path)
    // The JSON itself, as Python's json module reads it: the exact value, no base64.
    let drinkMembers = try #require(order["drinks"] as? [String: Any])
    #expect(Array(drinkMembers.keys) == ["json"])
    let held = try JSONSerialization.data(withJSONObject: drinkMembers["json"] as Any)
    let expected = try JSONSerialization.data(
      withJSONObject: JSONSerialization.jsonObject(with: Data(drinks.utf8)))
    #expect(
      (try JSONSerialization.jsonObject(with: held) as? NSArray)
        == (try JSONSerialization.jsonObject(with: expected) as? NSArray))
    // Bytes that compact text would not give back stay base64.
    #expect((order["photo"] as? [String: Any])?.keys.sorted() == ["base64"])
    #expect((order["settings"] as? [String: Any])?.keys.sorted() == ["base64"])
    // Imported into a new store, every byte is as it was: read back with Python's sqlite3.
    let copy = directory.path("copy.sqlite").path
    _ = try ImportService.importObjects(from: directory.path("cafe.json").path, to: copy)
    for column in ["ZDRINKS", "ZSETTINGS", "ZPHOTO"] {
      let query = "SELECT hex(\(column)) FROM ZORDER"
      #expect(try sqlRows(copy, query) == sqlRows(cafe, query), "\(column)")
    }
    #expect(
      try sqlRows(copy, "SELECT CAST(ZDRINKS AS TEXT) FROM ZORDER") == [drinks])
  }

  @Test func importRefusesJSONThatIsNotAnArrayOrAnObject() throws {
    let directory = try TemporaryDirectory()
    let cafe = directory.path("cafe.sqlite").path
    try store(at: cafe, drinks: "[1]", settings: .bool(true), photo: [1])
    let file = directory.path("cafe.json").path
    _ = try exported(cafe, to: file)
    let text = try String(contentsOfFile: file, encoding: .utf8)
    #expect(text.contains(#""json": [1]"#))
    try text.replacingOccurrences(of: #""json": [1]"#, with: #""json": 1"#).write(
      toFile: file, atomically: false, encoding: .utf8)
    #expect {
      try ImportService.importObjects(from: file, to: directory.path("copy.sqlite").path)
    } throws: { error in
      (error as? VaultError)?.detail.contains(
        "\"json\" holds an integer, not an array or an object")
        == true
    }
  }
}
