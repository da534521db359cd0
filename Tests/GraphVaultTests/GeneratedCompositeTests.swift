import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// The classes `graphvault generate` writes for a model with composite attributes (what
/// SwiftData makes of a Codable struct), kept in `GeneratedCafe/` and compiled into these
/// tests: a struct per composite, nested ones nested, read and written element by element
/// in the columns Core Data flattens them into, checked with Python's sqlite3.
@Suite("Generated classes with composite attributes")
struct GeneratedCompositeTests {
  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("GeneratedCafe")
  static let modelPath = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Cafe.xcdatamodeld"
  ).path

  /// A new store of the Cafe model in `directory`, and a context on it with the generated
  /// classes registered.
  static func newStore(in directory: TemporaryDirectory) throws -> (
    path: String, model: ObjectModel, context: ObjectContext
  ) {
    let path = directory.path("Cafe.sqlite").path
    let model = try ModelSource.model(at: Self.modelPath)
    try StoreCreator.create(at: path, model: model)
    let context = try ObjectContext(storePath: path, model: model)
    try CafeEntityClasses.register(on: context)
    return (path, model, context)
  }

  @Test func theCheckedInClassesAreWhatTheGeneratorWrites() throws {
    try GeneratedClassesTests.expect(
      ClassGenerator.files(for: ModelSource.model(at: Self.modelPath)), keptIn: Self.folder)
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3 (sqlite3)"))
  func aCompositeIsWrittenAndReadAsItsStructElementByElement() throws {
    let directory = try TemporaryDirectory()
    let (path, model, context) = try Self.newStore(in: directory)
    let recipe = try context.insert(Recipe.self)
    recipe.title = "Pisco sour"
    #expect(recipe.author == nil)
    recipe.author = Recipe.AuthorValue(
      origin: Recipe.AuthorValue.OriginValue(city: "Lima"), person: "Ana", year: 1990)
    recipe.serving = Recipe.ServingValue(volume: 0.2)
    let step = try context.insert(Step.self)
    step.text = "shake"
    recipe.steps = [step]
    try context.save()
    // One column per element, named after the element alone, as Core Data flattens them.
    #expect(
      try sqlRows(
        path,
        "SELECT ZTITLE, ZPERSON, ZYEAR, ZCITY, ZCOUNTRY, ZGLASS, ZVOLUME FROM ZRECIPE"
      ) == ["Pisco sour|Ana|1990|Lima|None|None|0.2"])

    let reread = try ObjectContext(storePath: path, model: model)
    try CafeEntityClasses.register(on: reread)
    let saved = try #require(try reread.fetch(Recipe.self, FetchRequest(entity: "Recipe")).first)
    #expect(saved.author?.person == "Ana")
    #expect(saved.author?.origin == Recipe.AuthorValue.OriginValue(city: "Lima"))
    #expect(saved.serving == Recipe.ServingValue(glass: nil, volume: 0.2))
    #expect(saved.steps.map(\.text) == ["shake"])
    // A composite set to nil empties each of its columns; a nested one set alone keeps the
    // others.
    saved.author = nil
    saved.serving.glass = "coupe"
    try reread.save()
    #expect(
      try sqlRows(path, "SELECT ZPERSON, ZYEAR, ZCITY, ZGLASS, ZVOLUME FROM ZRECIPE")
        == ["None|None|None|coupe|0.2"])
  }

  @Test func aRequiredCompositeReadBeforeItIsSetIsEmptyAndTheSaveNamesIt() throws {
    let directory = try TemporaryDirectory()
    let (_, _, context) = try Self.newStore(in: directory)
    let recipe = try context.insert(Recipe.self)
    recipe.title = "Pisco sour"
    // Required, with no element set (its volume's default of 0 taken away): the required
    // element reads as 0, the optional one as nil, rather than stopping the program.
    try recipe.setValue(nil as AttributeValue?, for: "serving.volume")
    #expect(recipe.serving == Recipe.ServingValue(glass: nil, volume: 0))
    #expect(try recipe.value(for: "serving") == nil)
    let error = #expect(throws: StoreError.self) { try context.save() }
    #expect(error?.description.contains("Recipe.serving.volume is required") == true, "\(error!)")
    // Set element by element from the empty value, as an app writes it.
    recipe.serving.volume = 0.2
    try context.save()
  }
}
