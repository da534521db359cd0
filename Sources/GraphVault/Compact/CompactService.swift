import ArchiveFormat
import ArchiveStorage
import Foundation
import PropertyList

/// `graphvault compact`: a full archive of the point an archive holds (an incremental one with
/// its chain), written without the source store, so that a chain can be shortened and its
/// older archives let go.
public enum CompactService {
  /// Compact settings.
  public struct Options: Sendable {
    /// A file, or a folder or `s3://BUCKET/PREFIX/` for `<store>-<time>.gvault`.
    public var output: Location?
    /// The password of the chain; the full archive is encrypted with it too.
    public var password: PasswordSource?
    /// Read a plain chain although a password was given.
    public var allowUnencrypted = false
    /// The compression of the full archive.
    public var compression: Compression = .zstd
    /// Where the run reports how far it has got.
    public var meter: ProgressMeter?

    /// Defaults: the current folder, zstd, no password.
    public init() {}
  }

  /// Writes a full archive of the point `archive` holds: its chain (every check a restore
  /// makes) restored into a private store, and that store backed up with the archive's
  /// creation time, source and model, as the backup of that moment would have been. The new
  /// archive starts a chain of its own (a new ledger seed); the old one is not touched.
  /// - Throws: ``VaultError``: what restoring the chain or writing the archive throws.
  public static func compact(archive: Location, options: Options = Options())
    throws(VaultError) -> BackupResult
  {
    try vault {
      try ArchiveAccess.requireInput(archive)
      guard !archive.isStandardStream else {
        throw VaultError(
          .usage, "compact reads an archive in a folder or prefix, not standard input")
      }
      let header = try RestoreService.header(of: archive, password: options.password)
      let source = header.sourcePath ?? archive.lastComponent
      let scratch = try ScratchFolder()
      defer { withExtendedLifetime(scratch) {} }
      // Named as the source was, so the archive is named after it.
      let store = scratch.path(
        URL(fileURLWithPath: source).lastPathComponent,
        standingFor: "the point \(archive) holds")
      var restore = RestoreOptions()
      restore.password = options.password
      restore.allowUnencrypted = options.allowUnencrypted
      restore.meter = options.meter
      let (_, model) = try RestoreService.restoreReadingModel(
        archive: archive, to: store, options: restore)
      var backup = BackupService.Options()
      backup.output = options.output
      backup.compression = options.compression
      backup.password = options.password
      // Into the chain's own folder, under its password: no change of password is meant.
      backup.newPassword = true
      backup.recordedSourcePath = source
      backup.model = model
      backup.meter = options.meter
      if let created = header.created {
        backup.now = Date(timeIntervalSince1970: created.secondsSince1970)
      }
      return try BackupService.backup(storePath: store, options: backup)
    }
  }
}
