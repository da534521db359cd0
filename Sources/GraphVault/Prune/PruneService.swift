import ArchiveFormat
import ArchiveStorage
import Foundation

/// What a prune kept, removed and found.
public struct PruneReport: Codable, Sendable {
  /// An archive a policy keeps.
  public struct Kept: Codable, Sendable {
    /// The archive's name.
    public let archive: String
    /// When it was made (ISO 8601, UTC, from its header).
    public let created: String
    /// The policies that keep it (`last`, `daily`, `within`, `oldest monthly`, …).
    public let reasons: [String]
  }

  /// An archive no policy keeps.
  public struct Removed: Codable, Sendable {
    /// The archive's name.
    public let archive: String
    /// When it was made.
    public let created: String
    /// Its size in bytes.
    public let bytes: Int64
  }

  /// The archives of one source store.
  public struct Group: Codable, Sendable {
    /// The store the archives were made from (as their headers record it).
    public let source: String
    /// What stays, newest first.
    public let keep: [Kept]
    /// What goes, newest first.
    public let remove: [Removed]
  }

  /// An archive that is incomplete or damaged: never counted by a policy, never removed.
  public struct Unusable: Codable, Sendable {
    /// The archive's name.
    public let archive: String
    /// What is wrong with it.
    public let problem: String
  }

  /// An archive a prune with a password did not count, because the password does not open it:
  /// a plain archive (anyone can write one), or one encrypted with another password. Never
  /// counted by a policy, never removed.
  public struct NotOpened: Codable, Sendable {
    /// The archive's name.
    public let archive: String
    /// Why it was not counted.
    public let reason: String
  }

  /// What a killed run left (a hidden temporary file no living run holds).
  public struct Leftover: Codable, Sendable {
    /// The file's name.
    public let name: String
    /// Its size in bytes.
    public let bytes: Int64
  }

  /// The folder pruned.
  public let folder: String
  /// Whether nothing was removed.
  public let dryRun: Bool
  /// The archives, by source store.
  public let groups: [Group]
  /// Incomplete or damaged archives, kept and not counted.
  public let unusable: [Unusable]
  /// Archives the password does not open (a prune with a password), kept and not counted.
  public let notOpened: [NotOpened]
  /// Leftovers of killed runs (removed unless dry run).
  public let leftovers: [Leftover]
  /// The bytes read of the archives to decide (their headers and indexes, or more).
  public var bytesRead: Int64 = 0
}

/// `graphvault prune`: removes the archives a retention policy does not keep, with restic's
/// `forget` semantics (``RetentionPolicy``), and what killed runs left.
public enum PruneService {
  /// Prune settings.
  public struct Options: Sendable {
    /// What to keep.
    public var policy = RetentionPolicy()
    /// Say what would go; remove nothing.
    public var dryRun = false
    /// The password of encrypted archives (prune reads each archive's header and index). With
    /// a password, only the archives it opens are counted and removed.
    public var password: PasswordSource?
    /// With a password, count plain archives too (they are refused otherwise: anyone who can
    /// write to the folder can write one, dated as they like).
    public var allowUnencrypted = false
    /// Read every archive whole and check every member against its index before deciding
    /// (otherwise a framed archive is decided from its header and index alone, read by parts).
    public var readData = false
    /// How long to wait for running backups into the folder, in seconds.
    public var wait: Double?
    /// Where the run reports how far it has got: the archives checked (and their bytes read),
    /// then the archives removed.
    public var meter: ProgressMeter?

    /// A policy that keeps nothing: set at least one count.
    public init() {}
  }

  /// Prunes the archives in `folder`.
  ///
  /// Holds the folder's lock alone (backups into it share it), so nothing is written meanwhile.
  /// Each archive's header and index are read and checked: a framed archive's (a plain zstd
  /// one) by three ranged reads, its trailer, its index and its header checked against the
  /// index, as restic's `forget` reads only what it decides from; any other archive (sealed,
  /// another compression, or one whose trailer is gone: truncated) is read whole and every
  /// member checked against its index (sizes, SHA-256; a sealed archive's members
  /// authenticated), as every archive is with ``Options/readData``. One that fails is
  /// unusable, reported and kept, and never counts toward a policy. The others are grouped by
  /// the source store their header names, and each group is pruned on its own by the creation
  /// times their headers record.
  ///
  /// With a password, the archives it does not open (plain ones, unless
  /// ``Options/allowUnencrypted``, and ones encrypted with another password) are reported and
  /// neither counted nor removed: a planted plain archive, dated in the future, can never make
  /// a prune remove the archives it was given the password of.
  /// - Throws: ``VaultError``: no folder, a locked folder, an encrypted archive without a
  ///   password, or a password that opens none of the archives (77, before anything is
  ///   removed), an empty policy.
  public static func prune(folder: Location, options: Options) throws(VaultError) -> PruneReport {
    try vault {
      guard !options.policy.isEmpty else {
        throw VaultError(
          .usage, "give at least one --keep-* option: an empty policy would remove every archive")
      }
      guard folder.isRemote || folder.isFolder else {
        throw VaultError(.inputMissing, "no folder at this path (\(folder))")
      }
      let backend = try folder.folder()
      let lock = try backend.lock(BackupService.folderLock, shared: false, wait: options.wait)
      defer { lock.release() }

      var usable: [(archive: StoredArchive, header: ArchiveHeader, created: Date)] = []
      var unusable: [PruneReport.Unusable] = []
      var notOpened: [PruneReport.NotOpened] = []
      var bytesRead: Int64 = 0
      let archives = try backend.list().sorted(by: { $0.name < $1.name })
      let meter = options.meter
      meter?.startPhase("checking archives")
      meter?.setUnit("archives")
      meter?.setTotal(objects: archives.count)
      // Framed archives are read by parts: the bytes to read are known only with --read-data.
      meter?.setTotal(bytes: options.readData ? archives.reduce(0) { $0 + $1.size } : nil)
      for archive in archives {
        meter?.begin(archive.name)
        defer { meter?.add(objects: 1) }
        do {
          let (header, read) = try check(
            folder.sibling(archive.name, in: backend), size: archive.size,
            password: options.password,
            allowingUnencrypted: options.allowUnencrypted, readData: options.readData,
            meter: meter, listed: (archive, backend))
          bytesRead += read
          guard let created = header.created, header.sourcePath != nil else {
            unusable.append(
              .init(archive: archive.name, problem: "its header records no creation time or source")
            )
            continue
          }
          usable.append((archive, header, Date(timeIntervalSince1970: created.secondsSince1970)))
        } catch {
          let failure = VaultError(wrapping: error)
          if failure.kind == .accessDenied && options.password != nil {
            notOpened.append(.init(archive: archive.name, reason: failure.detail))
            continue
          }
          guard failure.kind != .accessDenied else {
            throw VaultError(
              .accessDenied,
              "\(archive.name) cannot be opened, so prune cannot tell its time or source: \(failure.detail); nothing was removed",
              cause: failure)
          }
          unusable.append(.init(archive: archive.name, problem: failure.detail))
        }
      }

      if usable.isEmpty, let first = notOpened.first {
        throw VaultError(
          .accessDenied,
          "the password opens none of the folder's \(notOpened.count) archive(s) (\(first.archive): \(first.reason)); nothing was removed"
        )
      }
      var groups: [PruneReport.Group] = []
      var doomed: [String] = []
      let bySource = Dictionary(grouping: usable, by: { $0.header.sourcePath ?? "" })
      for source in bySource.keys.sorted() {
        let members = bySource[source]!.sorted {
          ($0.created, $0.archive.name) > ($1.created, $1.archive.name)
        }
        var reasons = options.policy.apply(to: members.map(\.created))
        // A kept point in time needs its chain: every parent of a kept incremental archive
        // stays, whatever the policy says of it (restic's rule judges points, not files).
        let place = Dictionary(
          members.enumerated().map { ($1.archive.name, $0) }, uniquingKeysWith: { a, _ in a })
        var needing = members.indices.filter { !reasons[$0].isEmpty }
        while let child = needing.popLast() {
          guard let parent = members[child].header.parent.flatMap({ place[$0.name] }) else {
            continue
          }
          if reasons[parent].isEmpty { needing.append(parent) }
          let why = "parent of \(members[child].archive.name)"
          if !reasons[parent].contains(why) { reasons[parent].append(why) }
        }
        var keep: [PruneReport.Kept] = []
        var remove: [PruneReport.Removed] = []
        for (member, why) in zip(members, reasons) {
          let created = member.header.created?.description ?? ""
          if why.isEmpty {
            remove.append(
              .init(archive: member.archive.name, created: created, bytes: member.archive.size))
            doomed.append(member.archive.name)
          } else {
            keep.append(.init(archive: member.archive.name, created: created, reasons: why))
          }
        }
        groups.append(.init(source: source, keep: keep, remove: remove))
      }
      let leftovers = try backend.leftovers()
      if !options.dryRun {
        meter?.startPhase("removing archives")
        meter?.setUnit("archives")
        meter?.setTotal(objects: doomed.count)
        for name in doomed {
          meter?.begin(name)
          try backend.delete(name)
          meter?.add(objects: 1)
        }
        for leftover in leftovers { try? backend.removeLeftover(leftover.name) }
      }
      var report = PruneReport(
        folder: folder.description, dryRun: options.dryRun, groups: groups, unusable: unusable,
        notOpened: notOpened, leftovers: leftovers.map { .init(name: $0.name, bytes: $0.size) })
      report.bytesRead = bytesRead
      return report
    }
  }

  /// Checks the archive at `path`: its header and index read from its two ends, where they can
  /// be (``ArchiveAccess/readEnds(_:listed:password:allowingUnencrypted:)``: the header checked
  /// against the index), unless `readData`; any other archive read whole, every member checked
  /// against its index.
  /// - Parameters:
  ///   - size: the archive's size (what a whole read reads).
  ///   - listed: the archive as its backend listed it, when one did.
  /// - Returns: its header, and the bytes read.
  /// - Throws: what makes it unusable; ``VaultError/Kind/accessDenied`` when `password` does
  ///   not open it (a plain archive is refused unless `allowingUnencrypted`).
  static func check(
    _ path: Location, size: Int64, password: PasswordSource?, allowingUnencrypted: Bool = false,
    readData: Bool = false, meter: ProgressMeter? = nil,
    listed: (archive: StoredArchive, backend: any StorageBackend)? = nil
  ) throws -> (header: ArchiveHeader, bytesRead: Int64) {
    if !readData,
      let ends = try ArchiveAccess.readEnds(
        path, listed: listed, password: password, allowingUnencrypted: allowingUnencrypted)
    {
      meter?.add(bytes: ends.bytesRead)
      return (ends.header, ends.bytesRead)
    }
    var read = ArchiveAccess.StreamedEnds()
    try ArchiveAccess.readFromStart(
      path, depth: .checked, password: password, allowingUnencrypted: allowingUnencrypted,
      meter: meter, into: &read)
    // A checked read has a header, or has thrown.
    return (read.header!, size)
  }
}
