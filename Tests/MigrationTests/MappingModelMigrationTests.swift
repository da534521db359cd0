import Foundation
import GraphVault
import Migration
import ObjectModel
import ObjectStore
import SQLite
import Synchronization
import TestSupport
import Testing

/// Migrations that follow the apps' own mapping models, with stages standing in for the custom
/// policy classes those models name, checked against the hand-written JSON mapping files of the
/// same hops (`Fixtures/Mappings`) and against the data itself.
@Suite(
  "Migrating with the app's own mapping models",
  .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote),
  .enabled(if: Subprocess.isInstalled("python3"), "needs python3 for storediff.py"))
struct MappingModelMigrationTests {
  static func restore(
    _ archive: String, to store: String, model: String, version: String,
    mappings: [String] = [], folder: String? = nil, json: String? = nil,
    stages: [MigrationStage] = []
  ) throws -> RestoreResult {
    var options = RestoreOptions()
    options.modelPath = SharedFixtures.file(model).path
    options.modelVersion = version
    options.mappingPaths =
      mappings.map { SharedFixtures.file($0).path }
      + (json.map { [CoreDataMigrationTests.mappings.appendingPathComponent($0).path] } ?? [])
    options.mappingDirectory = folder.map { SharedFixtures.file($0).path }
    options.stages = stages
    return try RestoreService.restore(archive: Location(path: archive), to: store, options: options)
  }

  static func refusal(_ body: () throws -> Void) -> String {
    do {
      try body()
      return "(not refused)"
    } catch let error as VaultError {
      #expect(error.kind == .modelUnavailable)
      return error.description
    } catch {
      return "\(error)"
    }
  }

  // MARK: CoreDataMigration-Example

  static let exampleModel = "CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld"

  /// `Post2ToPost3MigrationPolicy` of the example app, as its mapping model uses it: one
  /// `Color` per post, holding the post's `hexColor`, linked both ways.
  static let post2ToPost3 = MigrationStage(policy: "Post2ToPost3MigrationPolicy") {
    post, emitter in
    var color = try emitter.newObject(of: "Color")
    color.attributes["hex"] = emitter.source?.attributes["hexColor"]
    color.attributes["colorID"] = .string(UUID().uuidString)
    color.relationships["post"] = [MigrationLink(target: post.reference, isMirrored: true)]
    post.relationships["color"] = [MigrationLink(target: color.reference, isMirrored: true)]
    emitter.emit(color)
    return true
  }

  /// A temporary folder with a backup of the example app's first store.
  static func exampleArchive() throws -> (TemporaryDirectory, String) {
    let directory = try TemporaryDirectory()
    let (archive, _) = try CoreDataMigrationTests.archive(
      "CoreDataMigration-Example/Stores/CoreDataMigration_Example_1.sqlite",
      model: Self.exampleModel, in: directory)
    return (directory, archive)
  }

  @Test func theExampleAppsFirstMappingModelRenamesAsTheJSONMappingDoes() throws {
    let (directory, archive) = try Self.exampleArchive()
    let byModel = directory.path("model.sqlite").path
    let byJSON = directory.path("json.sqlite").path
    let result = try Self.restore(
      archive, to: byModel, model: Self.exampleModel, version: "CoreDataMigration_Example 2",
      mappings: ["CoreDataMigration-Example/Mappings/Migration1to2.xcmappingmodel"])
    #expect(
      result.migration?.hops.first?.changes.contains("Post.hexColor: renamed from color") == true)
    _ = try Self.restore(
      archive, to: byJSON, model: Self.exampleModel, version: "CoreDataMigration_Example 2",
      json: "CoreDataMigration_Example.json")
    let diff = try SharedFixtures.storediff([byModel, byJSON])
    #expect(diff.status == 0, "\(diff.stdout)\(diff.stderr)")
    let colors = try CoreDataMigrationTests.rows(
      byModel, "SELECT COUNT(*) FROM ZPOST WHERE ZHEXCOLOR IS NOT NULL")
    #expect(colors == [[.integer(1001)]])
  }

  @Test func aMappingModelNamingAPolicyWithoutAStageIsRefusedNamingIt() throws {
    let (directory, archive) = try Self.exampleArchive()
    let store = directory.path("v3.sqlite").path
    let message = Self.refusal {
      _ = try Self.restore(
        archive, to: store, model: Self.exampleModel, version: "CoreDataMigration_Example 3",
        folder: "CoreDataMigration-Example/Mappings")
    }
    #expect(message.contains("CoreDataMigration_Example.Post2ToPost3MigrationPolicy"), "\(message)")
    #expect(message.contains("entity mappings PostToPost"), "\(message)")
    #expect(!FileManager.default.fileExists(atPath: store))
  }

  @Test func theExampleAppsMappingModelsWithItsPolicyGiveTheRowsOfTheJSONMapping() throws {
    let (directory, archive) = try Self.exampleArchive()
    let byModel = directory.path("model.sqlite").path
    let byJSON = directory.path("json.sqlite").path
    // Through version 3 to 4: the last hop has no mapping model, so it is inferred.
    let result = try Self.restore(
      archive, to: byModel, model: Self.exampleModel, version: "CoreDataMigration_Example 4",
      folder: "CoreDataMigration-Example/Mappings", stages: [Self.post2ToPost3])
    #expect(result.migration?.hops.count == 3)
    #expect(result.migration?.hops[1].objects["Color"]?.created == 1001)
    _ = try Self.restore(
      archive, to: byJSON, model: Self.exampleModel, version: "CoreDataMigration_Example 4",
      json: "CoreDataMigration_Example.json")
    // The colour IDs are generated; everything else is equal.
    let diff = try SharedFixtures.storediff(["--ignore-table", "ZCOLOR", byModel, byJSON])
    #expect(diff.status == 0, "\(diff.stdout)\(diff.stderr)")
    let colors = "SELECT Z_PK, Z_ENT, Z_OPT, ZPOST, ZHEX FROM ZCOLOR ORDER BY Z_PK"
    let ours = try CoreDataMigrationTests.rows(byModel, colors)
    #expect(ours.count == 1001)
    #expect(ours == (try CoreDataMigrationTests.rows(byJSON, colors)))
  }

  /// The README's example: the app's store migrated in place with its mapping models, the
  /// policy done by a stage.
  @Test func theReadmesPolicyStageMigratesTheStoreInPlace() throws {
    let directory = try TemporaryDirectory()
    let store = try SharedFixtures.copyStore(
      "CoreDataMigration-Example/Stores/CoreDataMigration_Example_1.sqlite", into: directory.url)
    let policy = MigrationStage(policy: "Post2ToPost3MigrationPolicy") { post, emitter in
      var color = try emitter.newObject(of: "Color")
      color.attributes["hex"] = emitter.source?.attributes["hexColor"]  // the post as it was
      color.relationships["post"] = [MigrationLink(target: post.reference, isMirrored: true)]
      post.relationships["color"] = [MigrationLink(target: color.reference, isMirrored: true)]
      emitter.emit(color)
      return true  // keep the post
    }
    var options = MigrateService.Options(
      modelPath: SharedFixtures.file(Self.exampleModel).path)
    options.mappingDirectory = SharedFixtures.file("CoreDataMigration-Example/Mappings").path
    options.stages = [policy]
    let result = try MigrateService.migrate(store: store.path, options: options)
    #expect(result.to == "CoreDataMigration_Example 4")
    let linked = try CoreDataMigrationTests.rows(
      store.path,
      "SELECT COUNT(*) FROM ZPOST p JOIN ZCOLOR c ON c.Z_PK = p.ZCOLOR AND c.ZPOST = p.Z_PK WHERE c.ZHEX IS NOT NULL"
    )
    #expect(linked == [[.integer(1001)]])
  }

  // MARK: BookMigration

  static let bookModel = "BookMigration/Model.xcdatamodeld"

  /// The object of `entity` whose `name` is `name`: made and emitted the first time, found in
  /// `memo` after, as the apps' policies find or make authors and makers.
  static func named(
    _ name: String, entity: String, memo: borrowing Mutex<[String: Int64]>,
    emitter: inout MigrationEmitter
  ) throws -> ObjectReference {
    if let known = memo.withLock({ $0[name] }) {
      return ObjectReference(entity: entity, primaryKey: known)
    }
    var object = try emitter.newObject(of: entity)
    object.attributes["name"] = .string(name)
    memo.withLock { $0[name] = object.primaryKey }
    emitter.emit(object)
    return object.reference
  }

  /// What `MHWBookToBookPolicy` does in each hop, as the JSON mapping says it: one `Author`
  /// per distinct `authorName` (Model1 → Model2); one `File` per book and user, carrying the
  /// book's `fileURL` (Model2 → Model3).
  static func bookPolicies() -> [MigrationStage] {
    let authors = Mutex<[String: Int64]>([:])
    let toModel2 = MigrationStage(policy: "MHWBookToBookPolicy", from: "Model1", to: "Model2") {
      book, emitter in
      guard case .string(let name)? = emitter.source?.attributes["authorName"] else { return true }
      let author = try Self.named(name, entity: "Author", memo: authors, emitter: &emitter)
      book.relationships["authors", default: []].append(MigrationLink(target: author))
      return true
    }
    let toModel3 = MigrationStage(policy: "MHWBookToBookPolicy", from: "Model2", to: "Model3") {
      book, emitter in
      for user in emitter.source?.relationships["users"] ?? [] {
        var file = try emitter.newObject(of: "File")
        file.attributes["fileURL"] = emitter.source?.attributes["fileURL"]
        file.relationships["book"] = [MigrationLink(target: book.reference)]
        file.relationships["user"] = [MigrationLink(target: user.target)]
        emitter.emit(file)
      }
      return true
    }
    // The users' policy has nothing left to do once the books' makes the files.
    return [toModel2, toModel3, MigrationStage(policy: "MHWUserToUserPolicy")]
  }

  @Test(arguments: ["Model2", "Model3"])
  func theBookAppsMappingModelsWithItsPoliciesGiveTheStoreOfTheJSONMapping(version: String)
    throws
  {
    let directory = try TemporaryDirectory()
    let (archive, _) = try CoreDataMigrationTests.archive(
      "BookMigration/Stores/Model1.sqlite", model: Self.bookModel, in: directory)
    let byModel = directory.path("model.sqlite").path
    let byJSON = directory.path("json.sqlite").path
    _ = try Self.restore(
      archive, to: byModel, model: Self.bookModel, version: version,
      folder: "BookMigration/Mappings", stages: Self.bookPolicies())
    _ = try Self.restore(
      archive, to: byJSON, model: Self.bookModel, version: version, json: "BookMigration.json")
    let diff = try SharedFixtures.storediff([byModel, byJSON])
    #expect(diff.status == 0, "\(diff.stdout)\(diff.stderr)")
    #expect(
      try CoreDataMigrationTests.rows(byModel, "SELECT COUNT(*) FROM ZAUTHOR") == [[.integer(3)]])
  }

  /// Model1 → Model2 maps `User.books`, whose inverse became the to-many `Book.users`; the
  /// book's own mapping leaves `users` without a value expression. Core Data keeps inverses,
  /// so every book keeps its user from the users' side alone.
  @Test func aLinkMappedAtOneEndOnlyIsKeptAtBoth() throws {
    let directory = try TemporaryDirectory()
    let (archive, source) = try CoreDataMigrationTests.archive(
      "BookMigration/Stores/Model1.sqlite", model: Self.bookModel, in: directory)
    let store = directory.path("v2.sqlite").path
    _ = try Self.restore(
      archive, to: store, model: Self.bookModel, version: "Model2",
      mappings: ["BookMigration/Mappings/Model1_to_Model2.xcmappingmodel"],
      stages: Self.bookPolicies())
    let before = try CoreDataMigrationTests.rows(
      source, "SELECT Z_PK, ZUSER FROM ZBOOK ORDER BY Z_PK")
    let after = try CoreDataMigrationTests.rows(
      store, "SELECT Z_2BOOKS, Z_3USERS FROM Z_2USERS ORDER BY Z_2BOOKS")
    #expect(before.count == 4)
    #expect(after == before)
  }

  // MARK: CoreDataPlus

  static let sampleModel = "CoreDataPlus/SampleModel/SampleModel.xcdatamodeld"

  @Test func theCompiledMappingModelIsRefusedNamingItsPolicyThenPassesWithAStage() throws {
    let directory = try TemporaryDirectory()
    let (archive, source) = try CoreDataMigrationTests.archive(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite", in: directory)
    let store = directory.path("v3.sqlite").path
    let cdm = "CoreDataPlus/SampleModel/Fixtures/V2toV3.cdm"
    let message = Self.refusal {
      _ = try Self.restore(
        archive, to: store, model: Self.sampleModel, version: "SampleModel3", mappings: [cdm])
    }
    #expect(message.contains("REPLACE_AT_RUNTIME.V2to3MakerPolicy"), "\(message)")
    #expect(message.contains("SampleModel2 → SampleModel3"), "\(message)")

    // V2to3MakerPolicy: one Maker per distinct maker name, which each car is created by.
    let makers = Mutex<[String: Int64]>([:])
    let stage = MigrationStage(policy: "V2to3MakerPolicy") { car, emitter in
      guard case .string(let name)? = emitter.source?.attributes["maker"] else { return true }
      let maker = try Self.named(name, entity: "Maker", memo: makers, emitter: &emitter)
      car.relationships["createdBy"] = [MigrationLink(target: maker)]
      return true
    }
    let result = try Self.restore(
      archive, to: store, model: Self.sampleModel, version: "SampleModel3", mappings: [cdm],
      stages: [stage])
    #expect(result.migration?.hops.map(\.to) == ["SampleModel2", "SampleModel3"])
    let cars = try CoreDataMigrationTests.rows(
      source, "SELECT Z_PK, ZMAKER, ZOWNER FROM ZCAR ORDER BY Z_PK")
    #expect(cars.count == 125)
    let migrated = try CoreDataMigrationTests.rows(
      store,
      "SELECT c.Z_PK, m.ZNAME, c.ZOWNER FROM ZCAR c LEFT JOIN ZMAKER m ON m.Z_PK = c.ZCREATEDBY ORDER BY c.Z_PK"
    )
    #expect(migrated == cars)
    let distinct = try CoreDataMigrationTests.rows(
      source, "SELECT COUNT(DISTINCT ZMAKER) FROM ZCAR")
    #expect(try CoreDataMigrationTests.rows(store, "SELECT COUNT(*) FROM ZMAKER") == distinct)
    // previousOwners ← $source.owner through PersonToPerson: each owned car's one previous owner.
    let owners = try CoreDataMigrationTests.rows(
      source, "SELECT Z_PK, ZOWNER FROM ZCAR WHERE ZOWNER IS NOT NULL ORDER BY Z_PK")
    let table = try CoreDataMigrationTests.rows(
      store,
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%PREVIOUS%' ESCAPE '\\'"
    )
    let join = try #require(table.first?.first?.textValue)
    let columns = try CoreDataMigrationTests.rows(
      store, "SELECT name FROM pragma_table_info('\(join)') ORDER BY cid"
    ).compactMap { $0.first?.textValue }
    let carColumn = try #require(columns.first { $0.hasSuffix("PREVIOUSCARS") })
    let personColumn = try #require(columns.first { $0.hasSuffix("PREVIOUSOWNERS") })
    let previous = try CoreDataMigrationTests.rows(
      store, "SELECT \(carColumn), \(personColumn) FROM \(join) ORDER BY 1")
    #expect(previous == owners, "\(join): \(columns)")
  }
}
