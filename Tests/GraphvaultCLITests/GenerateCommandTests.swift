import Foundation
import TestSupport
import Testing

/// `graphvault generate`: a Swift class per entity, checked by the Swift compiler itself.
@Suite("graphvault generate")
struct GenerateCommandTests {
  static let model = SharedFixtures.packageRoot.appendingPathComponent(
    "Fixtures/Library.xcdatamodeld"
  ).path

  func read(_ folder: URL, _ name: String) throws -> String {
    try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
  }

  @Test func aClassPerEntityWithATypedPropertyPerAttributeAndRelationship() throws {
    let directory = try TemporaryDirectory()
    let folder = directory.path("Generated")
    let result = try BuiltTool.run(["generate", Self.model, "--output", folder.path, "--json"])
    #expect(result.status == 0, "\(result.stderr)")
    let json = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes)) as? [String: Any]
    #expect(json?["modelVersion"] as? String == "Library 3")
    #expect(
      (json?["files"] as? [String])?.sorted() == [
        "Author.swift", "Book.swift", "GraphicNovel.swift", "LibraryEntityClasses.swift",
        "Page.swift", "Tag.swift", "Writer.swift",
      ])
    let book = try read(folder, "Book.swift")
    for line in [
      "open class Book: ManagedObject, EntityClass {",
      "  open class var entityName: String { \"Book\" }",
      "  public var title: String {", "    get { requiredAccessorValue(\"title\") }",
      "  public var rating: Double {", "  public var edition: Int32 {",
      "  public var price: Decimal? {", "  public var uniqueID: UUID? {",
      "  public var author: Writer? {", "  public var pages: [Page] {",
      "  public var tags: Set<Tag> {",
    ] {
      #expect(book.contains(line + "\n"), "\(line) missing from:\n\(book)")
    }
    let novel = try read(folder, "GraphicNovel.swift")
    #expect(novel.contains("public final class GraphicNovel: Book {\n"), "\(novel)")
    #expect(novel.contains("override public class var entityName: String { \"GraphicNovel\" }"))
    #expect(try read(folder, "Writer.swift").contains("open class Writer: ManagedObject"))
  }

  /// The generated files compile against the built `ObjectStore` module.
  @Test(.enabled(if: Subprocess.isInstalled("swiftc"), "needs swiftc"))
  func theGeneratedClassesCompile() throws {
    let directory = try TemporaryDirectory()
    let folder = directory.path("Generated")
    #expect(try BuiltTool.run(["generate", Self.model, "--output", folder.path, "-q"]).status == 0)
    let compiled = try Self.typecheck(folder)
    #expect(compiled.status == 0, "\(compiled.stderr)")
  }

  /// Type-checks the generated files in `folder` against the built modules.
  static func typecheck(_ folder: URL) throws -> ProcessResult {
    let modules = URL(fileURLWithPath: BuiltTool.path).deletingLastPathComponent()
      .appendingPathComponent("Modules").path
    let sources = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map {
      folder.appendingPathComponent($0).path
    }
    // The system libraries' module maps, which the built modules refer to.
    let system = ["CZlib", "CSQLite", "CArchive", "CFile"].flatMap {
      ["-I", SharedFixtures.packageRoot.appendingPathComponent("Sources/\($0)").path]
    }
    return try Subprocess.run(
      "swiftc", ["-typecheck", "-swift-version", "6", "-I", modules] + system + sources)
  }

  /// SwiftData names its store `default.store`, and the model a store carries is named after
  /// it: the registry is still a Swift name, and the files compile.
  @Test(.enabled(if: Subprocess.isInstalled("swiftc"), "needs swiftc"))
  func aModelNamedWithAKeywordOrSpacesGivesARegistryThatCompiles() throws {
    let directory = try TemporaryDirectory()
    for (storeName, registry) in [
      ("default.store", "DefaultEntityClasses"), ("my library 2.sqlite", "MyLibrary2EntityClasses"),
      ("2025-app.sqlite", "Model2025AppEntityClasses"),
    ] {
      let store = directory.path(storeName).path
      let created = try BuiltTool.run(["create", store, "--model", Self.model, "-q"])
      #expect(created.status == 0, "\(created.stderr)")
      let folder = directory.path("Generated-" + registry)
      let result = try BuiltTool.run(["generate", store, "--output", folder.path, "-q"])
      #expect(result.status == 0, "\(result.stderr)")
      let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
      #expect(files.contains(registry + ".swift"), "\(storeName): \(files)")
      let compiled = try Self.typecheck(folder)
      #expect(compiled.status == 0, "\(storeName): \(compiled.stderr)")
    }
  }

  /// Attributes named as `ManagedObject`'s own members are generated under the documented
  /// rename (`Value` after the name), keeping their keys; numbers are scalars, so the code a
  /// Core Data developer writes compiles against them.
  @Test(.enabled(if: Subprocess.isInstalled("swiftc"), "needs swiftc"))
  func namesManagedObjectHasAreRenamedAndScalarsTakeArithmetic() throws {
    let directory = try TemporaryDirectory()
    let model = directory.path("Notes.xcdatamodel")
    try XcodeModelFile.write(
      """
          <entity name="Note" representedClassName="Note" syncable="YES">
              <attribute name="context" optional="YES" attributeType="String"/>
              <attribute name="description" attributeType="String"/>
              <attribute name="primaryKey" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
              <attribute name="reference" optional="YES" attributeType="UUID"/>
              <attribute name="views" optional="YES" attributeType="Integer 32" usesScalarValueType="YES"/>
              <relationship name="entity" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Note"/>
          </entity>
      """, at: model)
    let folder = directory.path("Generated")
    let result = try BuiltTool.run(["generate", model.path, "--output", folder.path, "-q"])
    #expect(result.status == 0, "\(result.stderr)")
    let note = try read(folder, "Note.swift")
    for line in [
      "  public var contextValue: String? {", "    get { accessorValue(\"context\") }",
      "  public var descriptionValue: String {", "  public var primaryKeyValue: Int64 {",
      "  public var referenceValue: UUID? {", "  public var entityValue: Note? {",
      "  public var views: Int32 {",
    ] {
      #expect(note.contains(line + "\n"), "\(line) missing from:\n\(note)")
    }
    try Data(
      """
      import ObjectStore

      func use(_ note: Note) {
        note.views += 1
        note.contextValue = "draft"
        let text: String = note.descriptionValue
        _ = (text, note.primaryKey, note.primaryKeyValue, note.entityValue?.reference)
      }

      """.utf8
    ).write(to: folder.appendingPathComponent("Use.swift"))
    let compiled = try Self.typecheck(folder)
    #expect(compiled.status == 0, "\(compiled.stderr)")
  }

  @Test func theSameModelGivesTheSameBytes() throws {
    let directory = try TemporaryDirectory()
    let first = directory.path("first")
    let second = directory.path("second")
    #expect(try BuiltTool.run(["generate", Self.model, "--output", first.path, "-q"]).status == 0)
    #expect(try BuiltTool.run(["generate", Self.model, "--output", second.path, "-q"]).status == 0)
    for name in try FileManager.default.contentsOfDirectory(atPath: first.path) {
      #expect(try read(first, name) == read(second, name), "\(name)")
    }
    // Run again into the same folder: its own files are replaced.
    #expect(try BuiltTool.run(["generate", Self.model, "--output", first.path, "-q"]).status == 0)
  }

  @Test func aFileItDidNotWriteIsNotReplacedUnlessForced() throws {
    let directory = try TemporaryDirectory()
    let folder = directory.path("Generated")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let mine = folder.appendingPathComponent("Book.swift")
    try Data("// my own Book\n".utf8).write(to: mine)
    let refused = try BuiltTool.run(["generate", Self.model, "--output", folder.path])
    #expect(refused.status == 73)
    #expect(refused.stderr.contains("Book.swift was not written by graphvault generate"))
    #expect(try read(folder, "Book.swift") == "// my own Book\n")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["Book.swift"])
    let forced = try BuiltTool.run([
      "generate", Self.model, "--output", folder.path, "--force", "-q",
    ])
    #expect(forced.status == 0)
    #expect(try read(folder, "Book.swift").hasPrefix("// Generated by graphvault generate"))
  }

  /// Files are written under a temporary name and renamed; what a killed run left under
  /// such a name is removed by the next run.
  @Test func aKilledRunsTemporaryFileIsRemovedByTheNextRun() throws {
    let directory = try TemporaryDirectory()
    let folder = directory.path("Generated")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let leftover = folder.appendingPathComponent(".Book.swift.tmp-\(UUID().uuidString)")
    try Data("// half wri".utf8).write(to: leftover)
    #expect(try BuiltTool.run(["generate", Self.model, "--output", folder.path, "-q"]).status == 0)
    #expect(!FileManager.default.fileExists(atPath: leftover.path))
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy {
        !$0.hasPrefix(".")
      })
  }

  @Test func aMissingModelExitsSixtySix() throws {
    let directory = try TemporaryDirectory()
    let result = try BuiltTool.run([
      "generate", directory.path("Nothing.xcdatamodeld").path, "--output",
      directory.path("out").path,
    ])
    #expect(result.status == 66, "\(result.stderr)")
  }
}
