import ArchiveFormat
import Foundation
import GraphVault
import ObjectStore
import PropertyList
import SQLite
import TestSupport
import Testing

/// One way to forge an archive: what an attacker with write access to the backup folder does,
/// the index made to agree.
struct Forgery: CustomStringConvertible, Sendable {
  let description: String
  /// Whether it can be made on archives of format 1, 2 or both.
  let formats: [Int64]
  let forge: @Sendable (inout ArchiveForger, _ folder: String, _ format: Int64) throws -> Void

  init(
    _ description: String, formats: [Int64] = [1, 2],
    _ forge: @escaping @Sendable (inout ArchiveForger, String, Int64) throws -> Void
  ) {
    self.description = description
    self.formats = formats
    self.forge = forge
  }

  /// Rewrites the first object chunk of `entity` in either format.
  static func editObjects(
    _ forger: inout ArchiveForger, _ entity: String, format: Int64,
    records: @escaping (inout [PropertyListValue]) throws -> Void,
    columns: @escaping (inout PropertyListValue) throws -> Void
  ) throws {
    try forger.edit("objects/\(entity)/000001.plist") { chunk in
      if format == 1 {
        var items = chunk.arrayValue ?? []
        try records(&items)
        chunk = .array(items)
      } else {
        try columns(&chunk)
      }
    }
  }

  static func set(_ key: String, _ value: PropertyListValue, inRecord index: Int)
    -> (inout [PropertyListValue]) throws -> Void
  {
    { items in
      var record = items[index].dictionaryValue ?? [:]
      record[key] = value
      items[index] = .dictionary(record)
    }
  }

  static let all: [Forgery] = [
    Forgery("a table's SQL followed by ATTACH and DROP of another database") { forger, folder, _ in
      try forger.editSchemaSQL(of: "ZBOOK") {
        $0 + "; ATTACH DATABASE '\(folder)/precious.db' AS v; DROP TABLE v.precious"
      }
    },
    Forgery("an entry that attaches a new database file") { forger, folder, _ in
      try forger.addSchemaEntry(
        type: "table", name: "C", table: "C",
        sql: "ATTACH DATABASE '\(folder)/created.db' AS c")
    },
    Forgery("an entry that drops a table") { forger, _, _ in
      try forger.addSchemaEntry(type: "table", name: "D", table: "D", sql: "DROP TABLE ZBOOK")
    },
    Forgery("a trigger that deletes rows on every insert") { forger, _, _ in
      try forger.addSchemaEntry(
        type: "trigger", name: "EVIL", table: "ZPAGE",
        sql: "CREATE TRIGGER EVIL AFTER INSERT ON ZPAGE BEGIN DELETE FROM ZBOOK; END")
    },
    Forgery("an index whose expression loads a library") { forger, folder, _ in
      try forger.addSchemaEntry(
        type: "index", name: "EVIL", table: "ZBOOK",
        sql: "CREATE INDEX EVIL ON ZBOOK (load_extension('\(folder)/evil'))")
    },
    Forgery("a partial index whose condition writes a file") { forger, folder, _ in
      try forger.addSchemaEntry(
        type: "index", name: "EVIL", table: "ZBOOK",
        sql: "CREATE INDEX EVIL ON ZBOOK (ZTITLE) WHERE writefile('\(folder)/created.txt', 'x') > 0"
      )
    },
    Forgery("a view") { forger, _, _ in
      try forger.addSchemaEntry(
        type: "view", name: "V", table: "V", sql: "CREATE VIEW V AS SELECT * FROM ZBOOK")
    },
    Forgery("Z_MAX below the highest key") { forger, _, _ in
      try forger.edit(ArchiveLayout.storePrimaryKeys) { value in
        value = .array(
          (value.arrayValue ?? []).map { row in
            guard row["name"]?.stringValue == "Book" else { return row }
            var fields = row.dictionaryValue!
            fields["max"] = 1
            return .dictionary(fields)
          })
      }
    },
    Forgery("a to-one reference to an object that does not exist") { forger, _, format in
      try editObjects(
        &forger, "Book", format: format, records: set("author", 999_999, inRecord: 0),
        columns: { try ArchiveForger.editIntegers(in: &$0, key: "author") { $0[0] = 999_999 } })
    },
    Forgery("a many-to-many row to an object that does not exist") { forger, _, format in
      try editObjects(
        &forger, "Book", format: format,
        records: { items in
          let position = items.firstIndex { $0["tags"] != nil }!
          var record = items[position].dictionaryValue!
          record["tags"] = [888_888]
          record["tags@order"] = nil
          items[position] = .dictionary(record)
        },
        columns: { try ArchiveForger.editIntegers(in: &$0, key: "tags") { $0[0] = 888_888 } })
    },
    Forgery("a primary key twice in one hierarchy") { forger, _, format in
      try editObjects(
        &forger, "GraphicNovel", format: format,
        records: set("pk", 1, inRecord: 0),
        columns: { try ArchiveForger.editIntegers(in: &$0, key: "pk") { $0[0] = 1 } })
    },
    Forgery("a stored column that overrides a foreign key", formats: [1]) { forger, _, format in
      try editObjects(
        &forger, "Book", format: format,
        records: set("@columns", ["ZAUTHOR": 777_777], inRecord: 0), columns: { _ in })
    },
    Forgery("two authors with the alias the model makes unique") { forger, _, format in
      try editObjects(
        &forger, "Author", format: format,
        records: { items in
          var second = items[1].dictionaryValue!
          second["alias"] = items[0]["alias"]
          items[1] = .dictionary(second)
        },
        columns: { try ArchiveForger.editStrings(in: &$0, key: "alias") { $0[1] = $0[0] } })
    },
    Forgery("a member twice") { forger, _, _ in forger.duplicate("objects/Book/000001.plist") },
    Forgery("two chunks of one entity swapped") { forger, _, _ in
      forger.swap("objects/Page/000001.plist", "objects/Page/000002.plist")
    },
    Forgery("a chunk missing") { forger, _, _ in forger.remove("objects/Page/000002.plist") },
    Forgery("a member the format does not have") { forger, _, _ in
      forger.members.insert(("objects/evil.sh", Array("rm -rf /".utf8)), at: 3)
    },
    Forgery("a damaged model descriptor") { forger, _, _ in
      forger.replace(ArchiveLayout.modelDescriptor, with: Array("not a property list".utf8))
    },
    Forgery("a model whose entity name carries SQL") { forger, _, _ in
      try forger.edit(ArchiveLayout.modelDescriptor) { value in
        var fields = value.dictionaryValue!
        fields["entities"] = .array(
          fields["entities"]!.arrayValue!.map { entity in
            guard entity["name"]?.stringValue == "Tag" else { return entity }
            var tag = entity.dictionaryValue!
            tag["name"] = "Tag (x); DROP TABLE ZBOOK; --"
            return .dictionary(tag)
          })
        value = .dictionary(fields)
      }
    },
    Forgery("metadata that is not a dictionary") { forger, _, _ in
      forger.replace(
        ArchiveLayout.storeMetadata, with: PropertyListValue.array([1]).binaryPropertyList())
    },
    Forgery("a version hash in the metadata that is not the model's") { forger, _, _ in
      try forger.edit(ArchiveLayout.storeMetadata) { metadata in
        var fields = metadata.dictionaryValue ?? [:]
        var hashes = fields["NSStoreModelVersionHashes"]?.dictionaryValue ?? [:]
        hashes["Book"] = .data([UInt8](repeating: 0, count: 32))
        fields["NSStoreModelVersionHashes"] = .dictionary(hashes)
        metadata = .dictionary(fields)
      }
    },
    Forgery("a model cache that is not a model") { forger, _, _ in
      forger.replace(ArchiveLayout.storeModelCache, with: [0xFF, 0x00, 0x13, 0x37])
    },
    Forgery("a full archive without its sketches", formats: [5]) { forger, _, _ in
      forger.remove(ArchiveLayout.sketches)
    },
    Forgery("the sketches before an entity's objects", formats: [5]) { forger, _, _ in
      forger.swap(ArchiveLayout.sketches, "objects/Tag/000001.plist")
    },
    Forgery("a full ledger that holds its sketches before the objects", formats: [5]) {
      forger, _, _ in
      let sets = try PropertyListValue(
        binaryPropertyList: try #require(forger.bytes(of: ArchiveLayout.sketches)))["sets"]
      try forger.edit(ArchiveLayout.changes) { ledger in
        var fields = ledger.dictionaryValue ?? [:]
        fields["sets"] = sets
        ledger = .dictionary(fields)
      }
    },
    Forgery("a sketch cut short", formats: [5]) { forger, _, _ in
      try forger.edit(ArchiveLayout.sketches) { member in
        var sets = member["sets"]?.dictionaryValue ?? [:]
        let name = try #require(sets.keys.sorted().first)
        var entry = sets[name]?.dictionaryValue ?? [:]
        entry["sketch"] = .data(Array((entry["sketch"]?.dataValue ?? []).prefix(7)))
        sets[name] = .dictionary(entry)
        member = ["sets": .dictionary(sets)]
      }
    },
  ]
}

/// Archives are untrusted input: for every forgery, `verify` and `restore` agree (both refuse,
/// as bad data), and nothing outside the archive changes: another database in the same folder
/// keeps its table, no file appears, no store is left.
@Suite("Forged archives")
struct ForgedArchiveTests {
  /// A sample store big enough for two chunks of pages, and its archive in each format.
  static let sources: [Int64: String] = {
    let directory = try! TemporaryDirectory.forTheRun("graphvault-forgery-sources").url
    let store = directory.appendingPathComponent("Library.sqlite").path
    try? SampleLibrary.generate(at: store, objects: 48_000)
    var archives: [Int64: String] = [:]
    for format: Int64 in [1, 2, 5] {
      var options = BackupService.Options()
      options.formatVersion = format
      options.output = Location(
        path: directory.appendingPathComponent("Library-\(format).gvault").path)
      archives[format] = try? BackupService.backup(storePath: store, options: options).archive
    }
    return archives
  }()

  /// A folder holding `precious.db` (a table with a row) and the forged archive.
  struct Scene {
    let directory: TemporaryDirectory
    let archive: String
    let precious: String

    init(_ forgery: Forgery, format: Int64) throws {
      directory = try TemporaryDirectory()
      precious = directory.path("precious.db").path
      let db = try Database(path: precious, mode: .readWriteCreate)
      try db.execute("CREATE TABLE precious (value TEXT)")
      try db.execute("INSERT INTO precious VALUES ('keep me')")
      var forger = try ArchiveForger(reading: try #require(ForgedArchiveTests.sources[format]))
      try forgery.forge(&forger, directory.url.path, format)
      archive = directory.path("forged.gvault").path
      try forger.write(to: archive)
    }

    /// The folder's files, sorted.
    func files() throws -> [String] {
      try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
    }

    /// Nothing but the archive and the untouched database is in the folder.
    func expectUntouched(_ label: String) throws {
      #expect(try files() == ["forged.gvault", "precious.db"], "\(label)")
      let db = try Database(path: precious, mode: .readOnly)
      #expect(
        try db.prepare("SELECT value FROM precious").scalar() == .text("keep me"), "\(label)")
    }
  }

  static var cases: [(Forgery, Int64)] {
    Forgery.all.flatMap { forgery in forgery.formats.map { (forgery, $0) } }
  }

  @Test func historyRowsAboveTheirZMaxAreRefusedByVerifyAndRestore() throws {
    let directory = try TemporaryDirectory()
    let store = directory.path("History.sqlite").path
    var creation = StoreCreator.Options()
    creation.persistentHistory = true
    try StoreCreator.create(at: store, model: try SampleLibrary.model(), options: creation)
    // A history row numbered 5 while Z_PRIMARYKEY says CHANGE has used none: Core Data's
    // next change would be numbered 1, then 2, …, then 5 again.
    let database = try Database(path: store, mode: .readWrite)
    let change = try database.prepare("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'CHANGE'")
      .scalar().integerValue
    try database.execute(
      "INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT) VALUES (5, \(try #require(change)), 1)")
    var options = BackupService.Options()
    options.output = Location(path: directory.path("history.gvault").path)
    let archive = try BackupService.backup(storePath: store, options: options).archive
    let report = try VerifyService.verify(archive: Location(path: archive))
    #expect(!report.ok)
    #expect(
      report.problems.contains {
        $0.contains("Z_MAX of CHANGE is 0, below the highest key of ACHANGE, 5")
      },
      "\(report.problems)")
    #expect(throws: VaultError.self) {
      try RestoreService.restore(
        archive: Location(path: archive), to: directory.path("r.sqlite").path)
    }
    // Numbered as Core Data numbers them, the same row passes.
    try database.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = 5 WHERE Z_NAME = 'CHANGE'")
    options.output = Location(path: directory.path("numbered.gvault").path)
    let numbered = try BackupService.backup(storePath: store, options: options).archive
    #expect(try VerifyService.verify(archive: Location(path: numbered)).ok)
  }

  @Test("the unforged archives pass verify and restore")
  func theSourcesAreSound() throws {
    for format: Int64 in [1, 2, 5] {
      let archive = try #require(Self.sources[format])
      let report = try VerifyService.verify(archive: Location(path: archive))
      #expect(report.ok, "\(report.problems)")
      let directory = try TemporaryDirectory()
      _ = try RestoreService.restore(
        archive: Location(path: archive), to: directory.path("r.sqlite").path)
      let chunks = try members(of: archive).map(\.path).filter { $0.hasPrefix("objects/Page/") }
      #expect(chunks.count >= 2, "the page chunks the swap forgery needs")
    }
  }

  @Test(
    "verify and restore both refuse a forged archive as bad data, and nothing else changes",
    arguments: cases)
  func verifyAndRestoreRefuseEveryForgery(forgery: Forgery, format: Int64) throws {
    let scene = try Scene(forgery, format: format)
    let report = try VerifyService.verify(archive: Location(path: scene.archive))
    #expect(!report.ok, "verify passed \(forgery) (format \(format))")
    #expect(!report.problems.isEmpty)
    let store = scene.directory.path("restored.sqlite").path
    do {
      _ = try RestoreService.restore(archive: Location(path: scene.archive), to: store)
      Issue.record("restore took \(forgery) (format \(format))")
    } catch {
      #expect(error.kind == .invalidInput, "\(forgery): \(error)")
    }
    try scene.expectUntouched("\(forgery), format \(format)")
  }

  @Test("export and fixture refuse a forged archive too", arguments: cases.filter { $0.1 == 2 })
  func exportAndFixtureRefuseEveryForgery(forgery: Forgery, format: Int64) throws {
    let scene = try Scene(forgery, format: format)
    var export = ExportService.Options()
    export.output = scene.directory.path("export.json").path
    #expect(throws: VaultError.self) {
      try ExportService.export(source: Location(path: scene.archive), options: export)
    }
    let fixture = FixtureService.Options(
      selection: .init(entity: "Book", limit: 2),
      output: Location(path: scene.directory.path("f.gvault").path))
    do {
      _ = try FixtureService.cut(source: Location(path: scene.archive), options: fixture)
      Issue.record("fixture took \(forgery)")
    } catch {
      #expect(error.kind == .invalidInput, "\(forgery): \(error)")
    }
    try scene.expectUntouched("\(forgery)")
  }

  @Test("a migrating restore of a forged archive refuses it before migrating anything")
  func aMigratingRestoreRefusesAForgedSchema() throws {
    let directory = try TemporaryDirectory()
    let precious = directory.path("precious.db").path
    let db = try Database(path: precious, mode: .readWriteCreate)
    try db.execute("CREATE TABLE precious (value TEXT)")
    let frozen = SharedFixtures.packageRoot.appendingPathComponent(
      "Fixtures/Archives/Library-1.gvault")
    var forger = try ArchiveForger(reading: frozen.path)
    try forger.addSchemaEntry(
      type: "table", name: "APP", table: "APP",
      sql: "CREATE TABLE APP (A); ATTACH DATABASE '\(precious)' AS v; DROP TABLE v.precious")
    let archive = directory.path("forged.gvault").path
    try forger.write(to: archive)
    var options = RestoreOptions()
    options.modelPath =
      SharedFixtures.packageRoot.appendingPathComponent(
        "Fixtures/Library.xcdatamodeld"
      ).path
    #expect {
      try RestoreService.restore(
        archive: Location(path: archive), to: directory.path("migrated.sqlite").path,
        options: options)
    } throws: { error in
      (error as? VaultError)?.kind == .invalidInput
    }
    #expect(
      try db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'precious'").scalar()
        == .integer(1))
    // Asked to, the restore leaves the entry out, says so, and migrates the rest.
    options.leaveOutUnsafeSchema = true
    let result = try RestoreService.restore(
      archive: Location(path: archive), to: directory.path("migrated.sqlite").path, options: options
    )
    #expect(result.leftOut.count == 1 && result.leftOut[0].contains("table APP"))
    #expect(
      try db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'precious'").scalar()
        == .integer(1))
  }

  @Test("with a password, an archive that is not encrypted is refused unless allowed")
  func aPlainStandInForAnEncryptedArchiveIsRefused() throws {
    let directory = try TemporaryDirectory()
    let password = directory.path("password")
    try Data("secret\n".utf8).write(to: password)
    var options = RestoreOptions()
    options.password = .file(password.path)
    let archive = try #require(Self.sources[2])
    do {
      _ = try RestoreService.restore(
        archive: Location(path: archive), to: directory.path("r.sqlite").path, options: options)
      Issue.record("a plain archive passed for an encrypted one")
    } catch {
      #expect(error.kind == .accessDenied)
      #expect(error.detail.contains("not encrypted"))
    }
    #expect {
      try VerifyService.verify(archive: Location(path: archive), password: .file(password.path))
    } throws: { error in
      (error as? VaultError)?.kind == .accessDenied
    }
    options.allowUnencrypted = true
    _ = try RestoreService.restore(
      archive: Location(path: archive), to: directory.path("r.sqlite").path, options: options)
  }
}
