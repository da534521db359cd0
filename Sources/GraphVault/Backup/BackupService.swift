import ArchiveFormat
import ArchiveStorage
import Foundation
import LibArchive
import ObjectModel
import ObjectStore
import PropertyList

/// What a backup wrote.
public struct BackupResult: Codable, Sendable {
  /// The archive's path.
  public let archive: String
  /// Objects per entity.
  public let objects: [String: Int]
  /// Rows per table outside the model.
  public let tables: [String: Int]
  /// The archive's size in bytes.
  public let bytes: Int64
  /// The model version the data was written with, when known.
  public let modelVersion: String?
  /// `full` or `incremental`.
  public var kind = "full"
  /// An incremental archive's parent (its file name, beside it).
  public var parent: String?
  /// An incremental archive's place in its chain: 1 for the first after a full.
  public var depth: Int?
  /// Why a backup asked to be incremental wrote a full archive.
  public var fullBecause: String?
}

/// `graphvault backup`: walks a store's object graph into a compressed archive (format 1).
public enum BackupService {
  /// Backup settings.
  public struct Options: Sendable {
    /// The model (for stores without `Z_MODELCACHE`); a version set is matched to the store.
    public var modelPath: String?
    /// A file, a folder (or `s3://` prefix) for `<store>-<UTC time>.gvault`, or standard
    /// output; the current folder when nil.
    public var output: Location?
    /// The compression.
    public var compression: Compression = .zstd
    /// The creation time recorded (now when nil; restic's `backup --time`).
    public var now: Date?
    /// Encrypt the archive with the password from here (``ArchiveSeal``).
    public var password: PasswordSource?
    /// Back up into a location whose newest archive of the store is under another password
    /// (or none, or encrypted while this backup is not): the change of password is meant.
    public var newPassword = false
    /// How long to wait for another run's lock, in seconds (not at all when nil).
    public var wait: Double?
    /// Where the run reports how far it has got (objects of the store's total, bytes written).
    public var meter: ProgressMeter?
    /// The source path recorded in the header (the store's own when nil); a fixture records
    /// the store it was cut from, not its temporary copy.
    public var recordedSourcePath: String?
    /// The archive format version to write (``ArchiveLayout/formatVersions``; the newest by
    /// default, 1 for a reader that knows only format 1).
    public var formatVersion: Int64 = ArchiveLayout.formatVersion
    /// The model, when the caller has it already (a store restored from an archive that
    /// carried no model cache); it comes before ``modelPath``.
    var model: ObjectModel?
    /// Write an incremental archive: only what changed since the newest complete archive of
    /// the same store (by its UUID) in the destination folder or prefix, or since ``parent``;
    /// a full one when there is none to build on (``BackupResult/fullBecause`` says why).
    public var incremental = false
    /// The parent of an incremental archive, by name or path, in the destination folder.
    public var parent: String?
    /// Start a new chain with a full archive once a chain holds this many archives.
    public var fullEvery: Int?
    /// The seed of a full archive's change ledger (a random one when nil): fixed where the
    /// archive's bytes must depend only on its content (fixtures).
    var ledgerSeed: UInt64?

    /// Defaults: the store's own model, `<store>-<time>.gvault` here, zstd.
    public init() {}
  }

  /// Backs up the store at `storePath`. The store is read in one read transaction and never
  /// changed; the archive is written to a temporary file beside the destination (mode 0600),
  /// synced and moved into place only when complete, under a name no other archive has.
  ///
  /// Two backups of stores of one name into one folder do not overlap: the second waits up to
  /// ``Options/wait`` for the first, else fails as locked; a prune of the folder waits for both.
  public static func backup(storePath: String, options: Options = Options()) throws(VaultError)
    -> BackupResult
  {
    try vault {
      // Where the archive goes is settled first: a missing folder fails before any work.
      let target = try destination(store: storePath, output: options.output)
      let readable = try ReadableStore(storePath)
      // The archive names the store as given, even when it is read from a copy.
      var options = options
      options.recordedSourcePath =
        options.recordedSourcePath ?? URL(fileURLWithPath: storePath).standardizedFileURL.path
      defer { withExtendedLifetime(readable) {} }
      // A store in rollback-journal mode is locked while an app commits: wait for it.
      let identity = StoreUsers.FileIdentity(readable.path)
      let store = try CoreDataStore(
        path: readable.path,
        busyTimeout: max(CoreDataStore.defaultBusyTimeout, options.wait ?? 0))
      guard ArchiveLayout.formatVersions.contains(options.formatVersion) else {
        throw VaultError(
          .usage, ArchiveLayout.unsupportedFormat(options.formatVersion, verb: "writes"))
      }
      if options.incremental || options.parent != nil {
        guard options.formatVersion >= ArchiveLayout.ledgerFormat else {
          throw VaultError(
            .usage,
            "an incremental backup needs archive format \(ArchiveLayout.ledgerFormat) or later, not \(options.formatVersion)"
          )
        }
        if case .standardOutput = target {
          throw VaultError(
            .usage,
            "an incremental backup goes into a folder or s3:// prefix that holds its parent, not to standard output"
          )
        }
      }
      let model = try options.model ?? ModelResolver.model(of: store, modelPath: options.modelPath)
      let layout = try store.layout(for: model)
      let seal = try options.password.map {
        try ArchiveSeal.create(password: $0.read(), compression: options.compression)
      }
      var locks: [any StorageLock] = []
      defer { for lock in locks { lock.release() } }
      let output: any ArchiveOutput
      let now: Date
      var tip: Result<ChainTip, ChainTip.NoParent>?
      switch target {
      case .standardOutput:
        now = options.now ?? Date()
        output = StandardStream.output()
      case .folder(let backend, let fixedName, let place):
        let storeName = ArchiveNaming.storeName(storePath)
        locks.append(try backend.lock(folderLock, shared: true, wait: options.wait))
        locks.append(try backend.lock(storeLock(storeName), shared: false, wait: options.wait))
        // Holding this store's lock, no other backup of it runs: what earlier ones left
        // (killed mid-write) is dead, and goes.
        for leftover in (try? backend.leftovers()) ?? []
        where ArchiveNaming.storeName(ofArchive: leftover.name) == storeName {
          try? backend.removeLeftover(leftover.name)
        }
        if fixedName == nil && !options.newPassword {
          try requireLocationPassword(
            backend, at: place, storeName: storeName, password: options.password)
        }
        if options.incremental || options.parent != nil {
          tip = try ChainTip.find(
            in: backend, at: place, storeName: storeName, uuid: store.uuid,
            named: try options.parent.map { try parentName($0, in: backend) },
            password: options.password, fullEvery: options.fullEvery)
        }
        // The time is taken once the locks are held, so names follow the order runs write in.
        now = options.now ?? Date()
        let name =
          fixedName
          ?? ArchiveNaming.freeName(forStoreAt: storePath, at: now, taken: backend.exists)
        output = try backend.create(name)
      }
      defer { output.abandon() }
      // One zstd thread: libzstd's multithreaded mode raised peak RSS from 48 to 120 MiB for
      // a gain lost in the noise of single runs (measure before turning it on). A sealed
      // archive's members are compressed one by one before sealing, so its stream is not.
      let tally = ByteTally()
      let emit: (UnsafeRawBufferPointer) throws -> Void = { [meter = options.meter] bytes in
        try output.write(bytes)
        tally.count += Int64(bytes.count)
        meter?.add(bytes: Int64(bytes.count))
      }
      // A plain zstd archive is compressed member by member (``FramedStream``), so that a
      // reader can fetch one member alone; other compressions stream through libarchive.
      let frames = seal == nil && options.compression == .zstd ? try FramedStream(emit: emit) : nil
      let archive: ArchiveWriter
      if let frames {
        archive = try ArchiveWriter(
          name: output.location, format: .pax, filter: .none, unblocked: true
        ) { frames.append($0) }
      } else {
        // A sealed archive's records are written as they come (unblocked), so that the bytes
        // counted after each member say where the next begins (``SealedTrailer``).
        archive = try ArchiveWriter(
          name: output.location, format: .pax,
          filter: seal == nil ? options.compression.filter : .none, unblocked: seal != nil,
          write: emit)
      }
      let members = MemberWriter(
        archive: archive, modificationTime: Int64(now.timeIntervalSince1970), seal: seal,
        frames: frames, formatVersion: options.formatVersion,
        tally: seal == nil ? nil : { tally.count })
      let source: BackupSource
      let sink: ArchiveSink
      do {
        defer { members.drain() }
        // The ledger's rows and the objects are read on a second connection too, opened
        // before the read transaction begins (``SnapshotTwin``). It waits a quarter of a second
        // at most for a writer's lock (a rollback-journal store an app is committing to), and
        // otherwise leaves the work to this connection: it must never hold the backup up.
        let twin =
          options.formatVersion >= 2
          ? SnapshotTwin(
            path: readable.path, busyTimeout: SnapshotTwin.busyTimeout, twinOf: store,
            identity: identity) : nil
        source = BackupSource(
          store: store, model: model, layout: layout, options: options, now: now, tip: tip,
          twin: twin)
        sink = ArchiveSink(
          members: members, formatVersion: options.formatVersion,
          sketches: source.lateSketches)
        try ObjectPipeline(source: source, sink: sink).run()
        try archive.close()
        if let frames, let index = members.entries.last?.place {
          try frames.finish(index: index)
        }
        if let trailer = members.entries.last?.sealedAt {
          try trailer.bytes.withUnsafeBytes { try emit($0) }
        }
      } catch {
        throw unpublished(error, at: output.location)
      }
      let size: Int64
      do {
        size = try output.publish()
      } catch {
        throw unpublished(error, at: output.location)
      }
      let written = source.written
      var result = BackupResult(
        archive: output.location, objects: sink.objects, tables: sink.rows, bytes: size,
        modelVersion: model.versionName)
      if let parent = written.parent {
        result.kind = "incremental"
        result.parent = parent.name
        result.depth = parent.depth
      }
      result.fullBecause = written.fullBecause
      return result
    }
  }

  /// What a backup's source (``BackupSource``) decided: the parent of an incremental archive,
  /// or why a full one was written instead.
  struct Written {
    var parent: ArchiveHeader.Parent?
    var fullBecause: String?
  }

  /// The name in `backend` of the parent the user gave (a name, or a path in that folder).
  private static func parentName(_ given: String, in backend: any StorageBackend) throws -> String {
    let name = Location.lastComponent(of: given)
    guard
      given == name || backend.address(of: name) == given
        || URL(fileURLWithPath: given).standardizedFileURL.path
          == URL(fileURLWithPath: backend.address(of: name)).standardizedFileURL.path
    else {
      throw VaultError(
        .usage,
        "the parent \(given) is not in \(backend.location), where the incremental archive goes: a chain's archives are kept together"
      )
    }
    return name
  }

  /// The lock every backup into a folder shares and a prune of it takes alone.
  static let folderLock = "graphvault-folder"

  /// The lock of backups of stores named `storeName` into one folder.
  static func storeLock(_ storeName: String) -> String { "graphvault-backup-\(storeName)" }

  /// A location (`backend`, reached as `place` is) keeps one password per store, as a restic
  /// repository has one: a backup whose password does not open the newest archive of the same
  /// store there (or that has none while that archive is encrypted) is refused (77) naming that
  /// archive, since a prune with either password could then not apply its rules to the other's
  /// archives. Adding a password to a store whose archives are plain is allowed.
  static func requireLocationPassword(
    _ backend: any StorageBackend, at place: Location, storeName: String,
    password: PasswordSource?
  ) throws {
    guard
      let newest = try backend.list()
        .filter({ ArchiveNaming.storeName(ofArchive: $0.name) == storeName })
        .max(by: { $0.name < $1.name })
    else { return }
    let address = place.sibling(newest.name, in: backend)
    switch ArchiveAccess.passwordProblem(address, password: password) {
    case .passwordRequired:
      throw VaultError(
        .accessDenied,
        "the newest archive of this store here (\(address)) is encrypted: give its password, or pass --new-password to back up without one"
      )
    case .wrongPassword:
      throw VaultError(
        .accessDenied,
        "the password does not open the newest archive of this store here (\(address)): with archives under two passwords a prune could not apply its rules to both; give that archive's password, or pass --new-password if the change is meant"
      )
    default: return
    }
  }

  /// A write that failed (a full disk, a network that went away), said with what it means:
  /// nothing is under the archive's name, and what the run wrote goes.
  static func unpublished(_ error: any Error, at location: String) -> any Error {
    let failure = VaultError(wrapping: error)
    guard failure.kind == .ioFailure else { return error }
    return VaultError(
      .ioFailure,
      "\(failure.detail); nothing was published as \(location): what this run wrote is removed (had it been killed, the next backup of this store or a prune would remove it)",
      cause: failure)
  }

  /// Where an archive goes.
  enum Destination {
    /// Standard output (`-`).
    case standardOutput
    /// A folder, the archive's name when the user gave one (else a new one is chosen), and
    /// the location given, by which the folder's archives are reached.
    case folder(any StorageBackend, String?, Location)
  }

  /// Where the archive goes: standard output for `-`; `output` itself when it names an
  /// archive that does not exist yet (a file, or an `s3://…/NAME.gvault` URL); else a new name
  /// (``ArchiveNaming``) in the folder or `s3://BUCKET/PREFIX/` that `output` names (the
  /// current folder when nil).
  static func destination(store: String, output: Location?) throws -> Destination {
    let output = output ?? Location(path: FileManager.default.currentDirectoryPath)
    if output.isStandardStream { return .standardOutput }
    if output.isFolder { return .folder(try output.folder(), nil, output) }
    if let path = output.localPath {
      // A trailing slash means a folder, and a folder must exist: a file is never made in
      // its place, nor is a missing folder made (a mount that is not there).
      let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
      if path.hasSuffix("/") {
        throw VaultError(
          .destinationUnavailable, "no folder at \(output) (the folder to back up into must exist)")
      }
      var isFolder: ObjCBool = false
      guard FileManager.default.fileExists(atPath: parent, isDirectory: &isFolder),
        isFolder.boolValue
      else {
        throw VaultError(
          .destinationUnavailable,
          "no folder at \(parent) for the archive \(output) (the folder must exist)")
      }
    }
    let (backend, name) = try output.archive()
    if output.localPath.map(FileManager.default.fileExists(atPath:)) ?? backend.exists(name) {
      throw VaultError(.destinationExists, "the archive exists already (\(output))")
    }
    return .folder(backend, name, output)
  }
}

/// The bytes an archive writer has handed on so far (written on the writer's second thread,
/// read there too, and after it is drained).
private final class ByteTally: @unchecked Sendable {
  var count: Int64 = 0
}
