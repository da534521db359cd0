import Foundation
import GraphVault
import TestSupport
import Testing

/// `diff` points at a deletion and an insertion that are likely one object renamed, and at
/// nothing else.
@Suite("Likely renames in a diff")
struct LikelyRenameTests {
  @Test func aBookRecreatedUnderANewKeyWithANewTitleIsPointedAtAndNothingElseIs() throws {
    let directory = try TemporaryDirectory()
    let old = directory.path("old.sqlite").path
    let new = directory.path("new.sqlite").path
    try SampleLibrary.generate(at: old, objects: 1_500)
    try FileManager.default.copyItem(atPath: old, toPath: new)
    let newPK = try recreateBook(in: new, 7, changes: "ZTITLE = 'Renamed'")
    // A book deleted, and one inserted that shares little with any: no pair.
    try sqlScript(
      new,
      """
      DELETE FROM Z_1TAGS WHERE Z_1BOOKS = 9; UPDATE ZPAGE SET ZBOOK = NULL WHERE ZBOOK = 9;
      DELETE FROM ZBOOK WHERE Z_PK = 9;
      INSERT INTO ZBOOK (Z_PK, Z_ENT, Z_OPT, ZTITLE, ZEDITION)
        SELECT max(Z_PK) + 1, (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'), 1,
          'Unrelated', 1 FROM ZBOOK;
      UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT max(Z_PK) FROM ZBOOK) WHERE Z_NAME = 'Book';
      """)
    var options = DiffService.Options()
    options.entities = ["Book"]
    var changes: [ObjectChange] = []
    let summary = try DiffService.diff(
      old: Location(path: old), new: Location(path: new), options: options
    ) {
      changes.append($0)
    }
    #expect(changes.filter { $0.kind == .deleted }.count == 2)
    #expect(changes.filter { $0.kind == .inserted }.count == 2)
    // Every value but the title is equal: its attributes, its author, tags and pages.
    let rename = try #require(summary.renames.first)
    #expect(summary.renames.count == 1)
    #expect(rename.entity == "Book" && rename.old == "p7" && rename.new == "p\(newPK)")
    #expect(rename.equal == rename.compared - 1, "\(rename)")
    #expect(rename.compared >= 11, "\(rename)")
    let decoded = try JSONDecoder().decode(
      DiffSummary.self, from: JSONEncoder().encode(summary))
    #expect(decoded.renames == summary.renames)
  }

  @Test func twoObjectsThatShareTooFewValuesAreNoPair() throws {
    let directory = try TemporaryDirectory()
    let old = directory.path("old.sqlite").path
    let new = directory.path("new.sqlite").path
    try SampleLibrary.generate(at: old, objects: 1_500)
    try FileManager.default.copyItem(atPath: old, toPath: new)
    // Half the values changed: more than a third differ.
    try recreateBook(
      in: new, 7,
      changes: "ZTITLE = 'x', ZPRICE = 1, ZRATING = 0.1, ZSALES = 2, ZWEIGHT = 3, ZEDITION = 99")
    var options = DiffService.Options()
    options.entities = ["Book"]
    let summary = try DiffService.diff(
      old: Location(path: old), new: Location(path: new), options: options
    ) { _ in }
    #expect(summary.entities["Book"]?.deleted == 1)
    #expect(summary.renames.isEmpty)
  }
}
