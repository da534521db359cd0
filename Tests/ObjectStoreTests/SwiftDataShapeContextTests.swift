import Foundation
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// The object context on the parts of Core Data that SwiftData uses: a composite attribute
/// read and written whole or element by element, and to-many relationships without an inverse
/// (ordered or not) changed and saved; what lands in the store is read with Python's sqlite3.
@Suite(
  "SwiftData-shaped objects in the context",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct SwiftDataShapeContextTests {
  let directory: TemporaryDirectory
  let path: String
  let model: ObjectModel

  static func model() throws -> ObjectModel {
    try ObjectModel(
      name: "Bar",
      entities: [
        EntityDescription(
          name: "Cocktail",
          attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(
              composite: "author",
              elements: [
                AttributeDescription(name: "person", type: .string),
                AttributeDescription(
                  composite: "origin",
                  elements: [AttributeDescription(name: "city", type: .string)]),
              ]),
          ],
          relationships: [
            RelationshipDescription(
              name: "spec", destination: "Ingredient", deleteRule: .cascade),
            RelationshipDescription(name: "steps", destination: "Step", isOrdered: true),
          ]),
        EntityDescription(
          name: "Ingredient", attributes: [AttributeDescription(name: "name", type: .string)]),
        EntityDescription(
          name: "Step", attributes: [AttributeDescription(name: "text", type: .string)]),
      ])
  }

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Bar.sqlite").path
    model = try Self.model()
    try StoreCreator.create(at: path, model: model)
  }

  func cocktail(_ name: String, in context: ObjectContext) throws -> ManagedObject {
    try #require(
      try context.fetch(
        FetchRequest(
          entity: "Cocktail", predicate: ObjectStore.Predicate(format: "name == %@", name))
      ).first)
  }

  @Test func aBatchInsertWritesACompositeWholeOrByElementAsASaveDoes() throws {
    let context = try ObjectContext(storePath: path, model: model)
    try context.execute(
      BatchInsertRequest(
        entity: "Cocktail",
        objects: [
          [
            "name": .string("Martini"),
            "author": .composite([
              "person": .string("Harry"), "origin": .composite(["city": .string("Paris")]),
            ]),
          ],
          ["name": .string("Negroni"), "author.origin.city": .string("Florence")],
        ]))
    #expect(
      try sqlRows(path, "SELECT ZNAME, ZPERSON, ZCITY FROM ZCOCKTAIL ORDER BY Z_PK") == [
        "Martini|Harry|Paris", "Negroni|None|Florence",
      ])
    #expect(
      try cocktail("Martini", in: ObjectContext(storePath: path, model: model))
        .value(for: "author.origin.city") == .string("Paris"))
    // A composite's unknown element, and a relationship (inverse or not), are refused.
    for row: [String: AttributeValue] in [
      ["author": .composite(["glass": .string("coupe")])], ["steps": .integer(1)],
    ] {
      #expect(throws: StoreError.self) {
        try context.execute(BatchInsertRequest(entity: "Cocktail", objects: [row]))
      }
    }
    #expect(try sqlRows(path, "SELECT count(*) FROM ZCOCKTAIL") == ["2"])
  }

  @Test func aCompositeIsReadAndWrittenAsADictionaryOrElementByElement() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let martini = try context.insert("Cocktail")
    try martini.setValue(.string("Martini"), for: "name")
    try martini.setValue(
      .composite(["person": .string("Harry"), "origin": .composite(["city": .string("Paris")])]),
      for: "author")
    try context.save()
    #expect(
      try sqlRows(path, "SELECT ZNAME, ZPERSON, ZCITY FROM ZCOCKTAIL") == ["Martini|Harry|Paris"])

    let again = try ObjectContext(storePath: path, model: model)
    let read = try cocktail("Martini", in: again)
    #expect(try read.value(for: "author.origin.city") == .string("Paris"))
    #expect(
      try read.value(for: "author")
        == .composite([
          "person": .string("Harry"), "origin": .composite(["city": .string("Paris")]),
        ]))
    try read.setValue(.string("Harry M."), for: "author.person")
    #expect(try read.changedValues().keys.sorted() == ["author.person"])
    try again.save()
    #expect(try sqlRows(path, "SELECT ZPERSON, ZCITY FROM ZCOCKTAIL") == ["Harry M.|Paris"])
    // nil empties every element; an element the composite lacks is refused, naming it.
    #expect(throws: StoreError.self) {
      try read.setValue(.composite(["nickname": .string("H")]), for: "author")
    }
    try read.setValue(nil, for: "author")
    #expect(try read.value(for: "author") == nil)
    try again.save()
    #expect(try sqlRows(path, "SELECT ZPERSON, ZCITY FROM ZCOCKTAIL") == ["None|None"])
    // A predicate on an element, in SQL and in memory alike.
    try read.setValue(.string("Sam"), for: "author.person")
    #expect(
      try again.fetch(
        FetchRequest(
          entity: "Cocktail", predicate: ObjectStore.Predicate(format: "author.person == 'Sam'"))
      ).count == 1)
  }

  @Test func aToManyWithoutAnInverseIsKeptOnItsMembersRows() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let martini = try context.insert("Cocktail")
    try martini.setValue(.string("Martini"), for: "name")
    let gimlet = try context.insert("Cocktail")
    try gimlet.setValue(.string("Gimlet"), for: "name")
    var ingredients: [ManagedObject] = []
    for name in ["gin", "vermouth", "lime"] {
      let ingredient = try context.insert("Ingredient")
      try ingredient.setValue(.string(name), for: "name")
      ingredients.append(ingredient)
    }
    try martini.setObjects([ingredients[0], ingredients[1]], for: "spec")
    try gimlet.add(ingredients[2], to: "spec")
    var steps: [ManagedObject] = []
    for text in ["stir", "strain", "garnish"] {
      let step = try context.insert("Step")
      try step.setValue(.string(text), for: "text")
      steps.append(step)
    }
    try martini.setObjects([steps[2], steps[0], steps[1]], for: "steps")
    try context.save()
    let owners =
      "SELECT i.ZNAME, c.ZNAME FROM ZINGREDIENT i LEFT JOIN ZCOCKTAIL c ON i.Z1SPEC = c.Z_PK ORDER BY i.ZNAME"
    #expect(try sqlRows(path, owners) == ["gin|Martini", "lime|Gimlet", "vermouth|Martini"])
    #expect(
      try sqlRows(path, "SELECT ZTEXT FROM ZSTEP WHERE Z1STEPS IS NOT NULL ORDER BY Z_FOK_1STEPS")
        == ["garnish", "stir", "strain"])

    // Read back in another context, then moved: a member has one owner.
    let again = try ObjectContext(storePath: path, model: model)
    let martini2 = try cocktail("Martini", in: again)
    let gimlet2 = try cocktail("Gimlet", in: again)
    #expect(
      try martini2.objects(for: "spec").map { try $0.value(for: "name") } == [
        .string("gin"), .string("vermouth"),
      ])
    #expect(
      try martini2.objects(for: "steps").map { try $0.value(for: "text") } == [
        .string("garnish"), .string("stir"), .string("strain"),
      ])
    let gin = try martini2.objects(for: "spec")[0]
    try gimlet2.add(gin, to: "spec")
    #expect(try martini2.objects(for: "spec").count == 1)
    let vermouth = try martini2.objects(for: "spec")[0]
    try martini2.remove(vermouth, from: "spec")
    try again.save()
    #expect(try sqlRows(path, owners) == ["gin|Gimlet", "lime|Gimlet", "vermouth|None"])
    // Cascade follows it: deleting the Gimlet deletes its spec.
    try again.delete(gimlet2)
    try again.save()
    #expect(try sqlRows(path, "SELECT ZNAME FROM ZINGREDIENT") == ["vermouth"])
  }

  @Test func compositeAndInverseLessChangesUndoAndRedoAcrossASave() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let martini = try context.insert("Cocktail")
    try martini.setValue(.string("Martini"), for: "name")
    try martini.setValue(
      .composite(["person": .string("Harry"), "origin": .composite(["city": .string("Paris")])]),
      for: "author")
    let gin = try context.insert("Ingredient")
    try gin.setValue(.string("gin"), for: "name")
    let stir = try context.insert("Step")
    try stir.setValue(.string("stir"), for: "text")
    try martini.setObjects([gin], for: "spec")
    try martini.setObjects([stir], for: "steps")
    try context.save()

    let undo = ContextUndoManager()
    context.undoManager = undo
    // One group: the whole composite replaced, an element emptied, both to-manys changed.
    undo.beginUndoGrouping()
    try martini.setValue(.composite(["person": .string("Ada")]), for: "author")
    try martini.setValue(nil, for: "author.origin.city")
    let vermouth = try context.insert("Ingredient")
    try vermouth.setValue(.string("vermouth"), for: "name")
    try martini.setObjects([gin, vermouth], for: "spec")
    try martini.setObjects([], for: "steps")
    undo.endUndoGrouping()
    try context.save()
    #expect(
      try sqlRows(path, "SELECT ZPERSON, ZCITY FROM ZCOCKTAIL") == ["Ada|None"])
    #expect(try sqlRows(path, "SELECT count(*) FROM ZINGREDIENT WHERE Z1SPEC IS NOT NULL") == ["2"])

    try undo.undo()
    #expect(
      try martini.value(for: "author")
        == .composite([
          "person": .string("Harry"), "origin": .composite(["city": .string("Paris")]),
        ]))
    try context.save()
    // Back as it was: the inserted member gone, the links on the members' rows restored.
    #expect(try sqlRows(path, "SELECT ZPERSON, ZCITY FROM ZCOCKTAIL") == ["Harry|Paris"])
    #expect(try sqlRows(path, "SELECT ZNAME FROM ZINGREDIENT WHERE Z1SPEC IS NOT NULL") == ["gin"])
    #expect(try sqlRows(path, "SELECT count(*) FROM ZINGREDIENT") == ["1"])
    #expect(try sqlRows(path, "SELECT ZTEXT FROM ZSTEP WHERE Z1STEPS IS NOT NULL") == ["stir"])

    try undo.redo()
    try context.save()
    #expect(try sqlRows(path, "SELECT ZPERSON, ZCITY FROM ZCOCKTAIL") == ["Ada|None"])
    #expect(
      try sqlRows(path, "SELECT ZNAME FROM ZINGREDIENT WHERE Z1SPEC IS NOT NULL ORDER BY ZNAME")
        == ["gin", "vermouth"])
    #expect(try sqlRows(path, "SELECT count(*) FROM ZSTEP WHERE Z1STEPS IS NOT NULL") == ["0"])
  }
}
