import Foundation
import TestSupport
import Testing

/// `Examples/LibraryApp`: the package a new user writes from the README (generated classes, a
/// fixture, typed fetches, change tracking), depending on graphvault by path. Built and
/// tested here with `swift test`, as its user would.
@Suite(
  "The example package",
  .enabled(if: Subprocess.isInstalled("swift"), "needs the swift toolchain"))
struct ExamplePackageTests {
  static let package = SharedFixtures.packageRoot.appendingPathComponent("Examples/LibraryApp")

  @Test func itsGeneratedClassesAreWhatGenerateWritesNow() throws {
    let directory = try TemporaryDirectory()
    let model = SharedFixtures.packageRoot.appendingPathComponent("Fixtures/Library.xcdatamodeld")
    let result = try BuiltTool.run([
      "generate", model.path, "--output", directory.url.path, "-q",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    let kept = Self.package.appendingPathComponent("Sources/LibraryModel")
    let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
    #expect(try FileManager.default.contentsOfDirectory(atPath: kept.path).sorted() == names)
    for name in names {
      let fresh = try Data(contentsOf: directory.url.appendingPathComponent(name))
      #expect(
        try Data(contentsOf: kept.appendingPathComponent(name)) == fresh,
        "\(name): run graphvault generate Fixtures/Library.xcdatamodeld --output Examples/LibraryApp/Sources/LibraryModel"
      )
    }
  }

  /// Whether the checks that build a package of their own run (`scripts/test --full`, CI).
  static let buildsPackages = ProcessInfo.processInfo.environment["GRAPHVAULT_FULL_TESTS"] == "1"

  @Test(
    .enabled(
      if: buildsPackages,
      "builds the example and graphvault again as a package of its own (minutes on a fresh clone): scripts/test --full runs it"
    ))
  func itsTestsPass() throws {
    let result = try Subprocess.run(
      "swift", ["test", "--package-path", Self.package.path, "--disable-xctest"])
    #expect(result.status == 0, "\(result.stdout.suffix(4000))\(result.stderr.suffix(4000))")
    // Every test the example declares ran: none skipped, none lost.
    let declared =
      try String(
        contentsOf: Self.package.appendingPathComponent(
          "Tests/LibraryAppTests/LibraryAppTests.swift"),
        encoding: .utf8
      ).components(separatedBy: "@Test").count - 1
    #expect(declared >= 5)
    #expect(
      result.stdout.contains("Test run with \(declared) tests"), "\(result.stdout.suffix(2000))")
  }
}
