import Foundation
import Migration
import ObjectModel
import ObjectStore

extension RestoreService {
  /// Restores the objects `selection` chooses, and their closure, into a new store: what the
  /// selection reaches of a framed archive restored at its own version (``SelectionArchive``,
  /// each member read checked against the index), else the whole archive verified and
  /// restored (migrated, when a model is given), into a private temporary store first; then
  /// the selection is cut from it by the fixture cutter's rules and written beside the
  /// destination, renamed into place when complete.
  static func restoreSelection(
    _ selection: FixtureCutter.Selection, archive: Location, to destination: String,
    options: RestoreOptions, target: RestoreTarget
  ) throws -> (result: RestoreResult, model: ObjectModel?) {
    // The selection is checked before the archive is read: against the target model when
    // migrating, else against the archive's own (when it can be known from its first members).
    if let model = target.model ?? ArchivePeek.model(of: archive) {
      try FixtureService.check(selection, model: model)
    }
    options.meter?.startPhase("reading the archive")
    let part =
      target.set == nil && !options.leaveOutUnsafeSchema
      ? try SourceStore(
        partOf: archive, password: options.password,
        allowingUnencrypted: options.allowUnencrypted, cutting: selection)
      : nil
    // A whole restore goes into a scratch folder of its own; either must outlive the cut.
    var scratch: ScratchFolder?
    defer { withExtendedLifetime((part, scratch)) {} }
    let sourcePath: String
    let archivedModel: ObjectModel?
    let restored: (modelVersion: String?, migration: MigrationReport?, leftOut: [String])
    if let part {
      sourcePath = part.path
      archivedModel = part.archivedModel
      restored = (archivedModel?.versionName, nil, [])
    } else {
      var whole = options
      whole.force = false
      whole.dryRun = false
      whole.wait = nil
      let folder = try ScratchFolder()
      scratch = folder
      sourcePath = folder.path("whole.sqlite")
      let result: RestoreResult
      (result, archivedModel) = try restoreWhole(
        archive: archive, to: sourcePath, options: whole, target: target)
      restored = (result.modelVersion, result.migration, result.leftOut)
    }
    options.meter?.startPhase("selecting")
    let store = try CoreDataStore(path: sourcePath)
    guard let model = try ModelResolver.known(of: store, carried: archivedModel) else {
      throw VaultError(.modelUnavailable, "the archive carries no model (\(archive))")
    }
    let cutter = try FixtureCutter(store: store, model: model)
    let subset = try FixtureService.select(selection, with: cutter, in: store)
    let result = RestoreResult(
      store: destination, objects: subset.counts, tables: [:],
      modelVersion: restored.modelVersion, migration: restored.migration, dryRun: options.dryRun,
      leftOut: restored.leftOut, selected: subset.selected.count)
    if options.dryRun { return (result, model) }
    let claim = try StoreDestination(
      destination, for: "restore", reading: archive.readFile, force: options.force,
      wait: options.wait)
    defer { claim.release() }
    try StoreFile.build(at: destination, wait: options.wait ?? 0) { temporary in
      try store.read { _ in try cutter.write(subset, to: temporary) }
    }
    return (result, model)
  }
}
