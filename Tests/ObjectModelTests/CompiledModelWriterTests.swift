import Foundation
import ObjectModel
import PropertyList
import TestSupport
import Testing
import Zlib

@Suite("Compiled models and model caches written by graphvault")
struct CompiledModelWriterTests {
  /// Every feature the model layer describes, on top of the library: defaults of every type,
  /// derivations of every form, transients, hashes' modifiers, user info, history flags.
  static func everything() throws -> ObjectModel {
    var entities = SampleModels.libraryEntities()
    entities.append(
      EntityDescription(
        name: "Everything", className: "EverythingMO", renamingIdentifier: "Anything",
        versionHashModifier: "v2", userInfo: ["owner": "tests", "empty": ""],
        uniquenessConstraints: [["code"], ["label", "number"]],
        fetchIndexes: [
          FetchIndex(
            name: "byCode",
            elements: [
              .init(property: "code"), .init(property: "number", ascending: false),
            ])
        ],
        attributes: [
          AttributeDescription(name: "code", type: .string, defaultValue: .string("∅ code")),
          AttributeDescription(name: "label", type: .string, userInfo: ["shown": "yes"]),
          AttributeDescription(name: "number", type: .integer64, defaultValue: .integer(-42)),
          AttributeDescription(name: "ratio", type: .double, defaultValue: .double(0.25)),
          AttributeDescription(name: "price", type: .decimal, defaultValue: .decimal("-1234.50")),
          AttributeDescription(name: "small", type: .decimal, defaultValue: .decimal("0.001")),
          AttributeDescription(
            name: "when", type: .date, defaultValue: .date(-86_400.5),
            versionHashModifier: "seconds"),
          AttributeDescription(name: "blob", type: .binaryData, defaultValue: .data([0, 1, 255])),
          AttributeDescription(
            name: "token", type: .uuid,
            defaultValue: .uuid(AttributeValue.uuidBytes("6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!)),
          AttributeDescription(
            name: "home", type: .uri, defaultValue: .uri("https://example.org/a?b=c")),
          AttributeDescription(
            name: "kept", type: .string, preservesValueInHistoryOnDeletion: true),
          AttributeDescription(name: "note", type: .string, isTransient: true),
          AttributeDescription(
            name: "shape", type: .transformable, valueTransformerName: "ShapeTransformer",
            valueClassName: "Shape"),
          AttributeDescription(
            name: "loud", type: .string, isDerived: true, derivationExpression: "uppercase:(label)"),
          AttributeDescription(
            name: "stamp", type: .date, isDerived: true, derivationExpression: "now()"),
          AttributeDescription(
            name: "ownerName", type: .string, isDerived: true,
            derivationExpression: "owner.name"),
        ],
        relationships: [
          RelationshipDescription(
            name: "owner", destination: "Tag", inverse: nil, maxCount: 1, deleteRule: .noAction),
          RelationshipDescription(
            name: "scratchpad", destination: "Page", inverse: nil, maxCount: 0, isTransient: true),
        ]))
    return try ObjectModel(
      name: "Everything", versionName: "Everything 3", versionIdentifiers: ["3", "beta"],
      entities: entities)
  }

  static func reloaded(_ model: ObjectModel) throws -> ObjectModel {
    try CompiledModelLoader.decode(
      archiveBytes: CompiledModelWriter.archive(model), name: model.name,
      versionName: model.versionName)
  }

  @Test func aModelWithEveryFeatureReadsBackEqualFromItsCompiledForm() throws {
    for model in [try SampleModels.library(), try Self.everything()] {
      let loaded = try Self.reloaded(model)
      for (original, read) in zip(model.entities, loaded.entities) where original != read {
        Issue.record("\(original.name) differs:\n\(original)\n\(read)")
      }
      #expect(loaded == model)
      #expect(loaded.fingerprint == model.fingerprint)
    }
  }

  @Test func aModelCacheInflatesToTheSameModel() throws {
    let model = try Self.everything()
    let cache = try CompiledModelWriter.modelCache(model)
    let loaded = try CompiledModelLoader.load(modelCache: cache, name: model.name)
    #expect(loaded.entities == model.entities)
    #expect(loaded.versionIdentifiers == model.versionIdentifiers)
    // Apple's caches record no version name; graphvault's keep it under a key of its own, so
    // that a model built in code keeps its name in the store (and in backups of it).
    #expect(model.versionName != nil)
    #expect(loaded.versionName == model.versionName)
    let root = try KeyedArchive(bytes: RawDeflate.decompress(cache)).rootObject()
    #expect(try root.string(forKey: CompiledModelWriter.versionNameKey) == model.versionName)
    // A compiled model (a .mom) is Apple's form alone, with no such key.
    let mom = try KeyedArchive(bytes: CompiledModelWriter.archive(model)).rootObject()
    #expect(!mom.contains(CompiledModelWriter.versionNameKey))
  }

  @Test func theArchiveUsesApplesClassesAndKeys() throws {
    let archive = try KeyedArchive(bytes: CompiledModelWriter.archive(try Self.everything()))
    #expect(archive.archiver == "NSKeyedArchiver" && archive.version == 100_000)
    let root = try archive.rootObject()
    #expect(root.classHierarchy == ["NSManagedObjectModel", "NSObject"])
    let known = try #require(try root.object(forKey: "NSEntities"))
    #expect(known.className == "NSKnownKeysDictionary1")
    let entities = try #require(try known.value(forKey: "values").arrayValue).compactMap(
      \.objectValue)
    #expect(
      try entities.map { try $0.string(forKey: "NSEntityName") } == [
        "Author", "Book", "Everything", "GraphicNovel", "Page", "Tag", "Writer",
      ])
    let author = entities[0]
    // A sub-entity repeats inherited properties; they belong to it (NSEntity).
    let properties = try #require(try author.value(forKey: "NSProperties").dictionaryEntries)
    #expect(properties.compactMap(\.key.stringValue) == ["age", "alias", "books"])
    let alias = try #require(properties[1].value.objectValue)
    #expect(alias.className == "NSAttributeDescription")
    #expect(try alias.object(forKey: "NSEntity")?.uid == author.uid)
    #expect(try alias.value(forKey: "NSAttributeType").integerValue == 700)
    #expect(try alias.value(forKey: "_P").integerValue == 0xF1)
    #expect(try alias.string(forKey: "NSAttributeValueClassName") == "NSString")
    #expect(try author.object(forKey: "NSSuperentity")?.string(forKey: "NSEntityName") == "Writer")
    // Relationships point at their destination and inverse objects: the graph has cycles.
    let books = try #require(properties[2].value.objectValue)
    let inverse = try #require(try books.object(forKey: "NSInverseRelationship"))
    #expect(try inverse.string(forKey: "NSPropertyName") == "author")
    // Book.author's destination is Writer: its inverse is Writer's own `books`, not Author's copy.
    let back = try #require(try inverse.object(forKey: "NSInverseRelationship"))
    #expect(try back.object(forKey: "NSEntity")?.string(forKey: "NSEntityName") == "Writer")
    #expect(try back.string(forKey: "NSPropertyName") == "books" && back.uid != books.uid)
    #expect(try books.value(forKey: "NSMaxCount").integerValue == 0)
  }

  @Test func derivationsOfEveryFormRenderBackToTheirText() throws {
    for text in [
      "pages.@count", "pages.@sum", "author.books.@max", "title", "author.name", "now()",
      "uppercase:(title)", "SELF", "canonical:(author.name)",
    ] {
      let model = try ObjectModel(
        name: "D",
        entities: [
          EntityDescription(
            name: "E",
            attributes: [
              AttributeDescription(
                name: "d", type: .string, isDerived: true, derivationExpression: text)
            ])
        ])
      let loaded = try Self.reloaded(model)
      #expect(loaded.entities[0].attributes[0].derivationExpression == text)
    }
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
  func pythonsZlibAndPlistlibDecodeTheCache() throws {
    let directory = try TemporaryDirectory()
    let path = directory.path("cache.bin").path
    try Data(CompiledModelWriter.modelCache(try Self.everything())).write(
      to: URL(fileURLWithPath: path))
    let result = try Subprocess.python(
      """
      import plistlib, sys, zlib
      p = plistlib.loads(zlib.decompress(open(sys.argv[1], 'rb').read(), -15))
      o = p['$objects']
      assert o[0] == '$null' and p['$archiver'] == 'NSKeyedArchiver'
      root = o[p['$top']['root'].data]
      known = o[root['NSEntities'].data]
      names = [o[o[u.data]['NSEntityName'].data] for u in o[known['values'].data]['NS.objects']]
      print(o[root['$class'].data]['$classname'], ' '.join(names))
      """, [path])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        == "NSManagedObjectModel Author Book Everything GraphicNovel Page Tag Writer")
  }
}
