import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore

/// What a fixture holds.
public struct FixtureResult: Codable, Sendable {
  /// The archive's path (`-` for standard output).
  public let archive: String
  /// Objects per entity, closure included.
  public let objects: [String: Int]
  /// How many objects the selection itself chose.
  public let selected: Int
  /// The archive's size in bytes.
  public let bytes: Int64
}

/// `graphvault fixture`: a small, whole, deterministic archive cut from a store or an archive,
/// for test suites.
public enum FixtureService {
  /// What to cut, and where to write it.
  public struct Options: Sendable {
    /// The selection: entity, predicate, sort, limit, include paths.
    public var selection: FixtureCutter.Selection
    /// The model, for stores without `Z_MODELCACHE`.
    public var modelPath: String?
    /// The archive file, or `-` for standard output.
    public var output: Location
    /// The creation time recorded; 2001-01-01T00:00:00Z when nil, so that the same input
    /// always gives the same bytes.
    public var time: Date?
    /// The compression.
    public var compression: Compression = .zstd
    /// Replacements for data that must not leave production, applied in order.
    public var scrubs: [ScrubRule] = []
    /// The password of the source, when it is an encrypted archive (the fixture itself is
    /// never encrypted: it is meant for a test suite's repository).
    public var password: PasswordSource?
    /// Read a source archive that is not encrypted although a password was given.
    public var allowUnencrypted = false
    /// Where the run reports how far it has got: the source archive read (when it is one),
    /// the selection, then the fixture written.
    public var meter: ProgressMeter?
    /// The key of `hash` scrubbing (a key derived from the store's UUID when empty: then
    /// values that can be guessed can be tried against the hashes).
    public var scrubKey: [UInt8] = []

    /// Options for a selection written to `output`.
    public init(selection: FixtureCutter.Selection, output: Location) {
      self.selection = selection
      self.output = output
    }
  }

  /// The objects `selection` chooses in `store`, with their closure, after `checking` (other
  /// checks of the command line). A selection or check naming what the model does not have is
  /// a mistake in the command line: a usage error (64). Shared by fixture, a selective
  /// restore and merge.
  static func select(
    _ selection: FixtureCutter.Selection, with cutter: FixtureCutter, in store: CoreDataStore,
    checking: () throws -> Void = {}
  ) throws -> FixtureCutter.Subset {
    try usageErrors {
      try checking()
      return try store.read { _ in try cutter.select(selection) }
    }
  }

  /// Checks `selection` against `model` before anything is read (64 for what is wrong).
  static func check(_ selection: FixtureCutter.Selection, model: ObjectModel) throws {
    try usageErrors { try FixtureCutter.check(selection, model: model) }
  }

  /// `body`, with a selection naming what the model does not have, or a predicate that does
  /// not read, turned into the usage error (64) it is.
  private static func usageErrors<R>(_ body: () throws -> R) throws -> R {
    do {
      return try body()
    } catch let error as StoreError
      where error.kind == .invalidValue || error.kind == .invalidPredicate
    {
      throw VaultError(.usage, error.detail, cause: error)
    }
  }

  /// The time a fixture records when none is given: Core Data's reference date.
  public static let defaultTime = Date(timeIntervalSinceReferenceDate: 0)

  /// Cuts a fixture out of the store or archive at `source`. An archive is restored into a
  /// temporary store first; nothing is written beside the source, and the fixture appears under
  /// its name only when complete.
  public static func cut(source path: Location, options: Options) throws(VaultError)
    -> FixtureResult
  {
    try vault {
      // The selection is checked before an archive is read, against its own model (a store's
      // is read in a moment anyway, and a given model is checked as the source is opened).
      if options.modelPath == nil, let model = ArchivePeek.model(of: path) {
        try check(options.selection, model: model)
      }
      // A framed archive is read in part: what the selection reaches (``SelectionArchive``)
      // into a store that is the source's but for the rows not read, which is all a cut reads
      // (the same fixture, byte for byte); any other source is read whole.
      options.meter?.startPhase("reading the archive")
      let source =
        try SourceStore(
          partOf: path, password: options.password,
          allowingUnencrypted: options.allowUnencrypted, cutting: options.selection)
        ?? SourceStore(
          path, password: options.password, allowingUnencrypted: options.allowUnencrypted,
          meter: options.meter)
      options.meter?.startPhase("selecting")
      // The scratch folder (a restored archive) must outlive every use of its store.
      defer { withExtendedLifetime(source) {} }
      let store = try CoreDataStore(path: source.path)
      let model = try source.model(of: store, modelPath: options.modelPath)
      let cutter = try FixtureCutter(store: store, model: model)
      let subset = try select(options.selection, with: cutter, in: store) {
        try cutter.check(options.scrubs)
      }
      let fixtureName = URL(fileURLWithPath: source.recordedSource).deletingPathExtension()
        .lastPathComponent
      let fixturePath = source.scratch.path("\(fixtureName).sqlite")
      do {
        try store.read { _ in
          try cutter.write(
            subset, to: fixturePath, scrubs: options.scrubs, scrubKey: options.scrubKey)
        }
      } catch let error as StoreError where error.kind == .validation {
        throw VaultError(.usage, error.detail, cause: error)
      }
      options.meter?.startPhase("writing the fixture")
      var backup = BackupService.Options()
      backup.meter = options.meter
      backup.output = options.output
      backup.compression = options.compression
      backup.now = options.time ?? defaultTime
      // The source's name, not where it lay: a fixture's bytes depend only on what was
      // selected and the options, so the same cut made on another machine is the same file.
      backup.recordedSourcePath = Location.lastComponent(of: source.recordedSource)
      backup.modelPath = options.modelPath
      // Its change ledger too ("gvfixtur"): no chain is built on a fixture.
      backup.ledgerSeed = 0x6776_6669_7874_7572
      let written = try BackupService.backup(storePath: fixturePath, options: backup)
      return FixtureResult(
        archive: written.archive, objects: subset.counts, selected: subset.selected.count,
        bytes: written.bytes)
    }
  }
}
