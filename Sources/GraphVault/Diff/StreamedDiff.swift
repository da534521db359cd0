import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore

/// `diff` of two archives without restoring either: both are read, checked and decoded at
/// once, each on a thread of its own (``ScannedArchive``), and each entity's objects compared
/// chunk by chunk as they come, in primary-key order, which the format keeps within an entity
/// (``ChunkCursor``). Memory holds a few chunks of each side, whatever the archives' size.
///
/// The entities come in each archive's order. Where the two orders part (an entity one side
/// holds and the other does not, which each header's object counts tell), the entity is
/// compared against nothing; where both sides hold the next two entities in opposite orders
/// (archives written by another tool), the rest of each archive is restored to a private
/// store and the remaining entities compared there, as ``DiffService`` compares stores.
///
/// The archives are checked as a restore checks them, to their ends; damage found late (a
/// member that does not match the index, a reference that does not resolve) fails the
/// comparison after the changes before it were reported.
enum StreamedDiff {
  /// Compares archives `old` and `new` (files or `s3://`) as they stream, handing each object
  /// that differs to `report`. Nil, before anything is reported, when they cannot be compared
  /// so: their models differ (one must be migrated first), they are of different stores whose
  /// objects a uniqueness constraint matches (``ConstraintKeys``), or a header does not count
  /// its objects (archives of graphvault before 0.4).
  /// - Throws: ``VaultError``: 66 for a missing archive, 65 for a damaged one, 77 for a
  ///   password problem.
  static func diff(
    old: Location, new: Location, options: DiffService.Options,
    report: (ObjectChange) throws -> Void
  ) throws -> DiffSummary? {
    options.meter?.startPhase("comparing")
    let newSide = try ScannedArchive(
      new, password: options.password, allowingUnencrypted: options.allowUnencrypted,
      meter: options.meter)
    let oldSide = try ScannedArchive(
      old, password: options.password, allowingUnencrypted: options.allowUnencrypted,
      meter: options.meter)
    let model = newSide.store.model
    // Archives of different stores whose objects a uniqueness constraint matches are
    // compared in the constraint's order, which only a store gives.
    let matching = ConstraintKeys(
      model: model, given: [:],
      differentStores: oldSide.store.header.sourceUUID != newSide.store.header.sourceUUID)
    guard oldSide.store.model.isSameVersion(as: model), matching.chosen.isEmpty,
      let oldCounts = oldSide.expectedObjects, let newCounts = newSide.expectedObjects
    else { return nil }
    options.meter?.setTotal(
      objects: oldCounts.values.reduce(0, +) + newCounts.values.reduce(0, +))
    let order = try DiffService.comparedEntities(model)
    var counts = Dictionary(uniqueKeysWithValues: order.map { ($0, DiffSummary.Counts()) })
    var done = Set<String>()
    while true {
      let (oldEntity, newEntity) = (try oldSide.nextEntity(), try newSide.nextEntity())
      for (side, entity) in [(oldSide, oldEntity), (newSide, newEntity)] {
        guard let entity, done.contains(entity) else { continue }
        throw VaultError(
          .invalidInput,
          "the header counts no objects of \(entity), but the archive holds some (\(side.path))")
      }
      let entity: String
      if let oldEntity, oldEntity == newEntity {
        entity = oldEntity
      } else if let oldEntity, newCounts[oldEntity, default: 0] == 0 {
        entity = oldEntity
      } else if let newEntity, oldCounts[newEntity, default: 0] == 0 {
        entity = newEntity
      } else if oldEntity != nil && newEntity != nil {
        let rest = order.filter { !done.contains($0) }
        for (name, counted) in try compareRest(
          rest, of: oldSide, newSide, model: model, report: report)
        {
          counts[name] = counted
        }
        return DiffSummary(
          old: old.description, new: new.description, entities: counts, migrated: nil,
          notes: matching.notes)
      } else if let missing = oldEntity ?? newEntity {
        let side = oldEntity == nil ? oldSide : newSide
        throw VaultError(
          .invalidInput,
          "the header counts objects of \(missing), but the archive holds none (\(side.path))")
      } else {
        break
      }
      done.insert(entity)
      options.meter?.begin(entity)
      counts[entity] = try DiffService.compare(
        entity, old: ChunkCursor(oldSide, entity: entity),
        new: ChunkCursor(newSide, entity: entity), model: model, meter: nil, report: report)
    }
    try oldSide.finish()
    try newSide.finish()
    return DiffSummary(
      old: old.description, new: new.description, entities: counts, migrated: nil,
      notes: matching.notes)
  }

  /// Restores the rest of each archive to a private store and compares `entities` there.
  private static func compareRest(
    _ entities: [String], of oldSide: ScannedArchive, _ newSide: ScannedArchive,
    model: ObjectModel, report: (ObjectChange) throws -> Void
  ) throws -> [String: DiffSummary.Counts] {
    let scratch = try ScratchFolder()
    let (oldPath, newPath) = (scratch.path("old.sqlite"), scratch.path("new.sqlite"))
    try oldSide.restoreRest(to: oldPath)
    try newSide.restoreRest(to: newPath)
    return try DiffService.compareStores(
      entities, old: CoreDataStore(path: oldPath), oldModel: model,
      new: CoreDataStore(path: newPath), model: model, meter: nil, report: report)
  }
}
