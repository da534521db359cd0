import Foundation
import PropertyList
import TestSupport
import Testing

/// Small archives that would decode to large ones: a header whose references repeat one large
/// string, a chunk that repeats one record, a chunk claiming more objects than the format
/// allows, a keyed archive whose arrays share arrays. Every reading command refuses them as
/// bad data (65) naming the member, or (an app's keyed archive, which graphvault never needs
/// to decode) carries the bytes as they are.
@Suite("Small archives that would grow")
struct AmplificationCommandTests {
  let directory: TemporaryDirectory
  let store: String

  init() throws {
    directory = try TemporaryDirectory()
    store = directory.path("Library.sqlite").path
    #expect(try BuiltTool.run(["sample", store, "--objects", "300"]).status == 0)
  }

  func archive(format: String) throws -> String {
    let path = directory.path("format\(format).gvault").path
    if !FileManager.default.fileExists(atPath: path) {
      let made = try BuiltTool.run([
        "backup", store, "--output", path, "--format-version", format, "-q",
      ])
      #expect(made.status == 0, "\(made.stderr)")
    }
    return path
  }

  func forged(format: String, _ forge: (inout ArchiveForger) throws -> Void) throws -> String {
    var forger = try ArchiveForger(reading: try archive(format: format))
    try forge(&forger)
    let path = directory.path("forged-\(UUID().uuidString).gvault").path
    try forger.write(to: path)
    return path
  }

  /// `verify`, `restore` and `list` refuse `archive` as bad data naming `member` and `reason`.
  func expectRefused(
    _ archive: String, naming member: String, because reason: String, listToo: Bool = false
  ) throws {
    var commands = [
      ["verify", archive], ["restore", archive, "--to", directory.path("out.sqlite").path],
    ]
    if listToo { commands.append(["list", archive]) }
    for command in commands {
      let result = try BuiltTool.run(command)
      #expect(result.status == 65, "\(command[0]): \(result.stdout)\(result.stderr)")
      let said = result.stdout + result.stderr
      #expect(said.contains(member) && said.contains(reason), "\(command[0]): \(said)")
    }
    #expect(!FileManager.default.fileExists(atPath: directory.path("out.sqlite").path))
  }

  @Test func aHeaderWhoseReferencesRepeatOneLargeStringIsBadData() throws {
    let archive = try forged(format: "2") { forger in
      let header = try PropertyListValue(
        binaryPropertyList: try #require(forger.bytes(of: "graphvault.plist")))
      var list = SharingPropertyList()
      let top = list.add(tree: header)
      let big = list.add(.string(String(repeating: "é", count: 30_000)))
      let many = list.add(.array(Array(repeating: big, count: 15_000)))
      guard case .dictionary(var pairs) = list.objects[top] else { return }
      pairs.append((key: list.add(.string("note")), value: many))
      list.set(top, .dictionary(pairs))
      forger.replace("graphvault.plist", with: list.bytes(top: top))
    }
    let size = try FileManager.default.attributesOfItem(atPath: archive)[.size] as? Int
    #expect((size ?? .max) < 200_000)
    try expectRefused(
      archive, naming: "graphvault.plist", because: "decoding would take more than", listToo: true)
  }

  @Test func aChunkRepeatingOneRecordIsBadData() throws {
    let member = "objects/Book/000001.plist"
    let archive = try forged(format: "1") { forger in
      let chunk = try PropertyListValue(binaryPropertyList: try #require(forger.bytes(of: member)))
      guard case .array(let records) = chunk else { return }
      var list = SharingPropertyList()
      let first = list.add(tree: records[0])
      let repeated = list.add(.array(Array(repeating: first, count: 19_000)))
      forger.replace(member, with: list.bytes(top: repeated))
    }
    try expectRefused(archive, naming: member, because: "is referenced twice")
  }

  @Test(arguments: ["1", "2"])
  func aChunkOfMoreObjectsThanTheFormatAllowsIsBadData(format: String) throws {
    let member = "objects/Tag/000001.plist"
    let archive = try forged(format: format) { forger in
      let chunk = try PropertyListValue(binaryPropertyList: try #require(forger.bytes(of: member)))
      switch chunk {
      case .array(let records):
        // Distinct records, each written once: only the count is wrong.
        var list = SharingPropertyList()
        let copies = (0..<20_001).map { _ in list.add(tree: records[0]) }
        let top = list.add(.array(copies))
        forger.replace(member, with: list.bytes(top: top))
      case .dictionary(var columns):
        columns["count"] = .integer(20_001)
        for key in ["pk", "opt"] {
          if case .data(let bytes)? = columns[key] {
            columns[key] = .data(bytes + [UInt8](repeating: 0, count: 20_001))
          }
        }
        forger.replace(member, with: PropertyListValue.dictionary(columns).binaryPropertyList())
      default: Issue.record("a chunk is an array or a dictionary")
      }
    }
    try expectRefused(archive, naming: member, because: "a chunk holds at most 20000")
  }

  @Test(.enabled(if: Subprocess.isInstalled("python3"), "needs python3 to write the store"))
  func aKeyedArchiveWhoseArraysShareArraysIsExportedAsItsBytes() throws {
    // An app's transformable value: NSArrays holding the next one twice, 60 deep.
    var objects: [PropertyListValue] = [.string("$null")]
    for level in 0..<60 {
      objects.append(
        .dictionary([
          "NS.objects": .array([.uid(UInt64(level + 2)), .uid(UInt64(level + 2))]),
          "$class": .uid(62),
        ]))
    }
    objects.append(.string("leaf"))
    objects.append(
      .dictionary([
        "$classname": .string("NSArray"),
        "$classes": .array([.string("NSArray"), .string("NSObject")]),
      ]))
    let value = PropertyListValue.dictionary([
      "$archiver": .string("NSKeyedArchiver"), "$version": .integer(100_000),
      "$top": .dictionary(["root": .uid(1)]), "$objects": .array(objects),
    ]).binaryPropertyList()
    let hex = value.map { String(format: "%02X", $0) }.joined()
    try sqlScript(
      store, "UPDATE ZWRITER SET ZCOLOR = X'\(hex)' WHERE Z_PK = (SELECT min(Z_PK) FROM ZWRITER)")
    let archive = directory.path("transformable.gvault").path
    #expect(try BuiltTool.run(["backup", store, "--output", archive, "-q"]).status == 0)
    #expect(try BuiltTool.run(["verify", archive, "-q"]).status == 0)
    let output = directory.path("objects.json").path
    let export = try BuiltTool.run(["export", archive, "--output", output, "-q"])
    #expect(export.status == 0, "\(export.stderr)")
    let text = try String(contentsOfFile: output, encoding: .utf8)
    #expect(text.contains(Data(value).base64EncodedString()))
  }
}
