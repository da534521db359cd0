import ObjectModel
import PropertyList
import TestSupport
import Testing

@Suite("Model descriptors and fingerprints")
struct ModelDescriptorTests {
  @Test func aModelRoundTripsExactlyThroughItsDescriptor() throws {
    let model = try SampleModels.library().withVersionHashes([
      "Book": Array(repeating: 7, count: 32)
    ])
    let bytes = ModelDescriptor.encode(model).binaryPropertyList()
    let decoded = try ModelDescriptor.decode(PropertyListValue(binaryPropertyList: bytes))
    #expect(decoded == model)
    let xml = try XMLPropertyList.encode(ModelDescriptor.encode(model))
    #expect(try ModelDescriptor.decode(XMLPropertyList.decode(xml)) == model)
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3"))
  func plistlibReadsADescriptor() throws {
    let bytes = ModelDescriptor.encode(try SampleModels.library()).binaryPropertyList()
    let result = try Subprocess.python(
      "import plistlib,sys; d=plistlib.loads(sys.stdin.buffer.read()); print(sorted(e['name'] for e in d['entities']))",
      input: bytes)
    #expect(result.stdout.contains("['Author', 'Book', 'GraphicNovel', 'Page', 'Tag', 'Writer']"))
  }

  @Test func aMalformedDescriptorNamesTheKey() {
    let bad: PropertyListValue = [
      "format": 1, "name": "X",
      "entities": [
        ["name": "A", "attributes": [["name": "a", "type": "Quaternion"]], "relationships": []]
      ],
    ]
    do {
      _ = try ModelDescriptor.decode(bad)
      Issue.record("decoded")
    } catch {
      #expect(error.description.contains("Quaternion"))
    }
    #expect(throws: ModelError.self) {
      try ModelDescriptor.decode(["format": 99, "name": "X", "entities": []])
    }
  }

  @Test func theFingerprintIgnoresNamesAndHashesButNotStructure() throws {
    let model = try SampleModels.library()
    let fingerprint = model.fingerprint
    #expect(fingerprint.count == 64)
    let renamed = try ObjectModel(
      name: "Other", versionName: "X", versionIdentifiers: [],
      entities: SampleModels.libraryEntities().reversed())
    #expect(renamed.fingerprint == fingerprint)
    #expect(model.withVersionHashes(["Book": [1, 2, 3]]).fingerprint == fingerprint)
    var entities = SampleModels.libraryEntities()
    entities[0].attributes[0].isOptional = true
    #expect(try ObjectModel(name: "Library", entities: entities).fingerprint != fingerprint)
  }
}
