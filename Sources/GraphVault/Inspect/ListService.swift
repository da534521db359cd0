import ArchiveFormat
import ArchiveStorage
import Foundation
import PropertyList

/// One archive as `graphvault list` shows it.
public struct ArchiveSummary: Codable, Sendable {
  /// What could be read of an archive.
  public enum State: String, Codable, Sendable {
    /// Its header and index were read: every member it should have is there.
    case complete
    /// Its header was read and it has no index: a backup that did not finish writing it.
    case incomplete
    /// It is encrypted and no password was given.
    case passwordNeeded = "password needed"
    /// It is encrypted and the password given does not open it.
    case wrongPassword = "wrong password"
    /// It could not be read (``ArchiveSummary/error`` says why): damaged, or not an archive.
    case unreadable
    /// No archive, but what a run that died mid-write left.
    case leftover
  }

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
  /// The bytes read of it to make this summary (a framed archive's trailer, index and header;
  /// of another, everything up to its index).
  public var bytesRead: Int64 = 0
  /// Why the archive could not be read, when it could not.
  public let error: String?
  /// What could be read of it.
  public var state: State
  /// What kind of failure kept it from being read, when one did.
  public var failure: VaultError.Kind?

  /// Whether this is no archive but what a run that died mid-write left (a temporary file, an
  /// unfinished upload): the next backup of its store, or a prune, removes it (the state
  /// ``State/leftover``).
  public var leftover = false
  /// `full`, or `incremental` for an archive restored with its chain of parents (nil when the
  /// header could not be read).
  public var kind: String?
  /// An incremental archive's parent (its file name, beside it).
  public var parent: String?
  /// An incremental archive's place in its chain (1 for the first after a full archive; 0 for
  /// a full one).
  public var depth: Int?

  /// The state as a listing shows it: `complete`, `complete, encrypted`, `INCOMPLETE`,
  /// `encrypted: password needed`, `encrypted: wrong password`, `unreadable: why`, `LEFTOVER`.
  public var stateText: String {
    switch state {
    case .complete: return encrypted ? "complete, encrypted" : "complete"
    case .incomplete: return "INCOMPLETE (no index)" + (encrypted ? ", encrypted" : "")
    case .passwordNeeded: return "encrypted: password needed"
    case .wrongPassword: return "encrypted: wrong password"
    case .unreadable: return "unreadable: \(error ?? "unknown")"
    case .leftover: return "LEFTOVER"
    }
  }

  /// The total number of objects.
  public var totalObjects: Int { objects.values.reduce(0, +) }
}

/// `graphvault list`: what archives hold, from their headers and indexes.
public enum ListService {
  /// Whether `path` names a location of archives (a folder or an `s3://` prefix), which `list`
  /// shows one line an archive, rather than one archive.
  public static func isLocation(_ location: Location) -> Bool { location.isFolder }

  /// Summaries of one archive (`-`: standard input), or of every `.gvault` archive in a
  /// folder or `s3://` prefix, newest first (an archive whose header cannot be read by the
  /// time in its name), then what killed runs left. Encrypted archives are opened with the
  /// password from `password`; in a location, every archive is listed, one that cannot be
  /// opened with its ``ArchiveSummary/state`` and the reason.
  /// - Throws: ``VaultError``; for a single archive, also when it cannot be read or opened.
  public static func list(_ path: Location, password: PasswordSource? = nil) throws(VaultError)
    -> [ArchiveSummary]
  {
    try vault {
      guard path.mayExist else {
        throw VaultError(.inputMissing, "no archive or folder at this path (\(path))")
      }
      guard path.isFolder else {
        let size = path.localPath.flatMap {
          (try? FileManager.default.attributesOfItem(atPath: $0))?[.size] as? NSNumber
        }
        let (summary, failure) = summarize(path, bytes: size?.int64Value, password: password)
        if let failure { throw failure }
        return [summary]
      }
      let backend = try path.folder()
      let summaries = try backend.list().map {
        summarize(
          path.sibling($0.name, in: backend), bytes: $0.size, password: password,
          listed: ($0, backend)
        ).summary
      }
      let leftovers = try backend.leftovers().map { leftover in
        ArchiveSummary(
          archive: backend.address(of: leftover.name), created: nil, source: nil, model: nil,
          modelVersion: nil, objects: [:], tables: [:], bytes: leftover.size, format: nil,
          complete: false, encrypted: false,
          error:
            "left by a run that did not finish: the next backup of its store, or a prune, removes it",
          state: .leftover, leftover: true)
      }
      // An archive whose header could not be read is placed by the time in its name.
      func time(_ summary: ArchiveSummary) -> String {
        summary.created
          ?? ArchiveNaming.time(ofArchive: Location.lastComponent(of: summary.archive)) ?? ""
      }
      return summaries.sorted { (time($0), $0.archive) > (time($1), $1.archive) }
        + leftovers.sorted { $0.archive < $1.archive }
    }
  }

  /// Reads the header and the index of the archive at `location`: from its two ends when it has
  /// them (``ArchiveAccess/readEnds(_:listed:password:allowingUnencrypted:)``), else from its
  /// start, object chunks skipped, not decoded (a sealed archive's are opened, to reach its
  /// index).
  /// - Parameters:
  ///   - bytes: the archive's size, when known (else the bytes read are counted).
  ///   - listed: the archive as its backend listed it, whose copy of its ends, when the
  ///     backend keeps one, is read first.
  /// - Returns: the summary, and why the archive could not be read when its header could not.
  static func summarize(
    _ location: Location, bytes: Int64?, password: PasswordSource?,
    listed: (archive: StoredArchive, backend: any StorageBackend)? = nil
  ) -> (summary: ArchiveSummary, failure: VaultError?) {
    let archive = location.description
    var read = ArchiveAccess.StreamedEnds()
    var failure: VaultError?
    do {
      // Its header and index from its two ends, where they can be read there.
      if let ends = try ArchiveAccess.readEnds(
        location, listed: listed, password: password, allowingUnencrypted: true)
      {
        return summary(
          archive, header: ends.header, index: ends.index, size: bytes ?? ends.size,
          bytesRead: ends.bytesRead, encrypted: ends.encrypted, failure: nil)
      }
      try ArchiveAccess.readFromStart(
        location, depth: .skipped, password: password, allowingUnencrypted: true, into: &read)
    } catch {
      let wrapped = VaultError(wrapping: error)
      failure =
        wrapped.detail.contains(archive)
        ? wrapped : VaultError(wrapped.kind, "\(wrapped.detail) (\(archive))", cause: wrapped)
      if wrapped.kind == .accessDenied { read.encrypted = true }
    }
    return summary(
      archive, header: read.header, index: read.index, size: bytes ?? read.bytesRead,
      bytesRead: read.bytesRead, encrypted: read.encrypted, failure: failure)
  }

  /// The summary of what was read of `archive`, and the failure thrown for one archive (one
  /// whose header could not be read).
  private static func summary(
    _ archive: String, header: ArchiveHeader?, index: PropertyListValue?, size: Int64,
    bytesRead: Int64, encrypted: Bool, failure: VaultError?
  ) -> (summary: ArchiveSummary, failure: VaultError?) {
    var failure = failure
    if header == nil && failure == nil {
      failure = VaultError(
        .invalidInput, "not a graphvault archive (no graphvault.plist) (\(archive))")
    }
    func counts(_ key: String) -> [String: Int] {
      (index?[key]?.dictionaryValue ?? [:]).compactMapValues { $0.integerValue.map(Int.init) }
    }
    let state: ArchiveSummary.State
    if header != nil, failure != nil {
      // Damage past the header: the archive is not merely unfinished.
      state = .unreadable
    } else if header == nil {
      switch (failure?.cause as? VaultError)?.cause ?? failure?.cause {
      case let error as ArchiveFormatError where error.kind == .passwordRequired:
        state = .passwordNeeded
      case let error as ArchiveFormatError where error.kind == .wrongPassword:
        state = .wrongPassword
      default: state = .unreadable
      }
    } else {
      state = index == nil ? .incomplete : .complete
    }
    var summary = ArchiveSummary(
      archive: archive, created: header?.created.map(\.description),
      source: header?.sourcePath, model: header?.modelName,
      modelVersion: header?.modelVersionName, objects: counts("objects"),
      tables: counts("tables"), bytes: size,
      format: header.map { Int($0.formatVersion) }, complete: index != nil && header != nil,
      encrypted: encrypted, error: failure?.detail, state: state, failure: failure?.kind)
    summary.bytesRead = bytesRead
    if let header {
      summary.kind = header.isIncremental ? "incremental" : "full"
      summary.parent = header.parent?.name
      summary.depth = header.parent?.depth ?? 0
    }
    return (summary, header == nil ? failure : nil)
  }
}
