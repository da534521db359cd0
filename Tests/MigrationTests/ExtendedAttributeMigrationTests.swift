import Foundation
import GraphVault
import ObjectModel
import ObjectStore
import PropertyList
import SQLite
import TestSupport
import Testing

/// A store whose entity keeps extended attributes, backed up and restored as it is, then
/// migrated to a version where one extended key became a native attribute.
@Suite("Extended attributes through backup, restore and migration")
struct ExtendedAttributeMigrationTests {
  let directory: TemporaryDirectory
  let modelSet: String

  init() throws {
    directory = try TemporaryDirectory()
    let set = directory.path("Notes.xcdatamodeld")
    try FileManager.default.createDirectory(at: set, withIntermediateDirectories: true)
    try """
    <?xml version="1.0" encoding="UTF-8"?>
    <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>Notes 2.xcdatamodel</string></dict></plist>
    """.write(
      to: set.appendingPathComponent(".xccurrentversion"), atomically: false, encoding: .utf8)
    for (version, mood) in [
      ("Notes", ""),
      ("Notes 2", #"<attribute name="mood" optional="YES" attributeType="String"/>"#),
    ] {
      let folder = set.appendingPathComponent("\(version).xcdatamodel")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      try """
      <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
      <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" userDefinedModelVersionIdentifier="\(version)">
          <entity name="Note" representedClassName="Note" syncable="YES">
              <attribute name="extendedData" optional="YES" attributeType="Binary"/>
              \(mood)
              <attribute name="title" attributeType="String"/>
              <userInfo>
                  <entry key="graphvault.extendedAttributes" value="extendedData"/>
              </userInfo>
          </entity>
      </model>
      """.write(to: folder.appendingPathComponent("contents"), atomically: false, encoding: .utf8)
    }
    modelSet = set.path
  }

  func rows(_ store: String) throws -> [[SQLiteValue]] {
    try Database(path: store, mode: .readOnly).prepare(
      "SELECT Z_PK, ZTITLE, ZEXTENDEDDATA FROM ZNOTE ORDER BY Z_PK"
    ).allRows()
  }

  @Test func extendedKeysSurviveBackupAndRestoreAndAKeyIsPromotedToANewAttribute() throws {
    let store = directory.path("notes.sqlite").path
    try StoreService.create(at: store, modelPath: modelSet, versionName: "Notes", force: false)
    let model = try ModelSource.model(at: modelSet, versionName: "Notes")
    do {
      let context = try ObjectContext(storePath: store, model: model)
      for (title, mood, stars) in [("a", "calm", 3), ("b", nil, 5), ("c", "grim", nil)] {
        let note = try context.insert("Note")
        try note.setValue(.string(title), for: "title")
        if let mood { try note.setValue(.string(mood), forExtendedKey: "mood") }
        if let stars { try note.setValue(.integer(Int64(stars)), forExtendedKey: "stars") }
      }
      try context.save()
    }
    let archive = directory.path("notes.gvault").path
    var backup = BackupService.Options()
    backup.output = Location(path: archive)
    _ = try BackupService.backup(storePath: store, options: backup)

    let restored = directory.path("restored.sqlite").path
    _ = try RestoreService.restore(archive: Location(path: archive), to: restored)
    #expect(try rows(restored) == rows(store))

    let mapping = directory.path("mapping.json")
    try """
    {"format": 1, "hops": [{"from": "Notes", "to": "Notes 2",
      "entities": {"Note": {"attributes": {"mood": {"fromExtended": "mood"}}}}}]}
    """.write(to: mapping, atomically: false, encoding: .utf8)
    var options = RestoreOptions()
    options.modelPath = modelSet
    options.mappingPaths = [mapping.path]
    let migrated = directory.path("migrated.sqlite").path
    let result = try RestoreService.restore(
      archive: Location(path: archive), to: migrated, options: options)
    #expect(result.modelVersion == "Notes 2")
    let current = try ModelSource.model(at: modelSet, versionName: "Notes 2")
    let context = try ObjectContext(storePath: migrated, model: current)
    let notes = try context.fetch(FetchRequest(entity: "Note", sortDescriptors: [.init("title")]))
    #expect(try notes.map { try $0.value(for: "mood") } == [.string("calm"), nil, .string("grim")])
    // The promoted key left the bucket; a bucket with nothing left is NULL.
    #expect(
      try notes.map { try $0.extendedValues() } == [
        ["stars": .integer(3)], ["stars": .integer(5)], [:],
      ])
    let stored = try Database(path: migrated, mode: .readOnly).prepare(
      "SELECT ZEXTENDEDDATA IS NULL FROM ZNOTE ORDER BY ZTITLE"
    ).allRows().map { $0[0].integerValue }
    #expect(stored == [0, 0, 1])
    // And the native attribute can now be fetched in SQL.
    #expect(try context.fetch(FetchRequest(entity: "Note", predicate: "mood == 'grim'")).count == 1)
  }
}
