import Foundation
import Testing

/// Where the third-party Core Data fixtures live: `../shared/fixtures/coredata` beside the
/// package, or the folder named by `GRAPHVAULT_SHARED` (the `shared` folder itself).
///
/// Tests that need them use `.enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote)`
/// so that a machine without `../shared` reports them as skipped, with the reason.
public enum SharedFixtures {
  /// The package's root folder (found from this source file's path).
  public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // TestSupport
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()

  /// The `shared` folder.
  public static let sharedRoot: URL = {
    if let override = ProcessInfo.processInfo.environment["GRAPHVAULT_SHARED"], !override.isEmpty {
      return URL(fileURLWithPath: override)
    }
    return packageRoot.deletingLastPathComponent().appendingPathComponent("shared")
  }()

  /// The Core Data fixture folder.
  public static let coreDataRoot: URL = sharedRoot.appendingPathComponent("fixtures/coredata")

  /// Whether the Core Data fixtures are present.
  public static let isAvailable: Bool = FileManager.default.fileExists(
    atPath: coreDataRoot.appendingPathComponent("README.md").path)

  /// The message a skipped test shows.
  public static let skipNote: Comment =
    "needs ../shared/fixtures/coredata beside the package (or GRAPHVAULT_SHARED); absent here"

  /// A file below the Core Data fixture folder.
  public static func file(_ relativePath: String) -> URL {
    coreDataRoot.appendingPathComponent(relativePath)
  }

  /// Every file below the fixture folder whose name ends with `suffix`, sorted by path.
  public static func files(endingWith suffix: String) -> [URL] {
    guard
      let enumerator = FileManager.default.enumerator(
        at: coreDataRoot, includingPropertiesForKeys: nil)
    else { return [] }
    var result: [URL] = []
    for case let url as URL in enumerator where url.lastPathComponent.hasSuffix(suffix) {
      result.append(url)
    }
    return result.sorted { $0.path < $1.path }
  }

  /// Copies a store with its `-wal` and `-shm` (those that exist) into `directory`, so a test
  /// never opens a fixture in place; returns the copy's path.
  public static func copyStore(_ relativePath: String, into directory: URL) throws -> URL {
    let source = file(relativePath)
    let destination = directory.appendingPathComponent(source.lastPathComponent)
    for suffix in ["", "-wal", "-shm"] {
      let from = URL(fileURLWithPath: source.path + suffix)
      if FileManager.default.fileExists(atPath: from.path) {
        try FileManager.default.copyItem(
          at: from, to: URL(fileURLWithPath: destination.path + suffix))
      }
    }
    return destination
  }
}

/// Each fixture store with the model version it was written with (from the fixtures' README):
/// the model set below `../shared/fixtures/coredata`, or nil for the stores whose model was
/// defined in code upstream and lives only in their `Z_MODELCACHE`.
public struct FixtureStore: Sendable, CustomTestStringConvertible {
  /// The store, below the fixture folder.
  public let store: String
  /// Its model set, below the fixture folder.
  public let modelSet: String?
  /// Its version in the set.
  public let version: String?

  /// The store's path, for test output.
  public var testDescription: String { store }

  /// Every fixture store.
  public static let all: [FixtureStore] = [
    .init(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V1.sqlite",
      "CoreDataPlus/SampleModel/SampleModel.xcdatamodeld", "SampleModel"),
    .init(
      "CoreDataPlus/SampleModel/Fixtures/SampleModel_V2.sqlite",
      "CoreDataPlus/SampleModel/SampleModel.xcdatamodeld", "SampleModel2"),
    .init(
      "CoreDataPlus/SampleModel3/Fixtures/SampleModel3_V1.sqlite",
      "CoreDataPlus/SampleModel3/SampleModel3.xcdatamodeld", "SampleModel3"),
    .init(
      "CoreDataMigration-Example/Stores/CoreDataMigration_Example_1.sqlite",
      "CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld",
      "CoreDataMigration_Example"),
    .init(
      "CoreDataMigration-Example/Stores/CoreDataMigration_Example_2.sqlite",
      "CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld",
      "CoreDataMigration_Example 2"),
    .init(
      "CoreDataMigration-Example/Stores/CoreDataMigration_Example_3.sqlite",
      "CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld",
      "CoreDataMigration_Example 3"),
    .init(
      "CoreDataMigration-Example/Stores/CoreDataMigration_Example_WAL.sqlite",
      "CoreDataMigration-Example/CoreDataMigration_Example.xcdatamodeld",
      "CoreDataMigration_Example 4"),
    .init(
      "CoreDataStack/Stores/TestModel.sqlite", "CoreDataStack/Sample.xcdatamodeld", "TestModel"),
    .init("BookMigration/Stores/Model1.sqlite", "BookMigration/Model.xcdatamodeld", "Model1"),
    .init("CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V1.sqlite", nil, nil),
    .init("CoreDataPlus/SampleModel2/Fixtures/SampleModel2_V2.sqlite", nil, nil),
  ]

  /// The stores with a model set.
  public static var withModelSet: [FixtureStore] { all.filter { $0.modelSet != nil } }

  /// The stores that keep their model in `Z_MODELCACHE` (all but the 2013 BookMigration one).
  public static var withModelCache: [FixtureStore] {
    all.filter { !$0.store.hasPrefix("BookMigration") }
  }

  init(_ store: String, _ modelSet: String?, _ version: String?) {
    self.store = store
    self.modelSet = modelSet
    self.version = version
  }
}

extension SharedFixtures {
  /// Runs `../shared/tools/storediff.py` with `arguments` (options, then two stores).
  public static func storediff(_ arguments: [String]) throws -> ProcessResult {
    try Subprocess.run(
      "python3", [sharedRoot.appendingPathComponent("tools/storediff.py").path] + arguments)
  }
}
