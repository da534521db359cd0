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
  /// The archive an incremental archive builds on (nil for a full one).
  package let parent: Parent?
  /// The whole header, as read (keys this version does not know included).
  package let plist: PropertyListValue

  /// The archive an incremental archive was written against: its name in the same folder or
  /// prefix, when it was made, the SHA-256 of its index member's content, and how many
  /// incremental archives lie between this one and the full archive that starts the chain
  /// (``depth``: 1 for an incremental archive whose parent is the full one).
  package struct Parent: Equatable, Sendable {
    /// The parent's file name.
    package let name: String
    /// When the parent was made.
    package let created: PropertyListDate
    /// The SHA-256 of the parent's `index.plist`, in lower-case hexadecimal.
    package let index: String
    /// This archive's place in its chain: 1 for the first incremental after a full.
    package let depth: Int

    /// A parent named `name`.
    package init(name: String, created: PropertyListDate, index: String, depth: Int) {
      self.name = name
      self.created = created
      self.index = index
      self.depth = depth
    }
  }

  /// Whether the archive is incremental: readable only with its parents.
  package var isIncremental: Bool { parent != nil }

  /// The header of a backup made now.
  package init(
    expectedObjects: [String: Int]? = nil,
    formatVersion: Int64 = ArchiveLayout.formatVersion, created: PropertyListDate,
    compression: Compression, tool: String, sourcePath: String, sourceUUID: String,
    journalMode: String, model: ObjectModel, parent: Parent? = nil
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
    if let parent {
      fields["parent"] = [
        "name": .string(parent.name), "created": .date(parent.created),
        "index": .string(parent.index), "depth": .integer(Int64(parent.depth)),
      ]
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
    if let entry = plist["parent"] {
      // A parent that is not fully named is kept as one no archive has, so the archive is
      // never read as a full one.
      parent = Parent(
        name: entry["name"]?.stringValue ?? "",
        created: entry["created"]?.dateValue ?? .init(secondsSinceReferenceDate: 0),
        index: entry["index"]?.stringValue ?? "",
        depth: entry["depth"]?.integerValue.map { Int(clamping: $0) } ?? 0)
    } else {
      parent = nil
    }
  }
}
