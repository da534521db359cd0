import Foundation
import GraphVault
import LibArchive
import ObjectModel
import ObjectStore
import PropertyList
import TestSupport
import Testing

@Suite("Verifying and listing archives")
struct VerifyAndListTests {
  let directory: TemporaryDirectory
  let archive: String

  init() throws {
    directory = try TemporaryDirectory()
    archive = try LibraryArchive.make(in: directory, named: "good") { context in
      let author = try context.insert("Author")
      try author.setValue(.string("frank"), for: "alias")
      for i in 0..<50 {
        let book = try context.insert("Book")
        try book.setValue(.string("Book \(i)"), for: "title")
        try book.setObject(author, for: "author")
      }
    }
  }

  /// The archive rewritten with `transform` applied to its members.
  func rewritten(_ name: String, _ transform: ([(String, [UInt8])]) -> [(String, [UInt8])]) throws
    -> String
  {
    let reader = try ArchiveReader(path: archive)
    var members: [(String, [UInt8])] = []
    while let entry = try reader.nextEntry() { members.append((entry.path, try reader.readAll())) }
    let path = directory.path(name).path
    let writer = try ArchiveWriter(path: path, filter: .none)
    for (member, bytes) in transform(members) {
      try writer.writeEntry(path: member, contents: bytes)
    }
    try writer.close()
    return path
  }

  @Test func aGoodArchivePasses() throws {
    let report = try VerifyService.verify(archive: Location(path: archive))
    #expect(report.ok, "\(report.problems)")
    #expect(report.complete)
    #expect(report.objects == ["Author": 1, "Book": 50])
  }

  @Test func aDamagedChunkIsNamedAndTheOtherEntitiesStayIntact() throws {
    let path = try rewritten("flipped.gvault") { members in
      members.map { name, bytes in
        var bytes = bytes
        if name == "objects/Book/000001.plist" { bytes[bytes.count / 2] ^= 0x20 }
        return (name, bytes)
      }
    }
    let report = try VerifyService.verify(archive: Location(path: path))
    #expect(!report.ok)
    #expect(report.problems.contains { $0.contains("objects/Book/000001.plist") })
    #expect(report.intactEntities == ["Author"])
  }

  @Test func anArchiveWithoutItsIndexIsIncomplete() throws {
    let report = try VerifyService.verify(
      archive: Location(path: try rewritten("noindex.gvault") { Array($0.dropLast()) }))
    #expect(!report.ok && !report.complete)
    #expect(report.problems.contains { $0.contains("incomplete") })
  }

  @Test func aReferenceToAMissingObjectIsNamed() throws {
    // Drop the Author chunk and its index entry: the archive is consistent but for references.
    let path = try rewritten("dangling.gvault") { members in
      members.compactMap { name, bytes in
        if name == "objects/Author/000001.plist" { return nil }
        guard name == "index.plist",
          var index = try? PropertyListValue(binaryPropertyList: bytes).dictionaryValue
        else {
          return (name, bytes)
        }
        index["members"] = .array(
          (index["members"]?.arrayValue ?? []).filter {
            $0["path"] != "objects/Author/000001.plist"
          })
        var objects = index["objects"]?.dictionaryValue ?? [:]
        objects["Author"] = 0
        index["objects"] = .dictionary(objects)
        return (name, PropertyListValue.dictionary(index).binaryPropertyList())
      }
    }
    let report = try VerifyService.verify(archive: Location(path: path))
    #expect(!report.ok)
    #expect(
      report.problems.first?.contains(
        "Book.author points at 1 object of the Writer hierarchy that the archive does not hold (p1)"
      ) == true,
      "\(report.problems)")
  }

  @Test func aCutArchiveIsReportedWithoutSpuriousReferenceProblems() throws {
    let bytes = try Data(contentsOf: URL(fileURLWithPath: archive))
    let cut = directory.path("cut.gvault")
    try bytes.prefix(bytes.count / 2).write(to: cut)
    let report = try VerifyService.verify(archive: Location(path: cut.path))
    #expect(!report.ok)
    #expect(report.problems.contains { $0.contains("truncated") })
    #expect(!report.problems.contains { $0.contains("points at") })
  }

  @Test func listReadsHeaderAndIndexAndFlagsIncompleteArchivesNewestFirst() throws {
    let folder = directory.path("backups")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try FileManager.default.copyItem(
      atPath: archive, toPath: folder.appendingPathComponent("a.gvault").path)
    try FileManager.default.copyItem(
      atPath: try rewritten("b.gvault") { Array($0.dropLast()) },
      toPath: folder.appendingPathComponent("b.gvault").path)
    let single = try ListService.list(Location(path: archive))
    #expect(
      single.first?.objects == ["Author": 1, "Book": 50, "GraphicNovel": 0, "Page": 0, "Tag": 0])
    #expect(single.first?.model == "Library")
    #expect(single.first?.complete == true)
    let all = try ListService.list(Location(path: folder.path))
    #expect(all.count == 2)
    #expect(all.first { $0.archive.hasSuffix("b.gvault") }?.complete == false)
    #expect(throws: VaultError.self) {
      try ListService.list(Location(path: directory.path("nothing").path))
    }
  }
}
