import Foundation
import ObjectModel
import ObjectStore
import PropertyList
import TestSupport
import Testing

/// An app's own value type and its transformer: three bytes, red, green, blue.
struct Color: Equatable, ValueClassNaming {
  var red: UInt8, green: UInt8, blue: UInt8
  var valueClassHierarchy: [String] { ["Color", "NSObject"] }
}

struct RGBTransformer: AttributeValueTransformer {
  struct Refused: Error, CustomStringConvertible {
    var description: String
  }

  var valueClassNames: Set<String> { ["Color"] }

  func transformedValue(_ bytes: [UInt8]) throws -> any Sendable {
    guard bytes.count == 3 else { throw Refused(description: "\(bytes.count) bytes, not 3") }
    return Color(red: bytes[0], green: bytes[1], blue: bytes[2])
  }

  func reverseTransformedValue(_ value: any Sendable) throws -> [UInt8] {
    guard let color = value as? Color else { throw Refused(description: "not a Color") }
    guard color != Color(red: 0, green: 0, blue: 0) else {
      throw Refused(description: "black is not allowed")
    }
    return [color.red, color.green, color.blue]
  }
}

@Suite("Transformable attributes in the object context")
struct TransformableAttributeTests {
  let directory: TemporaryDirectory
  let path: String
  let model: ObjectModel
  let transformers: ValueTransformerRegistry

  static func model(colorClass: String = "Color", transformer: String = "RGBTransformer") throws
    -> ObjectModel
  {
    try ObjectModel(
      name: "Shapes",
      entities: [
        EntityDescription(
          name: "Shape",
          attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "payload", type: .transformable),
            AttributeDescription(
              name: "settings", type: .transformable,
              valueTransformerName: "NSSecureUnarchiveFromData", valueClassName: "NSDictionary"),
            AttributeDescription(
              name: "color", type: .transformable, valueTransformerName: transformer,
              valueClassName: colorClass),
          ])
      ])
  }

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Shapes.sqlite").path
    model = try Self.model()
    try StoreCreator.create(at: path, model: model)
    var registry = ValueTransformerRegistry.standard
    registry.register(RGBTransformer(), as: "RGBTransformer")
    transformers = registry
  }

  func context() throws -> ObjectContext {
    try ObjectContext(storePath: path, model: model, transformers: transformers)
  }

  func onlyShape(_ context: ObjectContext) throws -> ManagedObject {
    try #require(try context.fetch(FetchRequest(entity: "Shape")).first)
  }

  @Test func aCustomTransformerStoresItsValuesAndReadsThemBack() throws {
    let context = try context()
    let shape = try context.insert("Shape")
    try shape.setTransformedValue(Color(red: 10, green: 20, blue: 30), for: "color")
    try context.save()
    let reader = try self.context()
    let read = try onlyShape(reader)
    #expect(
      try read.transformedValue(for: "color") as? Color == Color(red: 10, green: 20, blue: 30))
    // The store keeps the transformer's bytes.
    #expect(try read.value(for: "color") == .transformed([10, 20, 30]))
  }

  @Test func theDefaultTransformerKeyedArchivesFoundationValues() throws {
    let values: [any Sendable] = [
      "naïve", 42, 2.5, true, Data([1, 2, 3]), Date(timeIntervalSinceReferenceDate: 12.25),
      URL(string: "https://example.org/x?y=1")!,
      UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!,
      Set(["b", "a"]),
      ["title": "Dune", "pages": [1, 2, 3], "nested": ["deep": true]] as [String: any Sendable],
    ]
    for value in values {
      let context = try context()
      let shape = try context.insert("Shape")
      try shape.setTransformedValue(value, for: "payload")
      try context.save()
      let reader = try self.context()
      let again = try reader.object(with: shape.reference)
      let back = try #require(try again.transformedValue(for: "payload"))
      #expect(Self.canonical(back) == Self.canonical(value), "\(type(of: value))")
      #expect(type(of: back) == type(of: value) || value is [String: any Sendable])
    }
    // The bytes are an NSKeyedArchiver archive: the reader sees the string.
    let context = try context()
    let shape = try context.insert("Shape")
    try shape.setTransformedValue("plain", for: "payload")
    guard case .transformed(let bytes)? = try shape.value(for: "payload") else {
      Issue.record("not stored as transformed bytes")
      return
    }
    #expect(try KeyedArchive(bytes: bytes).topValue().stringValue == "plain")
  }

  /// A value's description with sets and dictionaries in sorted order.
  static func canonical(_ value: any Sendable) -> String {
    switch value {
    case let set as Set<String>: return "set" + set.sorted().description
    case let dictionary as [String: any Sendable]:
      return "{"
        + dictionary.keys.sorted().map { "\($0): \(canonical(dictionary[$0]!))" }
        .joined(separator: ", ") + "}"
    case let array as [any Sendable]:
      return "[" + array.map(canonical).joined(separator: ", ") + "]"
    default: return "\(type(of: value))(\(value))"
    }
  }

  @Test func theValueClassIsCheckedOnEverySetAndAWrongOneChangesNothing() throws {
    let context = try context()
    let shape = try context.insert("Shape")
    try context.save()
    do {
      try shape.setTransformedValue("red", for: "color")
      Issue.record("a string was accepted as a Color")
    } catch {
      #expect(error.description.contains("Shape.color holds Color values"))
      #expect(error.description.contains("a NSString (String) was given"))
    }
    do {
      try shape.setTransformedValue(["a", "b"] as [any Sendable], for: "settings")
      Issue.record("an array was accepted as an NSDictionary")
    } catch {
      #expect(error.description.contains("Shape.settings holds NSDictionary values"))
    }
    #expect(!context.hasChanges)
    try shape.setTransformedValue(["a": 1] as [String: any Sendable], for: "settings")
    #expect(context.hasChanges)
  }

  @Test func aMisspelledValueClassIsAnErrorWhenTheContextOpens() throws {
    let misspelled = try Self.model(colorClass: "Colour")
    let other = directory.path("Misspelled.sqlite").path
    try StoreCreator.create(at: other, model: misspelled)
    do {
      _ = try ObjectContext(storePath: other, model: misspelled, transformers: transformers)
      Issue.record("opened")
    } catch {
      #expect(error.description.contains("Shape.color names the value class Colour"))
      #expect(error.description.contains("did you mean Color?"))
    }
    let secureTypo = try ObjectModel(
      name: "T",
      entities: [
        EntityDescription(
          name: "T",
          attributes: [
            AttributeDescription(
              name: "t", type: .transformable, valueClassName: "NSStirng")
          ])
      ])
    #expect(throws: StoreError.self) {
      try ObjectContext(storePath: other, model: secureTypo)
    }
  }

  @Test func aStoreOpensWithoutItsTransformerAndOnlyThatValueNeedsIt() throws {
    // Saved with the transformer registered.
    let writer = try context()
    let shape = try writer.insert("Shape")
    try shape.setValue(.string("circle"), for: "name")
    try shape.setTransformedValue(Color(red: 1, green: 2, blue: 3), for: "color")
    try writer.save()

    // Opened without it, as Core Data opens a store: every other value reads and changes.
    let context = try ObjectContext(storePath: path, model: model)
    defer { withExtendedLifetime(context) {} }
    let found = try #require(try context.fetch(FetchRequest(entity: "Shape")).first)
    #expect(try found.value(for: "name") == .string("circle"))
    try found.setValue(.string("disc"), for: "name")
    try context.save()
    for access in [
      { _ = try found.transformedValue(for: "color") },
      { try found.setTransformedValue(Color(red: 4, green: 5, blue: 6), for: "color") },
    ] {
      #expect {
        try access()
      } throws: { error in
        String(describing: error).contains(
          "Shape.color needs the value transformer RGBTransformer, which is not registered")
      }
    }
    // The stored bytes were left as they were.
    let reader = try self.context()
    defer { withExtendedLifetime(reader) {} }
    let stored = try #require(try reader.fetch(FetchRequest(entity: "Shape")).first)
    #expect(try stored.transformedValue(for: "color") as? Color == Color(red: 1, green: 2, blue: 3))

    // Asked to, the context refuses to open without every transformer, naming it.
    var strict = ValueTransformerRegistry.standard
    strict.requiresEveryTransformer = true
    #expect {
      _ = try ObjectContext(storePath: path, model: model, transformers: strict)
    } throws: { error in
      String(describing: error).contains(
        "Shape.color names the value transformer RGBTransformer, which is not registered")
    }
  }

  @Test func aTransformerThatThrowsOnReverseSetsNothing() throws {
    let context = try context()
    let shape = try context.insert("Shape")
    try shape.setTransformedValue(Color(red: 1, green: 2, blue: 3), for: "color")
    do {
      try shape.setTransformedValue(Color(red: 0, green: 0, blue: 0), for: "color")
      Issue.record("black was stored")
    } catch {
      #expect(error.description.contains("RGBTransformer cannot store the value (nothing was set)"))
      #expect(error.description.contains("black is not allowed"))
    }
    #expect(try shape.transformedValue(for: "color") as? Color == Color(red: 1, green: 2, blue: 3))
  }

  @Test func badStoredBytesAreAClearErrorNamingTheObject() throws {
    let context = try context()
    let shape = try context.insert("Shape")
    // A keyed archive without $top.
    let noTop: PropertyListValue = [
      "$archiver": "NSKeyedArchiver", "$version": 100_000, "$objects": ["$null"],
    ]
    try shape.setValue(.transformed(noTop.binaryPropertyList()), for: "payload")
    do {
      _ = try shape.transformedValue(for: "payload")
      Issue.record("read")
    } catch {
      #expect(error.description.contains("Shape.payload (Shape/p1)"))
      #expect(error.description.contains("NSKeyedUnarchiveFromData cannot read the stored value"))
      #expect(error.description.contains("$top"))
    }
    try shape.setValue(.transformed([1, 2]), for: "color")
    #expect(throws: StoreError.self) { try shape.transformedValue(for: "color") }
    #expect(throws: StoreError.self) { try shape.transformedValue(for: "name") }
  }

  @Test func theSecureTransformerRefusesClassesOutsideFoundation() throws {
    var builder = KeyedArchiveBuilder()
    let color = builder.makeObject(classes: ["Color", "NSObject"])
    builder.set(.inline(.integer(7)), forKey: "rgb", of: color)
    let archive = builder.archive(root: .object(color))
    let context = try context()
    let shape = try context.insert("Shape")
    try shape.setValue(.transformed(archive), for: "settings")
    do {
      _ = try shape.transformedValue(for: "settings")
      Issue.record("read")
    } catch {
      #expect(error.description.contains("decodes only Foundation classes, not Color"))
    }
    // The default one hands the object over, for the caller to decode.
    try shape.setValue(.transformed(archive), for: "payload")
    let object = try #require(try shape.transformedValue(for: "payload") as? KeyedArchiveObject)
    #expect(object.className == "Color")
    #expect(object.rawValue(forKey: "rgb") == .integer(7))
  }
}

@Suite(
  "Transformable values Core Data wrote",
  .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
struct FixtureTransformableTests {
  @Test func theDefaultTransformerReadsTheValuesOfA2013Store() throws {
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(
      "BookMigration/Stores/Model1.sqlite", into: directory.url)
    let set = try ModelVersionSet.load(
      path: SharedFixtures.file("BookMigration/Model.xcdatamodeld").path)
    let model = try #require(set.version(named: "Model1"))
    let context = try ObjectContext(storePath: copy.path, model: model)
    let books = try context.fetch(FetchRequest(entity: "Book"))
    let files = try books.compactMap { try $0.transformedValue(for: "fileURL") as? String }
    #expect(files.count == books.count && files.contains("The Trial.file"), "\(files)")
  }

  @Test func anAppsOwnClassSurfacesAsAnArchivedObjectAndPassesItsValueClass() throws {
    let directory = try TemporaryDirectory()
    let copy = try SharedFixtures.copyStore(
      "CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite", into: directory.url)
    let model = try #require(try CoreDataStore(path: copy.path).cachedModel())
    // SampleModel2 names transformers of its own; they keyed-archive, as Core Data's default.
    // Without them the store opens, and only their values are out of reach, naming them.
    let bare = try ObjectContext(storePath: copy.path, model: model)
    defer { withExtendedLifetime(bare) {} }
    let covered = try #require(
      try bare.fetch(FetchRequest(entity: "Book")).first { try $0.value(for: "cover") != nil })
    #expect {
      _ = try covered.transformedValue(for: "cover")
    } throws: { error in
      String(describing: error).contains("needs the value transformer CoverTransformer")
    }
    var transformers = ValueTransformerRegistry.standard
    for name in ["CoverTransformer", "ContentTransformer"] {
      transformers.register(KeyedArchiveTransformer(secure: false), as: name)
    }
    for name in ["Cover", "Content"] { transformers.registerValueClass(name) }
    let context = try ObjectContext(storePath: copy.path, model: model, transformers: transformers)
    let book = try #require(
      try context.fetch(FetchRequest(entity: "Book")).first { try $0.value(for: "cover") != nil })
    let cover = try #require(try book.transformedValue(for: "cover") as? KeyedArchiveObject)
    // Swift archives the class under its module's name; the model says "Cover".
    #expect(cover.className == "CoreDataPlus_Tests.Cover")
    #expect(try cover.string(forKey: "text") == "default cover")
    try book.setTransformedValue(cover, for: "cover")
    #expect(throws: StoreError.self) { try book.setTransformedValue(cover, for: "title") }
  }
}
