import Foundation
import ObjectModel
import PropertyList
import TestSupport
import Testing

/// Composite attributes (`NSCompositeAttributeDescription`): what SwiftData makes of a Codable
/// struct property, an attribute of elements each stored in a column of its own.
@Suite("Composite attributes")
struct CompositeAttributeTests {
  /// `Cocktail.author: {id, person, year?, origin: {city, country}}`, required `person`.
  static func cocktails() throws -> ObjectModel {
    try ObjectModel(
      name: "Bar",
      entities: [
        EntityDescription(
          name: "Cocktail",
          attributes: [
            AttributeDescription(name: "id", type: .string),
            AttributeDescription(
              composite: "author",
              elements: [
                AttributeDescription(name: "person", type: .string, isOptional: false),
                AttributeDescription(name: "id", type: .string),
                AttributeDescription(
                  composite: "origin",
                  elements: [
                    AttributeDescription(name: "country", type: .string),
                    AttributeDescription(
                      name: "city", type: .string, defaultValue: .string("Paris")),
                  ]),
                AttributeDescription(name: "year", type: .integer64, renamingIdentifier: "born"),
              ]),
          ])
      ])
  }

  @Test func anObjectsValuesAreTheElementsNamedByKeyPath() throws {
    let model = try Self.cocktails()
    let attributes = model.attributes(of: "Cocktail")
    #expect(
      attributes.map(\.name) == [
        "author.id", "author.origin.city", "author.origin.country", "author.person", "author.year",
        "id",
      ])
    let person = try #require(attributes.first { $0.name == "author.person" })
    // Optional: the composite around it is.
    #expect(person.isOptional)
    #expect(person.leafName == "person")
    #expect(
      model.entity(named: "Cocktail")?.attribute(named: "author.origin.city")?.defaultValue
        == .string("Paris"))
    #expect(
      model.entity(named: "Cocktail")?.attribute(named: "author.year")?.renamingIdentifier
        == "author.born")
    #expect(model.entity(named: "Cocktail")?.attribute(named: "author.origin")?.isComposite == true)
    #expect(model.entity(named: "Cocktail")?.attribute(named: "author.nickname") == nil)
    // The model's own view keeps the composite whole.
    #expect(model.declaredAttributes(of: "Cocktail").map(\.name) == ["author", "id"])
  }

  @Test func aCompositeWithoutElementsOrWithTwoAlikeIsRefusedNamingIt() {
    #expect(throws: ModelError.self) {
      try ObjectModel(
        name: "Bad",
        entities: [
          EntityDescription(
            name: "A", attributes: [AttributeDescription(composite: "empty", elements: [])])
        ])
    }
    do {
      _ = try ObjectModel(
        name: "Bad",
        entities: [
          EntityDescription(
            name: "A",
            attributes: [
              AttributeDescription(
                composite: "twice",
                elements: [
                  AttributeDescription(name: "x", type: .string),
                  AttributeDescription(name: "x", type: .integer16),
                ])
            ])
        ])
      Issue.record("a composite with two elements named x was accepted")
    } catch {
      #expect(error.property == "twice.x")
    }
  }

  @Test func theDescriptorAndTheCompiledModelKeepEveryElement() throws {
    let model = try Self.cocktails()
    #expect(try ModelDescriptor.decode(ModelDescriptor.encode(model)) == model)
    let cache = try CompiledModelWriter.modelCache(model)
    let loaded = try CompiledModelLoader.load(modelCache: cache, name: "Bar")
    #expect(loaded.entities == model.entities)
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
  func pythonsPlistlibFindsTheCompositeAsCoreDataArchivesIt() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.bin").path
    try Data(CompiledModelWriter.modelCache(try Self.cocktails())).write(
      to: URL(fileURLWithPath: path))
    let result = try Subprocess.python(
      """
      import plistlib, sys, zlib
      p = plistlib.loads(zlib.decompress(open(sys.argv[1], 'rb').read(), -15))
      o = p['$objects']
      def obj(u): return o[u.data]
      for item in o:
          if isinstance(item, dict) and '$class' in item \\
                  and obj(item['$class'])['$classname'] == 'NSCompositeAttributeDescription':
              elements = [obj(obj(e)['NSPropertyName']) for e in obj(item['NSCompositeElements'])['NS.objects']]
              print(obj(item['NSPropertyName']), item['NSAttributeType'], ','.join(sorted(elements)))
      """, [path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.split(separator: "\n").sorted()
        == ["author 2100 id,origin,person,year", "origin 2100 city,country"])
  }

  @Test func xcodesModelFileReadsCompositesDefinedAtModelLevelOrInline() throws {
    let xml = """
      <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
      <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="">
          <entity name="Quake" representedClassName="Quake" syncable="YES">
              <attribute name="magnitude" optional="YES" attributeType="Composite" composite="Magnitude"/>
              <attribute name="place" optional="YES" attributeType="Composite">
                  <attribute name="name" attributeType="String"/>
              </attribute>
          </entity>
          <composite name="Magnitude">
              <attribute name="richter" optional="YES" attributeType="Double" defaultValueString="0"/>
              <attribute name="scale" optional="YES" attributeType="String"/>
          </composite>
      </model>
      """
    let model = try XcodeModelLoader.parse(Array(xml.utf8), name: "Quakes", versionName: nil)
    #expect(
      model.attributes(of: "Quake").map(\.name) == [
        "magnitude.richter", "magnitude.scale", "place.name",
      ])
    #expect(model.attributes(of: "Quake").first?.defaultValue == .double(0))
    let missing = xml.replacingOccurrences(
      of: "composite=\"Magnitude\"", with: "composite=\"Size\"")
    #expect(throws: ModelError.self) {
      try XcodeModelLoader.parse(Array(missing.utf8), name: "Quakes", versionName: nil)
    }
  }

  @Test func versionHashesOfEntitiesWithCompositesAreSaidNotToBeCoreDatas() throws {
    let model = try Self.cocktails()
    #expect(
      model.unreproducedVersionHashes["Cocktail"]?.contains("composite attribute author") == true)
    // Elements count: a model whose composite differs has another hash.
    var entity = try #require(model.entity(named: "Cocktail"))
    entity.attributes[0].elements.removeLast()
    let other = try ObjectModel(name: "Bar", entities: [entity])
    #expect(other.computedVersionHashes["Cocktail"] != model.computedVersionHashes["Cocktail"])
  }
}
