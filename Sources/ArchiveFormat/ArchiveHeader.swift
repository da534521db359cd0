import ObjectModel
import PropertyList

/// An archive's first member, `graphvault.plist`: the format version, the tool, when the backup
/// was made, how it is compressed, where the data came from and the model it was written with.
package struct ArchiveHeader {
  /// The format version the archive was written in.
  package let formatVersion: Int64
  /// When the backup was made.
  package let created: PropertyListDate?
  /// The source store's path (absolute, standardized).
  package let sourcePath: String?
  /// The source store's UUID (`Z_UUID`).
  package let sourceUUID: String?
  /// The source store's journal mode (`wal`, `delete`, …).
  package let journalMode: String?
  /// The model's name.
  package let modelName: String?
  /// The model version's name.
  package let modelVersionName: String?
  /// The objects of each entity the backup was about to write, as the store counted them (from
  /// 0.3.0 on; nil in older archives): what a restore's progress counts towards. The index's
  /// counts, of what was written, are the ones every check holds the archive to.
  package let expectedObjects: [String: Int]?
  /// The whole header, as read (keys this version does not know included).
  package let plist: PropertyListValue

  /// The header of a backup made now.
  package init(
    expectedObjects: [String: Int]? = nil,
    formatVersion: Int64 = ArchiveLayout.formatVersion, created: PropertyListDate,
    compression: Compression, tool: String, sourcePath: String, sourceUUID: String,
    journalMode: String, model: ObjectModel
  ) {
    let plist: PropertyListValue = [
      "format": .integer(formatVersion),
      "tool": .string(tool),
      "created": .date(created),
      "compression": .string(compression.rawValue),
      "source": [
        "path": .string(sourcePath),
        "uuid": .string(sourceUUID),
        "journalMode": .string(journalMode),
      ],
      "model": .dictionary(
        [
          "name": .string(model.name),
          "versionIdentifiers": .array(model.versionIdentifiers.map(PropertyListValue.string)),
          "entityVersionHashes": .dictionary(
            model.entityVersionHashes.mapValues(PropertyListValue.data)),
          "fingerprint": .string(model.fingerprint),
        ].merging(model.versionName.map { ["versionName": PropertyListValue.string($0)] } ?? [:]) {
          a, _ in a
        }),
    ]
    var fields = plist.dictionaryValue ?? [:]
    if let expectedObjects {
      fields["objects"] = .dictionary(expectedObjects.mapValues { .integer(Int64($0)) })
    }
    self.init(reading: .dictionary(fields))
  }

  /// A header as read from an archive; fields it lacks are nil.
  package init(reading plist: PropertyListValue) {
    self.plist = plist
    formatVersion = plist["format"]?.integerValue ?? 0
    created = plist["created"]?.dateValue
    sourcePath = plist["source"]?["path"]?.stringValue
    sourceUUID = plist["source"]?["uuid"]?.stringValue
    journalMode = plist["source"]?["journalMode"]?.stringValue
    modelName = plist["model"]?["name"]?.stringValue
    modelVersionName = plist["model"]?["versionName"]?.stringValue
    expectedObjects = plist["objects"]?.dictionaryValue?.compactMapValues {
      $0.integerValue.map(Int.init)
    }
  }
}
