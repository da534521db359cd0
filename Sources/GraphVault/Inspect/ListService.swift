import ArchiveFormat
import ArchiveStorage
import Foundation
import PropertyList

/// One archive as `graphvault list` shows it.
public struct ArchiveSummary: Codable, Sendable {
  /// The archive's path.
  public let archive: String
  /// When the backup was made (ISO 8601, UTC), from the header.
  public let created: String?
  /// The source store's path, from the header.
  public let source: String?
  /// The model's name and version, from the header.
  public let model: String?
  /// The model version's name.
  public let modelVersion: String?
  /// Objects per entity, from the index.
  public let objects: [String: Int]
  /// Rows per table outside the model, from the index.
  public let tables: [String: Int]
  /// The archive's size in bytes.
  public let bytes: Int64
  /// Whether the index is present (an archive without it is incomplete).
  public let complete: Bool
  /// Why the archive could not be read, when it could not.
  public let error: String?

  /// The total number of objects.
  public var totalObjects: Int { objects.values.reduce(0, +) }
}

/// `graphvault list`: what archives hold, from their headers and indexes.
public enum ListService {
  /// Summaries of one archive, or of every `.gvault` archive in a folder, newest first.
  public static func list(path: String) throws(VaultError) -> [ArchiveSummary] {
    try vault {
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw VaultError(.inputMissing, "no archive or folder at this path (\(path))")
      }
      guard isDirectory.boolValue else {
        let size =
          ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?
          .int64Value ?? 0
        let summary = summarize(path, bytes: size)
        if let error = summary.error { throw VaultError(.invalidInput, "\(error) (\(path))") }
        return [summary]
      }
      let backend = LocalFolderBackend(folder: path)
      let summaries = try backend.list().map {
        summarize(backend.path(of: $0.name), bytes: $0.size)
      }
      return summaries.sorted { ($0.created ?? "", $0.archive) > ($1.created ?? "", $1.archive) }
    }
  }

  /// Reads the header and the index of the archive at `archive`, `bytes` long; object chunks
  /// are skipped, not decoded.
  static func summarize(_ archive: String, bytes: Int64) -> ArchiveSummary {
    var header: ArchiveHeader?
    var index: PropertyListValue?
    var failure: String?
    do {
      let wanted: (String) -> Bool = { $0 == ArchiveLayout.header || $0 == ArchiveLayout.index }
      try ArchiveScanner(reader: ArchiveAccess.reader(archive)).forEachMember(
        hashAll: false, wantBytes: wanted
      ) { member in
        guard let bytes = member.bytes else { return }
        let value = try PropertyListValue(binaryPropertyList: bytes)
        if member.path == ArchiveLayout.header {
          header = ArchiveHeader(reading: value)
        } else {
          index = value
        }
      }
    } catch {
      failure = VaultError(wrapping: error).detail
    }
    if header == nil && failure == nil {
      failure = "not a graphvault archive (no graphvault.plist)"
    }
    func counts(_ key: String) -> [String: Int] {
      (index?[key]?.dictionaryValue ?? [:]).compactMapValues { $0.integerValue.map(Int.init) }
    }
    return ArchiveSummary(
      archive: archive, created: header?.created.map(\.description),
      source: header?.sourcePath, model: header?.modelName,
      modelVersion: header?.modelVersionName, objects: counts("objects"),
      tables: counts("tables"), bytes: bytes, complete: index != nil && header != nil,
      error: header == nil ? failure : nil)
  }
}
