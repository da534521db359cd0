import ArchiveFormat
import Foundation
import GraphVault
import LibArchive
import ObjectModel
import ObjectStore
import PropertyList
import TestSupport
import Testing

@Suite("Restoring damaged archives")
struct RestoreDamageTests {
  let directory: TemporaryDirectory
  let archive: String

  init() throws {
    directory = try TemporaryDirectory()
    archive = try Self.library(in: directory, format: 2)
  }

  /// A small library store, backed up without compression so bytes can be damaged precisely.
  static func library(in directory: TemporaryDirectory, format: Int64) throws -> String {
    try LibraryArchive.make(
      in: directory, named: "library\(format)", formatVersion: format
    ) { context in
      for i in 0..<300 {
        let book = try context.insert(i % 3 == 0 ? "GraphicNovel" : "Book")
        try book.setValue(.string("Book \(i)"), for: "title")
        let page = try context.insert("Page")
        try page.setValue(.integer(Int64(i)), for: "number")
        try book.add(page, to: "pages")
      }
    }
  }

  func restoreFails(_ bytes: [UInt8], _ label: String) throws -> VaultError? {
    let damaged = directory.path("damaged-\(UUID().uuidString).gvault")
    try Data(bytes).write(to: damaged)
    defer { try? FileManager.default.removeItem(at: damaged) }
    let target = directory.path("restored-\(UUID().uuidString).sqlite").path
    do {
      _ = try RestoreService.restore(archive: Location(path: damaged.path), to: target)
      return nil
    } catch {
      #expect(!FileManager.default.fileExists(atPath: target), "\(label): a store was left behind")
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter
      { $0.contains(".tmp-") }
      #expect(leftovers.isEmpty, "\(label): temporary files left: \(leftovers)")
      return error
    }
  }

  @Test func theUndamagedArchiveRestores() throws {
    let result = try RestoreService.restore(
      archive: Location(path: archive), to: directory.path("ok.sqlite").path)
    #expect(result.objects == ["Book": 200, "GraphicNovel": 100, "Page": 300])
  }

  @Test(arguments: [1, 2] as [Int64])
  func everyCutOfTheArchiveIsRefusedAndLeavesNothing(format: Int64) throws {
    let archive = format == 2 ? archive : try Self.library(in: directory, format: format)
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: archive)))
    let cuts =
      Array(stride(from: 0, to: bytes.count, by: max(1, bytes.count / 40))) + [bytes.count - 1]
    for cut in cuts {
      let error = try restoreFails(Array(bytes[0..<cut]), "cut at \(cut)")
      // A cut that loses only tar's zero padding and end marker may restore (nothing is lost)
      // or be refused as truncated; any other cut must be refused.
      let onlyPaddingLost = bytes[cut...].allSatisfy { $0 == 0 }
      if onlyPaddingLost {
        #expect(
          error == nil || error?.kind == .invalidInput,
          "cut at \(cut): \(String(describing: error))")
      } else {
        #expect(error?.kind == .invalidInput, "cut at \(cut): \(String(describing: error))")
      }
    }
  }

  @Test(arguments: [1, 2] as [Int64])
  func aFlippedByteInAChunkIsFoundByItsChecksum(format: Int64) throws {
    let archive = format == 2 ? archive : try Self.library(in: directory, format: format)
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: archive)))
    // Inside the first Page chunk: find its header name, then damage a byte of its data.
    let name = Array("objects/Page/000001.plist".utf8)
    let start = try #require(
      (0..<(bytes.count - name.count)).first { bytes[$0..<($0 + name.count)].elementsEqual(name) })
    let position = start + 512 + 400  // past the pax headers, into the data
    bytes[position] ^= 0x01
    let error = try restoreFails(bytes, "flipped byte")
    #expect(error?.kind == .invalidInput)
    // Named either by its checksum or by what its damaged bytes no longer hold.
    #expect(
      error?.description.contains("objects/Page/000001.plist") == true,
      "\(String(describing: error))")
  }

  /// Rewrites the archive's members with `transform` applied to their list.
  func rewritten(_ transform: ([(String, [UInt8])]) -> [(String, [UInt8])]) throws -> [UInt8] {
    let reader = try ArchiveReader(path: archive)
    var members: [(String, [UInt8])] = []
    while let entry = try reader.nextEntry() { members.append((entry.path, try reader.readAll())) }
    let path = directory.path("rewritten-\(UUID().uuidString).gvault").path
    let writer = try ArchiveWriter(path: path, filter: .none)
    for (name, bytes) in transform(members) { try writer.writeEntry(path: name, contents: bytes) }
    try writer.close()
    defer { try? FileManager.default.removeItem(atPath: path) }
    return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
  }

  /// A format newer than any this version reads.
  static let newer = ArchiveLayout.formatVersions.upperBound + 1

  @Test func anArchiveOfAFormatThisVersionDoesNotReadIsRefusedNamingTheFormat() throws {
    let bytes = try rewritten { members in
      members.map { name, bytes in
        guard name == "graphvault.plist",
          case .dictionary(var header)? = try? PropertyListValue(binaryPropertyList: bytes)
        else { return (name, bytes) }
        header["format"] = .integer(Self.newer)
        return (name, PropertyListValue.dictionary(header).binaryPropertyList())
      }
    }
    let error = try restoreFails(bytes, "format \(Self.newer)")
    #expect(error?.kind == .invalidInput)
    #expect(error?.description.contains("archive format \(Self.newer) is not one") == true)
    let path = directory.path("newer.gvault")
    try Data(bytes).write(to: path)
    let report = try VerifyService.verify(archive: Location(path: path.path))
    #expect(!report.ok)
    #expect(report.problems.contains { $0.contains("archive format \(Self.newer) is not one") })
  }

  @Test func anArchiveWithoutItsIndexIsIncompleteAndNotRestored() throws {
    let error = try restoreFails(try rewritten { Array($0.dropLast()) }, "no index")
    #expect(error?.kind == .invalidInput)
    #expect(error?.description.contains("incomplete") == true)
  }

  @Test func membersOutOfOrderAreRefused() throws {
    let swapped = try restoreFails(
      try rewritten { members in
        var members = members
        members.swapAt(0, 1)
        return members
      }, "header not first")
    #expect(swapped?.description.contains("does not start with graphvault.plist") == true)
    let afterIndex = try restoreFails(
      try rewritten { members in
        var members = members
        members.append(members[1])
        return members
      }, "member after index")
    #expect(afterIndex?.description.contains("must be last") == true)
    let dropped = try restoreFails(
      try rewritten { members in
        var members = members
        members.remove(at: members.count - 2)
        return members
      }, "a member missing")
    #expect(dropped?.kind == .invalidInput)
  }

  @Test func anExistingStoreIsRefusedAndKept() throws {
    let target = directory.path("existing.sqlite")
    try Data("mine".utf8).write(to: target)
    do {
      _ = try RestoreService.restore(archive: Location(path: archive), to: target.path)
      Issue.record("replaced an existing store")
    } catch {
      #expect(error.kind == .destinationExists)
    }
    #expect(try String(contentsOf: target, encoding: .utf8) == "mine")
    _ = try RestoreService.restore(archive: Location(path: archive), to: target.path, force: true)
    #expect(try CoreDataStore(path: target.path).entityRows.count == 6)
  }
}
