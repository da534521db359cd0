import Foundation
import GraphVault
import Migration
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// Models that are not versions of one set, as a SwiftData app has them (its model in Swift
/// code, each store's in `Z_MODELCACHE`): equal entity version hashes are one model whatever
/// the names, and an archive or store at another model reaches the app's by one hop inferred
/// from its own model, as Core Data's lightweight migration infers it. What lands in the
/// stores is read with Python's sqlite3.
@Suite(
  "Migrating between models that are not versions of one set",
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
struct UnversionedMigrationTests {
  let directory: TemporaryDirectory

  init() throws { directory = try TemporaryDirectory() }

  /// The app's first model: a composite author, a to-many `spec` and a to-one `garnish`
  /// without inverses.
  static func first(name: String = "Bar") throws -> ObjectModel {
    try ObjectModel(
      name: name,
      entities: [
        EntityDescription(
          name: "Cocktail",
          attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(
              composite: "author",
              elements: [
                AttributeDescription(name: "person", type: .string),
                AttributeDescription(name: "year", type: .integer16),
              ]),
          ],
          relationships: [
            RelationshipDescription(
              name: "spec", destination: "Ingredient", isOrdered: true, deleteRule: .cascade),
            RelationshipDescription(name: "garnish", destination: "Ingredient", maxCount: 1),
          ]),
        EntityDescription(
          name: "Ingredient", attributes: [AttributeDescription(name: "name", type: .string)]),
      ])
  }

  /// The app's model months later: a required `favorite` with a default, an element added to
  /// the composite, and `spec` given an inverse (`Ingredient.cocktail`).
  static func later(extra: [AttributeDescription] = []) throws -> ObjectModel {
    try ObjectModel(
      name: "Bar",
      entities: [
        EntityDescription(
          name: "Cocktail",
          attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(
              name: "favorite", type: .boolean, isOptional: false, defaultValue: .bool(false)),
            AttributeDescription(
              composite: "author",
              elements: [
                AttributeDescription(name: "person", type: .string),
                AttributeDescription(name: "year", type: .integer16),
                AttributeDescription(name: "country", type: .string),
              ]),
          ] + extra,
          relationships: [
            RelationshipDescription(
              name: "spec", destination: "Ingredient", inverse: "cocktail", isOrdered: true,
              deleteRule: .cascade),
            RelationshipDescription(name: "garnish", destination: "Ingredient", maxCount: 1),
          ]),
        EntityDescription(
          name: "Ingredient", attributes: [AttributeDescription(name: "name", type: .string)],
          relationships: [
            RelationshipDescription(
              name: "cocktail", destination: "Cocktail", inverse: "spec", maxCount: 1)
          ]),
      ])
  }

  /// A store of `model` at `name` holding a Martini (gin, vermouth; lemon as its garnish) by
  /// Harry, 1911, and a Gimlet with lime.
  func store(_ name: String, model: ObjectModel) throws -> String {
    let path = directory.path(name).path
    try StoreCreator.create(at: path, model: model)
    let context = try ObjectContext(storePath: path, model: model)
    let martini = try context.insert("Cocktail")
    try martini.setValue(.string("Martini"), for: "name")
    try martini.setValue(
      .composite(["person": .string("Harry"), "year": .integer(1911)]), for: "author")
    let gimlet = try context.insert("Cocktail")
    try gimlet.setValue(.string("Gimlet"), for: "name")
    var ingredients: [String: ManagedObject] = [:]
    for ingredient in ["gin", "vermouth", "lemon", "lime"] {
      let object = try context.insert("Ingredient")
      try object.setValue(.string(ingredient), for: "name")
      ingredients[ingredient] = object
    }
    try martini.setObjects([ingredients["gin"]!, ingredients["vermouth"]!], for: "spec")
    try martini.setObject(ingredients["lemon"]!, for: "garnish")
    try gimlet.setObjects([ingredients["lime"]!], for: "spec")
    try context.save()
    return path
  }

  /// An empty store of `model`: what the app makes of its newer model.
  func emptyStore(_ name: String, model: ObjectModel) throws -> String {
    let path = directory.path(name).path
    try StoreCreator.create(at: path, model: model)
    return path
  }

  func backup(_ store: String) throws -> String {
    var options = BackupService.Options()
    options.output = Location(
      path: directory.path(URL(fileURLWithPath: store).lastPathComponent + ".gvault").path)
    return try BackupService.backup(storePath: store, options: options).archive
  }

  func restore(_ archive: String, model: String, to name: String) throws(VaultError)
    -> RestoreResult
  {
    var options = RestoreOptions()
    options.modelPath = model
    return try RestoreService.restore(
      archive: Location(path: archive), to: directory.path(name).path, options: options)
  }

  @Test func anArchiveRestoresIntoALaterUnversionedModelByAnInferredHop() throws {
    let archive = try backup(try store("Bar.sqlite", model: Self.first()))
    let app = try emptyStore("App.sqlite", model: Self.later())
    let result = try restore(archive, model: app, to: "restored.sqlite")
    #expect(result.migration?.from == "the archive's model")
    let restored = directory.path("restored.sqlite").path
    // Every value, the new required attribute's default, the composite's elements.
    #expect(
      try sqlRows(
        restored,
        "SELECT ZNAME, ZFAVORITE, ZPERSON, ZYEAR, ZCOUNTRY FROM ZCOCKTAIL ORDER BY ZNAME")
        == ["Gimlet|0|None|None|None", "Martini|0|Harry|1911|None"])
    // The to-many's links, kept on the members' rows before, are now the inverse's keys, in
    // their order; the to-one without an inverse stays.
    #expect(
      try sqlRows(
        restored,
        """
        SELECT c.ZNAME, i.ZNAME FROM ZINGREDIENT i JOIN ZCOCKTAIL c ON i.ZCOCKTAIL = c.Z_PK
        ORDER BY c.ZNAME, i.Z_FOK_COCKTAIL
        """) == ["Gimlet|lime", "Martini|gin", "Martini|vermouth"])
    #expect(
      try sqlRows(
        restored,
        "SELECT c.ZNAME, i.ZNAME FROM ZCOCKTAIL c JOIN ZINGREDIENT i ON c.ZGARNISH = i.Z_PK")
        == ["Martini|lemon"])
  }

  @Test func linksMoveBackToTheMembersRowsWhenTheInverseIsRemoved() throws {
    let archive = try backup(try store("Later.sqlite", model: Self.later()))
    let app = try emptyStore("App.sqlite", model: Self.first())
    _ = try restore(archive, model: app, to: "restored.sqlite")
    let restored = directory.path("restored.sqlite").path
    #expect(
      try sqlRows(
        restored,
        """
        SELECT c.ZNAME, i.ZNAME FROM ZINGREDIENT i JOIN ZCOCKTAIL c ON i.Z1SPEC = c.Z_PK
        ORDER BY c.ZNAME, i.Z_FOK_1SPEC
        """) == ["Gimlet|lime", "Martini|gin", "Martini|vermouth"])
    let context = try ObjectContext(storePath: restored, model: Self.first())
    let martini = try #require(
      try context.fetch(
        FetchRequest(
          entity: "Cocktail", predicate: ObjectStore.Predicate(format: "name == 'Martini'"))
      ).first)
    #expect(
      try martini.objects(for: "spec").map { try $0.value(for: "name") } == [
        AttributeValue.string("gin"), .string("vermouth"),
      ])
  }

  @Test func aHopCoreDataCannotInferIsRefusedNamingTheAttribute() throws {
    let archive = try backup(try store("Bar.sqlite", model: Self.first()))
    let app = try emptyStore(
      "App.sqlite",
      model: Self.later(extra: [
        AttributeDescription(name: "strength", type: .double, isOptional: false)
      ]))
    #expect {
      try restore(archive, model: app, to: "restored.sqlite")
    } throws: { error in
      guard let error = error as? VaultError else { return false }
      return error.kind == .modelUnavailable && error.detail.contains("Cocktail.strength")
        && error.detail.contains("the archive's model")
    }
    #expect(!FileManager.default.fileExists(atPath: directory.path("restored.sqlite").path))
  }

  @Test func equalVersionHashesAreOneModelWhateverItAndItsFilesAreCalled() throws {
    let archive = try backup(try store("Bar.sqlite", model: Self.first()))
    let renamed = try Self.first(name: "Tavern").withVersionName("2024 spring")
    let app = try emptyStore("Tavern-2024.sqlite", model: renamed)
    let result = try restore(archive, model: app, to: "restored.sqlite")
    #expect(result.migration == nil)

    // Two stores of one model under other names compare object by object, with no migration.
    let other = try store("Tavern.sqlite", model: renamed)
    let summary = try DiffService.diff(
      old: Location(path: directory.path("Bar.sqlite").path), new: Location(path: other),
      options: DiffService.Options()
    ) { _ in }
    #expect(summary.migrated == nil)
    #expect(summary.equal)
    #expect(summary.entities["Cocktail"]?.unchanged == 2)
  }

  @Test func aStoreMigratesInPlaceFromItsCachedModelToALaterOne() throws {
    let path = try store("Bar.sqlite", model: Self.first())
    let app = try emptyStore("App.sqlite", model: Self.later())
    var dryRun = MigrateService.Options(modelPath: app)
    dryRun.dryRun = true
    let dry = try MigrateService.migrate(store: path, options: dryRun)
    #expect(dry.from == "the model of Bar.sqlite")
    #expect(
      try sqlRows(
        path, "SELECT COUNT(*) FROM pragma_table_info('ZCOCKTAIL') WHERE name = 'ZFAVORITE'")
        == ["0"])
    let result = try MigrateService.migrate(store: path, options: .init(modelPath: app))
    #expect(result.migration != nil)
    #expect(
      try sqlRows(path, "SELECT ZNAME, ZFAVORITE FROM ZCOCKTAIL ORDER BY ZNAME") == [
        "Gimlet|0", "Martini|0",
      ])
    // Now at the app's model: a second run has nothing to do.
    let again = try MigrateService.migrate(store: path, options: .init(modelPath: app))
    #expect(again.migration == nil)
  }

  /// The app's model after its struct was reworked: `author` renamed `creator`, its `person`
  /// renamed `name` (a clash with the entity's own `name`: column `ZNAME1`), `year` removed,
  /// a nested `origin` added.
  static func reworked(entity: String = "Cocktail") throws -> ObjectModel {
    try ObjectModel(
      name: "Bar",
      entities: [
        EntityDescription(
          name: entity, renamingIdentifier: entity == "Cocktail" ? nil : "Cocktail",
          attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(
              composite: "creator",
              elements: [
                AttributeDescription(name: "name", type: .string, renamingIdentifier: "person"),
                AttributeDescription(
                  composite: "origin",
                  elements: [AttributeDescription(name: "city", type: .string)]),
              ], renamingIdentifier: "author"),
          ],
          relationships: [
            RelationshipDescription(
              name: "spec", destination: "Ingredient", isOrdered: true, deleteRule: .cascade),
            RelationshipDescription(name: "garnish", destination: "Ingredient", maxCount: 1),
          ]),
        EntityDescription(
          name: "Ingredient", attributes: [AttributeDescription(name: "name", type: .string)]),
      ])
  }

  @Test func compositeElementsAreRenamedRemovedAndAddedAsTheModelSays() throws {
    let archive = try backup(try store("Bar.sqlite", model: Self.first()))
    let app = try emptyStore("App.sqlite", model: Self.reworked())
    _ = try restore(archive, model: app, to: "restored.sqlite")
    let restored = directory.path("restored.sqlite").path
    // Harry stays, under the renamed element's column; the year is gone; the new nested
    // element is empty.
    #expect(
      try sqlRows(restored, "SELECT ZNAME, ZNAME1, ZCITY FROM ZCOCKTAIL ORDER BY ZNAME")
        == ["Gimlet|None|None", "Martini|Harry|None"])
    let columns = try sqlRows(restored, "SELECT name FROM pragma_table_info('ZCOCKTAIL')")
    #expect(!columns.contains("ZYEAR") && !columns.contains("ZPERSON"), "\(columns)")
    // The object reads it by its new key paths.
    let context = try ObjectContext(storePath: restored, model: Self.reworked())
    let martini = try #require(
      try context.fetch(
        FetchRequest(entity: "Cocktail", predicate: Predicate(format: "creator.name == 'Harry'"))
      ).first)
    #expect(try martini.value(for: "name") == .string("Martini"))
    #expect(try martini.value(for: "creator") == .composite(["name": .string("Harry")]))
  }

  @Test func findFollowsAnObjectThroughAMigrationThatRenamedItsEntityAndProperties() throws {
    let folder = directory.path("nightly").path + "/"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    let bar = try store("Bar.sqlite", model: Self.first())
    func backup(at time: String) throws {
      var options = BackupService.Options()
      options.output = Location(path: folder)
      options.now = ISO8601DateFormatter().date(from: time)
      _ = try BackupService.backup(storePath: bar, options: options)
    }
    try backup(at: "2026-11-20T03:00:00Z")
    // The app moves to a model where Cocktail is Drink and author.person is creator.name.
    let app = try emptyStore("App.sqlite", model: Self.reworked(entity: "Drink"))
    _ = try MigrateService.migrate(store: bar, options: .init(modelPath: app))
    let context = try ObjectContext(storePath: bar, model: Self.reworked(entity: "Drink"))
    let martini = try #require(
      try context.fetch(
        FetchRequest(entity: "Drink", predicate: Predicate(format: "name == 'Martini'"))
      )
      .first)
    try martini.setValue(.string("Harry Craddock"), for: "creator.name")
    try context.save()
    try backup(at: "2026-11-21T03:00:00Z")

    var options = FindService.Options(entity: "Drink")
    options.history = "p\(martini.primaryKey)"
    let results = try FindService.find(in: Location(path: folder), options: options)
    #expect(results.map(\.error) == [nil, nil])
    // Newest first; the older archive's Cocktail read as a Drink, its author.person as
    // creator.name.
    let found = results.map { $0.objects.first }
    #expect(found.map { $0?.entity } == ["Drink", "Drink"])
    #expect(found.map { $0?.values["creator.name"] } == [#""Harry Craddock""#, #""Harry""#])
    #expect(found[1]?.values["author.person"] == nil)
    #expect(found[1]?.values["author.year"] == "1911")
  }
}
