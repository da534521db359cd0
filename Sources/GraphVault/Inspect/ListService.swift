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
  /// The archive format version, from the header.
  public let format: Int?
  /// Whether the index is present (an archive without it is incomplete).
  public let complete: Bool
  /// Whether the archive is encrypted.
  public let encrypted: Bool
  /// Why the archive could not be read, when it could not.
  public let error: String?
  /// Whether this is no archive but what a run that died mid-write left (a temporary file, an
  /// unfinished upload): the next backup of its store, or a prune, removes it.
  public var leftover = false

  /// The total number of objects.
  public var totalObjects: Int { objects.values.reduce(0, +) }
}

/// `graphvault list`: what archives hold, from their headers and indexes.
public enum ListService {
  /// Summaries of one archive (`-`: standard input), or of every `.gvault` archive in a
  /// folder, newest first. Encrypted archives are opened with the password from `password`;
  /// in a folder, one that cannot be opened is listed with the reason.
  /// - Throws: ``VaultError``; for a single archive, also when it cannot be read or opened.
  public static func list(path: String, password: PasswordSource? = nil) throws(VaultError)
    -> [ArchiveSummary]
  {
    try vault {
      let remote = ArchiveAccess.isRemote(path)
      guard
        remote || ArchiveAccess.isStandardStream(path)
          || FileManager.default.fileExists(atPath: path)
      else {
        throw VaultError(.inputMissing, "no archive or folder at this path (\(path))")
      }
      guard ArchiveAccess.isFolder(path) else {
        let size =
          remote
          ? nil : (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber
        let (summary, failure) = summarize(path, bytes: size?.int64Value, password: password)
        if let failure { throw failure }
        return [summary]
      }
      let backend = try ArchiveAccess.folder(path)
      let summaries = try backend.list().map {
        summarize(backend.address(of: $0.name), bytes: $0.size, password: password).summary
      }
      let leftovers = try backend.leftovers().map { leftover in
        var summary = ArchiveSummary(
          archive: backend.address(of: leftover.name), created: nil, source: nil, model: nil,
          modelVersion: nil, objects: [:], tables: [:], bytes: leftover.size, format: nil,
          complete: false, encrypted: false,
          error:
            "left by a run that did not finish: the next backup of its store, or a prune, removes it"
        )
        summary.leftover = true
        return summary
      }
      return summaries.sorted { ($0.created ?? "", $0.archive) > ($1.created ?? "", $1.archive) }
        + leftovers.sorted { $0.archive < $1.archive }
    }
  }

  /// Reads the header and the index of the archive at `archive`; object chunks are skipped,
  /// not decoded (a sealed archive's are opened, to reach its index).
  /// - Parameter bytes: the archive's size, when known (else the bytes read are counted).
  /// - Returns: the summary, and why the archive could not be read when it could not.
  static func summarize(_ archive: String, bytes: Int64?, password: PasswordSource?) -> (
    summary: ArchiveSummary, failure: VaultError?
  ) {
    var header: ArchiveHeader?
    var index: PropertyListValue?
    var failure: VaultError?
    var size = bytes ?? 0
    var encrypted = false
    do {
      let reader = try ArchiveAccess.reader(archive)
      let stream = MemberStream(reader: reader, name: ArchiveAccess.displayName(archive)) {
        () throws -> [UInt8]? in try password?.read()
      }
      defer {
        if bytes == nil { size = reader.archiveOffset }
        encrypted = stream.isSealed
      }
      let wanted: (String) -> Bool = { $0 == ArchiveLayout.header || $0 == ArchiveLayout.index }
      while let member = try stream.next(hash: false, wantBytes: wanted) {
        guard let bytes = member.bytes else { continue }
        let value: PropertyListValue
        do {
          value = try PropertyListValue(binaryPropertyList: bytes)
        } catch {
          throw ArchiveFormatError(member: member.path, "not a valid property list: \(error)")
        }
        if member.path == ArchiveLayout.header {
          header = ArchiveHeader(reading: value)
        } else {
          index = value
        }
      }
    } catch {
      let wrapped = VaultError(wrapping: error)
      failure =
        wrapped.detail.contains(archive)
        ? wrapped : VaultError(wrapped.kind, "\(wrapped.detail) (\(archive))", cause: wrapped)
      if wrapped.kind == .accessDenied { encrypted = true }
    }
    if header == nil && failure == nil {
      failure = VaultError(
        .invalidInput, "not a graphvault archive (no graphvault.plist) (\(archive))")
    }
    func counts(_ key: String) -> [String: Int] {
      (index?[key]?.dictionaryValue ?? [:]).compactMapValues { $0.integerValue.map(Int.init) }
    }
    let summary = ArchiveSummary(
      archive: archive, created: header?.created.map(\.description),
      source: header?.sourcePath, model: header?.modelName,
      modelVersion: header?.modelVersionName, objects: counts("objects"),
      tables: counts("tables"), bytes: size,
      format: header.map { Int($0.formatVersion) }, complete: index != nil && header != nil,
      encrypted: encrypted, error: header == nil ? failure?.detail : nil)
    return (summary, header == nil ? failure : nil)
  }
}
