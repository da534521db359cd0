import ObjectModel
import Testing

@Suite("Models built in code")
struct ModelValidationTests {
  func error(_ entities: [EntityDescription]) -> ModelError? {
    do {
      _ = try ObjectModel(name: "Broken", entities: entities)
      return nil
    } catch {
      return error
    }
  }

  @Test func aValidModelBuildsWithEntitiesAndPropertiesSortedByName() throws {
    let model = try SampleModels.library()
    #expect(
      model.entities.map(\.name) == ["Author", "Book", "GraphicNovel", "Page", "Tag", "Writer"])
    #expect(model.entity(named: "Book")?.attributes.first?.name == "color")
  }

  @Test func entityNumbersFollowCoreDatasPreOrderOfRootsByName() throws {
    let numbers = try SampleModels.library().entityNumbers
    #expect(
      numbers == ["Book": 1, "GraphicNovel": 2, "Page": 3, "Tag": 4, "Writer": 5, "Author": 6])
  }

  @Test func inheritedPropertiesComeFromTheAncestorsFirst() throws {
    let model = try SampleModels.library()
    #expect(model.attributes(of: "Author").map(\.name) == ["alias", "age"])
    #expect(model.relationships(of: "Author").map(\.name) == ["books"])
    #expect(model.root(of: "GraphicNovel")?.name == "Book")
    #expect(model.hierarchy(from: "Book").map(\.name) == ["Book", "GraphicNovel"])
  }

  @Test func aDuplicateEntityNameIsNamed() {
    let e = error([EntityDescription(name: "A"), EntityDescription(name: "A")])
    #expect(e?.kind == .duplicateName)
    #expect(e?.entity == "A")
  }

  @Test func aPropertyRepeatingAnInheritedOneIsNamed() {
    let e = error([
      EntityDescription(name: "Base", attributes: [.init(name: "x", type: .string)]),
      EntityDescription(
        name: "Sub", parent: "Base", attributes: [.init(name: "x", type: .integer16)]),
    ])
    #expect(e?.kind == .duplicateName)
    #expect(e?.entity == "Sub")
    #expect(e?.property == "x")
  }

  @Test func anUnknownParentOrDestinationIsNamed() {
    #expect(error([EntityDescription(name: "A", parent: "Nope")])?.kind == .unknownReference)
    let e = error([
      EntityDescription(
        name: "A", relationships: [.init(name: "b", destination: "Missing", maxCount: 1)])
    ])
    #expect(e?.kind == .unknownReference)
    #expect(e?.description.contains("A.b") == true)
    #expect(e?.description.contains("Missing") == true)
  }

  @Test func anInheritanceCycleIsRefused() {
    let e = error([
      EntityDescription(name: "A", parent: "B"), EntityDescription(name: "B", parent: "A"),
    ])
    #expect(e?.kind == .inheritanceCycle)
  }

  @Test func inversesThatDoNotPointBackAreRefusedNamingBothEnds() {
    let e = error([
      EntityDescription(
        name: "A", relationships: [.init(name: "b", destination: "B", inverse: "a", maxCount: 1)]),
      EntityDescription(
        name: "B",
        relationships: [
          .init(name: "a", destination: "A", inverse: "other", maxCount: 1),
          .init(name: "other", destination: "A", maxCount: 1),
        ]),
    ])
    #expect(e?.kind == .inverseMismatch)
    #expect(e?.entity == "A")
    #expect(e?.property == "b")
    #expect(
      error([
        EntityDescription(
          name: "A",
          relationships: [.init(name: "b", destination: "A", inverse: "nothere", maxCount: 1)])
      ])?.kind == .unknownReference)
  }

  @Test func invalidCountsAreRefused() {
    let e = error([
      EntityDescription(
        name: "A", relationships: [.init(name: "self", destination: "A", minCount: 5, maxCount: 2)])
    ])
    #expect(e?.kind == .invalidCount)
    #expect(e?.property == "self")
  }

  @Test func constraintsAndIndexesMustNameExistingProperties() {
    #expect(
      error([EntityDescription(name: "A", uniquenessConstraints: [["ghost"]])])?.property == "ghost"
    )
    #expect(
      error([
        EntityDescription(
          name: "A", fetchIndexes: [FetchIndex(name: "i", elements: [.init(property: "ghost")])])
      ])?
      .kind == .unknownReference)
  }

  @Test func relationshipCountsFollowCoreDatasRule() {
    #expect(!RelationshipDescription(name: "r", destination: "X", maxCount: 1).isToMany)
    #expect(RelationshipDescription(name: "r", destination: "X", maxCount: 0).isToMany)
    #expect(RelationshipDescription(name: "r", destination: "X", maxCount: 5).isToMany)
  }
}

@Suite("The model builder")
struct ModelBuilderTests {
  @Test func relateAddsBothEndsSoTheyAgree() throws {
    let builder = ModelBuilder(name: "Pets")
    try builder.addEntity(EntityDescription(name: "Owner"))
    try builder.addEntity(EntityDescription(name: "Pet"))
    try builder.relate(
      "Owner", RelationshipDescription(name: "pets", destination: "Pet", maxCount: 0),
      inverse: RelationshipDescription(name: "owner", destination: "Owner", maxCount: 1))
    let model = try builder.build()
    #expect(model.entity(named: "Pet")?.relationship(named: "owner")?.inverse == "pets")
    #expect(model.entity(named: "Owner")?.relationship(named: "pets")?.inverse == "owner")
  }

  @Test func changingABuiltModelIsAnErrorNotACrash() throws {
    let builder = ModelBuilder(name: "Frozen")
    try builder.addEntity(EntityDescription(name: "A"))
    let model = try builder.build()
    #expect(builder.isFrozen)
    do {
      try builder.addEntity(EntityDescription(name: "B"))
      Issue.record("a frozen builder accepted a change")
    } catch {
      #expect(error.kind == .frozen)
      #expect(error.entity == "B")
    }
    #expect(throws: ModelError.self) { try builder.modifyEntity("A") { $0.isAbstract = true } }
    #expect(try builder.build() == model)
    // The next version starts from the model, in a new builder.
    let next = ModelBuilder(model: model, versionName: "Frozen 2")
    try next.addEntity(EntityDescription(name: "B"))
    #expect(try next.build().entities.count == 2)
  }

  @Test func aBuilderReportsValidationErrors() throws {
    let builder = ModelBuilder(name: "Bad")
    try builder.addEntity(EntityDescription(name: "A", parent: "Ghost"))
    #expect(throws: ModelError.self) { try builder.build() }
    #expect(!builder.isFrozen)
  }
}
