import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore

/// The store a command reads, given either a store or an archive: an archive (a file, object
/// storage or standard input) is restored into a private temporary folder first, which goes
/// away with this value. Nothing is ever written beside the source.
final class SourceStore {
  /// The store to open.
  let path: String
  /// The source as recorded in what is written from it: the standardized path of a local
  /// file, or the name given for standard input and object storage.
  let recordedSource: String
  /// A private folder for work files, removed with this value.
  let scratch: ScratchFolder
  /// A store read from a private copy (``ReadableStore``), kept as long as this value.
  private let readable: ReadableStore?
  /// The model an archive carried (nil for a store): what a command reading the restored store
  /// uses when the store keeps none of its own.
  let archivedModel: ObjectModel?
  /// Whether only part of an archive was loaded
  /// (``init(partOf:password:allowingUnencrypted:entities:)``).
  let isPartial: Bool
  /// `from → to` when the archive was restored straight into another model
  /// (``init(migrating:into:modelPath:password:allowingUnencrypted:name:meter:)``), else nil.
  let migration: String?

  /// Opens `source`, restoring it when it is an archive (read as `restore` reads it: checked
  /// whole before anything is used; with a password, a plain archive only when
  /// `allowingUnencrypted`).
  /// - Throws: ``VaultError`` when the source is missing or cannot be restored.
  init(
    _ source: Location, password: PasswordSource? = nil, allowingUnencrypted: Bool = false,
    meter: ProgressMeter? = nil
  ) throws {
    try ArchiveAccess.requireInput(source)
    scratch = try ScratchFolder()
    isPartial = false
    migration = nil
    recordedSource = Self.recorded(source)
    if let store = Self.store(source) {
      let opened = try ReadableStore(store)
      path = opened.path
      readable = opened
      archivedModel = nil
    } else {
      path = scratch.path("source.sqlite", standingFor: Self.label(source))
      var options = RestoreOptions()
      options.password = password
      options.allowUnencrypted = allowingUnencrypted
      meter?.startPhase("reading the archive")
      options.meter = meter
      archivedModel = try RestoreService.restoreReadingModel(
        archive: source, to: path, options: options
      ).model
      readable = nil
    }
  }

  /// Part of the framed archive at `source` (``PartialArchive``): only the entities
  /// `entities` names, given the archive's model. Nil when `source` is not a framed archive on
  /// a disk or in a bucket, or `entities` says part of it will not do: then read it whole.
  /// - Throws: what reading the archive throws; 77 for a plain archive when a password was
  ///   given (unless `allowingUnencrypted`).
  convenience init?(
    partOf source: Location, password: PasswordSource?, allowingUnencrypted: Bool,
    entities: (ObjectModel) throws -> Set<String>?
  ) throws {
    try self.init(
      partOf: source, password: password, allowingUnencrypted: allowingUnencrypted
    ) { archive, path in
      try PartialArchive.load(archive, into: path) { model in
        try entities(model).map { PartialArchive.Wanted(entities: $0) }
      }?.model
    }
  }

  /// What `selection` reaches of the framed archive at `source` (``SelectionArchive``), when
  /// `accept` takes the archive's model, with the members of the objects `insertable` may
  /// insert. Nil when `source` is not a framed archive on a disk or in a bucket, or part of it
  /// will not do: then read it whole.
  /// - Throws: what reading the archive throws; 77 for a plain archive when a password was
  ///   given (unless `allowingUnencrypted`).
  convenience init?(
    partOf source: Location, password: PasswordSource?, allowingUnencrypted: Bool,
    selection: FixtureCutter.Selection, accept: (ObjectModel) throws -> Bool,
    insertable: SelectionArchive.Insertable
  ) throws {
    try self.init(
      partOf: source, password: password, allowingUnencrypted: allowingUnencrypted
    ) { archive, path in
      try SelectionArchive.load(
        archive, into: path, selection: selection, accept: accept, insertable: insertable)?.model
    }
  }

  /// What `selection` reaches of the framed archive at `source`, for a cut (`fixture`,
  /// `restore --entity`): as ``init(partOf:password:allowingUnencrypted:selection:accept:insertable:)``
  /// reads it for a merge, whatever the archive's model, with no members beyond the
  /// `--include` paths (a cut inserts nothing anywhere).
  convenience init?(
    partOf source: Location, password: PasswordSource?, allowingUnencrypted: Bool,
    cutting selection: FixtureCutter.Selection
  ) throws {
    try self.init(
      partOf: source, password: password, allowingUnencrypted: allowingUnencrypted,
      selection: selection, accept: { _ in true }, insertable: { _ in { _ in false } })
  }

  /// Part of the framed archive at `source`, loaded by `load` into the private store at the
  /// path it is given (returning the archive's model, or nil when part will not do).
  private init?(
    partOf source: Location, password: PasswordSource?, allowingUnencrypted: Bool,
    load: (FramedArchive, String) throws -> ObjectModel?
  ) throws {
    guard !source.isStandardStream, Self.isArchive(source) else { return nil }
    try ArchiveAccess.requireInput(source)
    guard
      let framed = try ArchiveAccess.framed(
        source, password: password, allowingUnencrypted: allowingUnencrypted)
    else { return nil }
    let scratch = try ScratchFolder()
    let path = scratch.path("source.sqlite", standingFor: Self.label(source))
    guard let model = try load(framed, path) else { return nil }
    self.scratch = scratch
    self.path = path
    recordedSource = Self.recorded(source)
    readable = nil
    isPartial = true
    archivedModel = model
    migration = nil
  }

  /// The archive at `source` restored straight into `target`'s model, in the one pass a
  /// migrating restore makes (checked whole as any restore is; along `modelPath`'s versions
  /// when given, as ``StoreMigration/options(named:into:modelPath:)`` says), when the model it
  /// carries is another version than `target`; messages call that model `name(model)`.
  ///
  /// When the archive's first members give its model (``ArchivePeek``), an archive at
  /// `target`'s version is left to be opened as it is (nil), part of it perhaps. When they
  /// cannot be read ahead (standard input, an encrypted archive), the restore decides as it
  /// reads them: at the archive's own version when it is `target`'s, else migrated. Nil for a
  /// store.
  /// - Throws: ``VaultError`` as a migrating restore does (78 when there is no path from one
  ///   model to the other).
  init?(
    migrating source: Location, into target: ObjectModel, modelPath: String?,
    password: PasswordSource?, allowingUnencrypted: Bool,
    name: @escaping @Sendable (ObjectModel) -> String, meter: ProgressMeter?
  ) throws {
    guard Self.isArchive(source) else { return nil }
    let carried = ArchivePeek.model(of: source)
    if let carried, carried.isSameVersion(as: target) { return nil }
    let scratch = try ScratchFolder()
    var options = try StoreMigration.options(
      named: carried.map(name) ?? StoreMigration.modelName(of: source), into: target,
      modelPath: modelPath)
    if carried == nil { options.sourceNaming = name }
    options.password = password
    options.allowUnencrypted = allowingUnencrypted
    options.meter = meter
    path = scratch.path(
      StoreMigration.storeName,
      standingFor: carried.map { "the copy migrated from \(name($0))" }
        ?? "the copy of \(Self.label(source))")
    let (result, model) = try RestoreService.restoreReadingModel(
      archive: source, to: path, options: options)
    self.scratch = scratch
    recordedSource = Self.recorded(source)
    readable = nil
    isPartial = false
    // Restored at its own version (it was the target's), it is read in the model it carried.
    archivedModel = result.migration == nil ? model : target
    migration = result.migration == nil ? nil : StoreMigration.describe(result)
  }

  /// The model to read `store` (this source's store) with, by ``ModelResolver``'s rule: the
  /// version at `modelPath` that is the store's when given, else the store's own cache, else
  /// the model the archive carried (an archive of a store that keeps no model of its own).
  /// - Throws: ``VaultError`` or a model loader's error when no model can be found or read.
  func model(of store: CoreDataStore, modelPath: String?, cacheName: String? = nil) throws
    -> ObjectModel
  {
    try ModelResolver.model(
      of: store, modelPath: modelPath, carried: archivedModel, cacheName: cacheName)
  }

  /// What is recorded of `source` in what is written from it: the standardized path of a
  /// local file, or the name given for standard input and object storage.
  static func recorded(_ source: Location) -> String {
    guard let path = source.localPath else { return source.description }
    return URL(fileURLWithPath: path).standardizedFileURL.path
  }

  /// What messages call a store restored from the archive `source`.
  static func label(_ source: Location) -> String {
    source.isStandardStream ? "the archive on standard input" : source.description
  }

  /// Whether `source` is an archive rather than a store: standard input, object storage, or a
  /// file that does not start with SQLite's header.
  static func isArchive(_ source: Location) -> Bool { store(source) == nil }

  /// The path of the store at `source`: a local file that starts with SQLite's header (or
  /// cannot be opened, for the store's opening to say why); nil for an archive.
  static func store(_ source: Location) -> String? {
    guard let path = source.localPath else { return nil }
    guard let handle = FileHandle(forReadingAtPath: path) else { return path }
    defer { try? handle.close() }
    let head = (try? handle.read(upToCount: 16)) ?? Data()
    return head == Data("SQLite format 3\u{0}".utf8) ? path : nil
  }
}
