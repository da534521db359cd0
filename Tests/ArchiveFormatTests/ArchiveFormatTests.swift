import ArchiveFormat
import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import PropertyList
import TestSupport
import Testing

@Suite("The archive format")
struct ArchiveFormatTests {
  @Test func manyToManyRowsAndOrderTravelWithTheirOwners() throws {
    // A store built here: the fixtures' join tables are empty.
    let directory = try TemporaryDirectory()
    let path = directory.path("Library.sqlite").path
    let modelPath = SharedFixtures.packageRoot.appendingPathComponent(
      "Fixtures/Library.xcdatamodeld"
    ).path
    let model = try ModelSource.model(at: modelPath)
    try StoreCreator.create(at: path, model: model)
    let context = try ObjectContext(storePath: path, model: model)
    let book = try context.insert("Book")
    try book.setValue(.string("Dune"), for: "title")
    for name in ["b", "a"] {
      let tag = try context.insert("Tag")
      try tag.setValue(.string(name), for: "name")
      try book.add(tag, to: "tags")
    }
    for number in [2, 1] {
      let page = try context.insert("Page")
      try page.setValue(.integer(Int64(number)), for: "number")
      try book.add(page, to: "pages")
    }
    try context.save()
    var options = BackupService.Options()
    options.output = Location(path: directory.path("library.gvault").path)
    options.modelPath = modelPath
    // Format 1's records, read as they are (format 2 holds the same: FormatTwoTests).
    options.formatVersion = 1
    let result = try BackupService.backup(storePath: path, options: options)
    let archive = try members(of: result.archive)
    let books = try #require(
      try PropertyListValue(
        binaryPropertyList: archive.first { $0.path == "objects/Book/000001.plist" }!.bytes
      ).arrayValue)
    #expect(books.first?["tags"] == [1, 2])
    let pages = try #require(
      try PropertyListValue(
        binaryPropertyList: archive.first { $0.path == "objects/Page/000001.plist" }!.bytes
      ).arrayValue)
    #expect(pages.map { $0["book"] } == [1, 1])
    #expect(pages.map { $0["@columns"]?["Z_FOK_BOOK"] } == [1, 2])
    #expect(pages.first?["book@entity"] == "Book")
  }
}
