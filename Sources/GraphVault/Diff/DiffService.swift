import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore

/// `graphvault diff OLD NEW`: which objects the newer side inserted, deleted and changed,
/// entity by entity, with each changed property's old and new value.
///
/// Each side is a store or an archive (a file, `-`, or `s3://`). Two archives of the same
/// model compared whole, by primary key, are compared as they stream, neither restored
/// (``StreamedDiff``). Otherwise an archive is verified and restored to a private temporary
/// store first (two archives at once, one on each core), so a damaged or forged archive is
/// refused before anything is compared; when only some entities are compared, of a framed
/// archive only their chunks are read (``PartialArchive``). Objects are matched by primary
/// key, or by a key attribute (``Options/keys``) when keys differ between the sides, and
/// between two different stores (other `Z_UUID`s) by an entity's uniqueness constraint when
/// it names one attribute (``ConstraintKeys``, reported in the summary's notes); each
/// entity's objects are read from both sides in that key's order and compared as they come,
/// so memory does not grow with the stores. When the two models differ, the older side is
/// migrated into the newer one's model first, as a restore would. Entities come in the
/// archive format's order: each root entity, then its sub-entities.
public enum DiffService {
  /// What to compare.
  public struct Options: Sendable {
    /// The entities to compare, each with its sub-entities; all when empty.
    public var entities: [String] = []
    /// A predicate in Core Data's format that objects must match on the side they are on
    /// (needs exactly one entity in ``entities``).
    public var predicate: String?
    /// Key attributes objects are matched by, as `ENTITY.ATTRIBUTE`; objects of other
    /// entities are matched by primary key.
    public var keys: [String] = []
    /// The model, for stores without `Z_MODELCACHE`; its versions are also the migration path
    /// when the two sides' models differ.
    public var modelPath: String?
    /// The password of encrypted archives.
    public var password: PasswordSource?
    /// Read archives that are not encrypted although a password was given.
    public var allowUnencrypted = false
    /// Where the run reports how far it has got.
    public var meter: ProgressMeter?

    /// Every entity, matched by primary key.
    public init() {}
  }

  /// Compares `old` with `new`, handing each object that differs to `report` (entities in the
  /// archive format's order, objects in key order); the summary points at deleted and inserted
  /// objects that are likely one object renamed (``LikelyRename``).
  /// - Throws: ``VaultError``: 64 for an unknown entity, key or a bad predicate, 66 for a
  ///   missing side, 65 for a damaged archive, 78 when the older model cannot be migrated
  ///   into the newer.
  public static func diff(
    old: Location, new: Location, options: Options, report: (ObjectChange) throws -> Void
  ) throws(VaultError) -> DiffSummary {
    // Every change goes by the rename finder on its way out.
    var renames = RenameFinder()
    var summary = try compare(old: old, new: new, options: options) { change in
      renames.observe(change)
      try report(change)
    }
    summary.renames = renames.likely()
    return summary
  }

  /// ``diff(old:new:options:report:)`` without the likely renames.
  private static func compare(
    old: Location, new: Location, options: Options, report: (ObjectChange) throws -> Void
  ) throws(VaultError) -> DiffSummary {
    try vault {
      if old.isStandardStream && new.isStandardStream {
        throw VaultError(.usage, "only one side can be read from standard input (-)")
      }
      // What is asked is checked before either side is read, against the newer side's model
      // when its first members give it (the model everything is compared in).
      let asks = !options.entities.isEmpty || !options.keys.isEmpty || options.predicate != nil
      // Peeked once at most: on object storage a peek is two requests.
      var newModel: ObjectModel?
      var peeked = false
      if asks, options.modelPath == nil {
        newModel = ArchivePeek.model(of: new)
        peeked = true
        if let newModel { try check(options, model: newModel) }
      }
      if options.entities.isEmpty && options.keys.isEmpty && options.predicate == nil,
        [old, new].allSatisfy({ !$0.isStandardStream && SourceStore.isArchive($0) }),
        let summary = try StreamedDiff.diff(old: old, new: new, options: options, report: report)
      {
        return summary
      }
      // An older archive is restored straight into the newer side's model when they differ:
      // a newer archive's, as its first members give it; a newer store's, as it is opened
      // (first: a store is read in place, in milliseconds).
      var openedNew: SourceStore?
      if newModel == nil, SourceStore.isArchive(old) {
        if SourceStore.store(new) != nil {
          let side = try SourceStore(new)
          newModel = try side.model(
            of: CoreDataStore(path: side.path), modelPath: options.modelPath)
          openedNew = side
        } else if !peeked {
          newModel = ArchivePeek.model(of: new)
        }
      }
      var (oldSide, newSide) = try open(
        old, new, newModel: newModel, opened: openedNew, options: options)
      defer { withExtendedLifetime((oldSide, newSide)) {} }
      var newStore = try CoreDataStore(path: newSide.path)
      let model = try newSide.model(of: newStore, modelPath: options.modelPath)
      var oldStore = try CoreDataStore(path: oldSide.path)
      var oldModel = try oldSide.model(of: oldStore, modelPath: options.modelPath)
      let matching = ConstraintKeys(
        model: model, given: try keyAttributes(options.keys, model: model),
        differentStores: oldStore.uuid != newStore.uuid)
      // Objects matched by a constraint are named by it in relationships, whose targets a
      // part of an archive may lack.
      if !matching.chosen.isEmpty && newSide.isPartial {
        newSide = try whole(new, options: options, meter: options.meter)
        newStore = try CoreDataStore(path: newSide.path)
      }
      if oldSide.isPartial && (!oldModel.isSameVersion(as: model) || !matching.chosen.isEmpty) {
        // A migration needs the whole archive: its references must resolve.
        oldSide = try whole(old, options: options, meter: options.meter)
        oldStore = try CoreDataStore(path: oldSide.path)
        oldModel = try oldSide.model(of: oldStore, modelPath: options.modelPath)
      }
      var migrated = oldSide.migration
      var migratedScratch: ScratchFolder?
      if !oldModel.isSameVersion(as: model) {
        options.meter?.startPhase("migrating \(old)")
        let scratch = try ScratchFolder()
        do {
          migrated = try StoreMigration.migrate(
            oldStore, model: oldModel,
            named: StoreMigration.modelName(oldModel, of: old, migratingTo: model),
            into: model,
            at: scratch, modelPath: options.modelPath)
        } catch let error as VaultError {
          throw migrationProblem(error, old: old, new: new)
        }
        oldStore = try CoreDataStore(path: scratch.path(StoreMigration.storeName))
        oldModel = model
        migratedScratch = scratch
      }
      defer { withExtendedLifetime(migratedScratch) {} }
      let entities = try comparedEntities(model, options.entities)
      if options.predicate != nil && options.entities.count != 1 {
        throw VaultError(.usage, "--where needs exactly one --entity, the one it is about")
      }
      options.meter?.startPhase("comparing")
      let counts = try compareStores(
        entities, old: oldStore, oldModel: oldModel, new: newStore, model: model,
        keys: matching.keys, predicate: options.predicate, meter: options.meter, report: report)
      return DiffSummary(
        old: old.description, new: new.description, entities: counts, migrated: migrated,
        notes: matching.notes)
    }
  }

  /// Compares `entities` of two stores (the older laid out as `oldModel` gives, the newer as
  /// `model` does) in one read transaction of each, each entity's objects in key order
  /// (``ObjectCursor``: `keys`, `predicate`).
  static func compareStores(
    _ entities: [String], old oldStore: CoreDataStore, oldModel: ObjectModel,
    new newStore: CoreDataStore, model: ObjectModel, keys: [String: String] = [:],
    predicate: String? = nil, meter: ProgressMeter?, report: (ObjectChange) throws -> Void
  ) throws -> [String: DiffSummary.Counts] {
    let oldLayout = try oldStore.layout(for: oldModel)
    let newLayout = try newStore.layout(for: model)
    var counts: [String: DiffSummary.Counts] = [:]
    try oldStore.read { _ in
      try newStore.read { _ in
        for entity in entities {
          meter?.begin(entity)
          counts[entity] = try compare(
            entity,
            old: ObjectCursor(
              store: oldStore, layout: oldLayout, entity: entity, keys: keys,
              predicate: predicate),
            new: ObjectCursor(
              store: newStore, layout: newLayout, entity: entity, keys: keys,
              predicate: predicate),
            model: model, meter: meter, report: report)
        }
      }
    }
    return counts
  }

  /// Opens both sides (the newer one given as `opened` when it is open already); two archives
  /// are read at once, the older on a second thread. An older archive whose model is another
  /// version than `newModel` (the newer side's) is restored straight into it, in one pass.
  private static func open(
    _ old: Location, _ new: Location, newModel: ObjectModel?, opened: SourceStore?,
    options: Options
  ) throws -> (SourceStore, SourceStore) {
    var started = false
    let opening = Prefetcher { () throws -> SourceStore? in
      if started { return nil }
      started = true
      if let newModel {
        do {
          if let migrated = try SourceStore(
            migrating: old, into: newModel, modelPath: options.modelPath,
            password: options.password, allowingUnencrypted: options.allowUnencrypted,
            name: { StoreMigration.modelName($0, of: old, migratingTo: newModel) }, meter: nil)
          {
            return migrated
          }
        } catch let error as VaultError {
          throw migrationProblem(error, old: old, new: new)
        }
      }
      return try side(old, options: options, meter: nil)
    }
    options.meter?.startPhase("reading \(new)")
    let newSide = try opened ?? side(new, options: options, meter: options.meter)
    options.meter?.startPhase("reading \(old)")
    guard let oldSide = try opening.next() else { throw CancellationError() }
    return (oldSide, newSide)
  }

  /// A migration's failure for want of a path between the models, said as `diff` says it (it
  /// migrates its first side into its second side's model); any other error as it is.
  private static func migrationProblem(_ error: VaultError, old: Location, new: Location)
    -> VaultError
  {
    guard error.kind == .modelUnavailable else { return error }
    return VaultError(
      .modelUnavailable,
      "\(StoreMigration.modelName(of: old)) cannot be migrated into \(StoreMigration.modelName(of: new)) (diff migrates its first side into its second side's model): \(error.detail)",
      cause: error)
  }

  /// One side, as a store: a store as it is; of a framed archive, when the comparison is of a
  /// few entities, only their chunks (and those of the entities `--key` names), each checked
  /// against the index (``PartialArchive``); any other archive verified and restored whole.
  private static func side(_ path: Location, options: Options, meter: ProgressMeter?) throws
    -> SourceStore
  {
    if !options.entities.isEmpty,
      let part = try SourceStore(
        partOf: path, password: options.password,
        allowingUnencrypted: options.allowUnencrypted,
        entities: { model in partialEntities(options, model: model) })
    {
      return part
    }
    return try whole(path, options: options, meter: meter)
  }

  /// One side whole: a store as it is, an archive verified and restored.
  private static func whole(_ path: Location, options: Options, meter: ProgressMeter?) throws
    -> SourceStore
  {
    try SourceStore(
      path, password: options.password, allowingUnencrypted: options.allowUnencrypted,
      meter: meter)
  }

  /// The entities a comparison of `options.entities` needs loaded from an archive with
  /// `model`: theirs, and the hierarchies `--key` names (their keys label relationships); nil
  /// when part of the archive will not do (an entity it lacks, which the whole archive's
  /// reading names, or a predicate that follows relationships).
  private static func partialEntities(_ options: Options, model: ObjectModel) -> Set<String>? {
    var names = Set<String>()
    for name in options.entities {
      guard model.entity(named: name) != nil else { return nil }
      names.formUnion(model.hierarchy(from: name).map(\.name))
    }
    if let predicate = options.predicate, let entity = options.entities.first {
      guard (try? ObjectCursor.testsOwnValuesOnly(predicate, model: model, entity: entity)) == true
      else { return nil }
    }
    for key in options.keys {
      guard let entity = key.split(separator: ".").first.map(String.init),
        let root = model.root(of: entity)
      else { return nil }
      names.formUnion(model.hierarchy(from: root.name).map(\.name))
    }
    return names
  }

  /// Checks the entities, keys and predicate `options` name against `model` (64 for what is
  /// wrong), as the comparison will.
  private static func check(_ options: Options, model: ObjectModel) throws {
    _ = try comparedEntities(model, options.entities)
    _ = try keyAttributes(options.keys, model: model)
    if let predicate = options.predicate {
      guard options.entities.count == 1 else {
        throw VaultError(.usage, "--where needs exactly one --entity, the one it is about")
      }
      try FixtureService.check(
        FixtureCutter.Selection(entity: options.entities[0], predicate: predicate), model: model)
    }
  }

  /// `ENTITY.ATTRIBUTE` options as entity → attribute, checked against the model.
  static func keyAttributes(_ texts: [String], model: ObjectModel) throws -> [String: String] {
    var keys: [String: String] = [:]
    for text in texts {
      let parts = text.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
      guard parts.count == 2, let entity = model.entity(named: parts[0]) else {
        throw VaultError(
          .usage,
          "--key \(text): give ENTITY.ATTRIBUTE, an entity of the model (entities: \(model.entities.map(\.name).sorted().joined(separator: ", ")))"
        )
      }
      let stored = model.attributes(of: entity.name).filter(\.isStored).map(\.name)
      guard stored.contains(parts[1]) else {
        throw VaultError(
          .usage,
          "--key \(text): \(entity.name) has no stored attribute \(parts[1]) (attributes: \(stored.sorted().joined(separator: ", ")))"
        )
      }
      guard keys[entity.name] == nil else {
        throw VaultError(.usage, "--key \(text): \(entity.name) has a key already")
      }
      keys[entity.name] = parts[1]
    }
    return keys
  }

  /// The concrete entities compared, in the archive format's order (each root entity, then its
  /// sub-entities): those `names` gives with their sub-entities, or every one.
  /// - Throws: ``VaultError`` (64) for a name the model lacks.
  static func comparedEntities(_ model: ObjectModel, _ names: [String] = []) throws -> [String] {
    let chosen = Set(try ExportService.selectedEntities(model, names))
    return model.numberedEntities.map(\.name).filter {
      chosen.contains($0)
    }
  }

  /// Compares one entity's objects, in key order on both sides: objects whose compared values
  /// are the same are passed over unread.
  static func compare<Cursor: DiffCursor>(
    _ entity: String, old: Cursor, new: Cursor, model: ObjectModel,
    meter: ProgressMeter?, report: (ObjectChange) throws -> Void
  ) throws -> DiffSummary.Counts {
    var counts = DiffSummary.Counts()
    let attributes = model.attributes(of: entity).filter(\.isStored).map(\.name)
    let keys = KeyAttributes.of(entity, in: model)
    var hasOld = try old.step()
    var hasNew = try new.step()
    var compared = 0
    while hasOld || hasNew {
      let order: Int
      if hasOld && hasNew {
        let oldKey = old.key
        let keyOrder = ObjectCursor.compare(oldKey, new.key)
        // Objects without a key attribute value match nothing.
        order = keyOrder == 0 && oldKey == nil ? -1 : keyOrder
      } else {
        order = hasOld ? -1 : 1
      }
      if order < 0 {
        counts.deleted += 1
        try report(
          change(.deleted, entity, old: old.object(), new: nil, attributes: attributes, keys: keys))
        hasOld = try old.step()
      } else if order > 0 {
        counts.inserted += 1
        try report(
          change(.inserted, entity, old: nil, new: new.object(), attributes: attributes, keys: keys)
        )
        hasNew = try new.step()
      } else {
        let difference =
          old.sameValues(as: new)
          ? nil
          : change(
            .changed, entity, old: try old.object(), new: try new.object(), attributes: attributes,
            keys: keys)
        if let difference, !difference.properties.isEmpty {
          counts.changed += 1
          try report(difference)
        } else {
          counts.unchanged += 1
        }
        hasOld = try old.step()
        hasNew = try new.step()
      }
      compared += 1
      if compared & 4095 == 0 { meter?.add(objects: 4096) }
    }
    meter?.add(objects: compared & 4095)
    return counts
  }

  /// The change between `old` and `new` (either nil for an object on one side only): its
  /// key as the newer side has it, and the properties that differ.
  private static func change(
    _ kind: ObjectChange.Kind, _ entity: String, old: ObjectCursor.Object?,
    new: ObjectCursor.Object?, attributes: [String], keys: [String]
  ) -> ObjectChange {
    ObjectChange(
      kind: kind, entity: entity, key: keyText((new ?? old)!),
      oldPrimaryKey: old?.record.primaryKey, newPrimaryKey: new?.record.primaryKey,
      properties: properties(old: old, new: new, attributes: attributes, keys: keys))
  }

  /// `p12` for an object matched by primary key, else `name=value`, the value as its
  /// attribute's type shows it (a UUID in its usual form, not its stored bytes).
  private static func keyText(_ object: ObjectCursor.Object) -> String {
    guard let attribute = object.keyAttribute else { return "p\(object.record.primaryKey)" }
    let value = object.record.attributes[attribute] ?? object.key
    return "\(attribute)=\(value.map(ValueText.text) ?? "NULL")"
  }

  /// The properties whose values differ, `keys` first (``KeyAttributes``), then by name:
  /// attributes, relationships (their targets' names, comma-separated) and stored columns the
  /// model does not describe (`@` and the column).
  private static func properties(
    old: ObjectCursor.Object?, new: ObjectCursor.Object?, attributes: [String], keys: [String]
  ) -> [ObjectChange.Property] {
    var result: [ObjectChange.Property] = []
    func compare<Value: Equatable>(
      _ names: some Sequence<String>, as shown: String = "",
      _ value: (ObjectCursor.Object?, String) -> Value?, _ text: (Value) -> String
    ) {
      for name in names {
        let (before, after) = (value(old, name), value(new, name))
        if before != after {
          result.append(
            ObjectChange.Property(
              name: shown + name, old: before.map(text), new: after.map(text)))
        }
      }
    }
    compare(attributes, { $0?.record.attributes[$1] }, ValueText.text)
    compare(
      Set(old?.relationships.keys.map { $0 } ?? []).union(new?.relationships.keys.map { $0 } ?? []),
      { $0?.relationships[$1] }, targets)
    compare(
      Set(old?.record.extraColumns.keys.map { $0 } ?? []).union(
        new?.record.extraColumns.keys.map { $0 } ?? []),
      as: "@", { $0?.record.extraColumns[$1] }, ValueText.text)
    return result.sorted { KeyAttributes.rank($0.name, keys) < KeyAttributes.rank($1.name, keys) }
  }

  /// A relationship's targets as text: at most ten names, then how many more.
  private static func targets(_ names: [String]) -> String {
    let shown = names.prefix(10).joined(separator: ", ")
    return names.count > 10 ? "\(shown), … (\(names.count) in all)" : shown
  }
}
