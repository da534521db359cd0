import ArchiveFormat
import ArchiveStorage
import Foundation
import ObjectModel
import ObjectStore
import PropertyList

/// `graphvault find LOCATION --entity E [--where P]`: which archives still hold the objects
/// asked for, each store's archives newest first.
///
/// Of a plain zstd archive (graphvault frames each member, ``FramedStream``) it reads only the
/// trailer, the index, the header, the model and the chunks of the entity and its
/// sub-entities, by ranged reads on S3: everything it reads is checked against the index, and
/// the objects are loaded into a private temporary store where SQLite evaluates the predicate.
/// Other archives (encrypted, other compressions, written before framing) are read whole,
/// verified and restored to a private temporary store first. The predicate may test only the
/// entity's own attributes: the other entities' objects are not read.
public enum FindService {
  /// What to look for.
  public struct Options: Sendable {
    /// The entity (with its sub-entities).
    public var entity: String
    /// A predicate on the entity's own attributes, or nil for every object.
    public var predicate: String?
    /// The attribute objects are known by, as `ENTITY.ATTRIBUTE` (for ``history``).
    public var key: String?
    /// Follow one object across the archives: its primary key (`12` or `p12`), or with
    /// ``key`` its key attribute's value.
    public var history: String?
    /// The password of encrypted archives.
    public var password: PasswordSource?
    /// Read archives that are not encrypted although a password was given.
    public var allowUnencrypted = false
    /// Where the run reports how far it has got (archives read of the total).
    public var meter: ProgressMeter?

    /// Every object of `entity`.
    public init(entity: String) {
      self.entity = entity
    }
  }

  /// One object found in one archive.
  public struct Object: Codable, Sendable, Equatable {
    /// Its entity.
    public let entity: String
    /// Its primary key.
    public let primaryKey: Int64
    /// Its stored attributes and to-one relationships, as text (as `diff` shows them).
    public let values: [String: String]
    /// Its key attributes (``KeyAttributes``), which are shown first.
    public let keys: [String]
  }

  /// What one archive holds of what was asked.
  public struct ArchiveResult: Codable, Sendable, Equatable {
    /// The archive.
    public let archive: String
    /// When the backup was made (ISO 8601), when known.
    public let created: String?
    /// The store it was made of (from its name).
    public let store: String?
    /// The objects found (for `--history`, the one object, or none).
    public let objects: [Object]
    /// For `--history` in an archive of another store than the one the object was first
    /// found in: the uniqueness constraint's value it was matched by (`id='A1'`), as primary
    /// keys name other objects there.
    public var matchedBy: String?
    /// Bytes read of the archive (for `--history`, the second reading that looked for a
    /// likely successor included).
    public var bytesRead: Int64
    /// The archive's size.
    public let bytes: Int64
    /// Why the archive could not be searched, when it could not.
    public let error: String?
    /// What kind of failure kept it from being searched (a wrong password, damage), when one
    /// did.
    public var failure: VaultError.Kind?
    /// For `--history`, in the first archive of its store the object is gone from: the
    /// object there whose values are most like its last ones, when at least two and two
    /// thirds of them are equal (it may be the same object re-created under a new key).
    /// Pointed at, never decided.
    public var likelySuccessor: Successor?
  }

  /// An object most like one that is gone (``ArchiveResult/likelySuccessor``).
  public struct Successor: Codable, Sendable, Equatable {
    /// The object.
    public let object: Object
    /// How many of the two objects' properties hold equal values.
    public let equal: Int
    /// How many properties either has a value for.
    public let compared: Int
  }

  /// Searches every archive at `location` (a folder, an `s3://` prefix, or one archive),
  /// handing each archive's result to `report`: stores by name, each store's archives newest
  /// first.
  /// - Returns: every result, in that order.
  /// - Throws: ``VaultError``: 64 for a predicate that reads other objects, 66 for a missing
  ///   location; an archive that cannot be searched is reported, not thrown.
  @discardableResult
  public static func find(
    in location: Location, options: Options, report: (ArchiveResult) throws -> Void = { _ in }
  ) throws(VaultError) -> [ArchiveResult] {
    try vault {
      guard !location.isStandardStream, location.mayExist else {
        throw VaultError(.inputMissing, "no folder or archive at this path (\(location))")
      }
      let backend: any StorageBackend
      var archives: [StoredArchive]
      if location.isFolder {
        backend = try location.folder()
        archives = try backend.list()
      } else {
        let (found, name) = try location.archive()
        backend = found
        archives = [StoredArchive(name: name, size: 0)]
      }
      archives = ArchiveNaming.byStoreNewestFirst(archives)
      options.meter?.setUnit("archives")
      options.meter?.setTotal(objects: archives.count)
      var results: [ArchiveResult] = []
      var anchor: HistoryAnchor?
      // Each store's newest model read: older archives' names are read as it names them.
      var references: [String: ObjectModel] = [:]
      for archive in archives {
        options.meter?.begin(archive.name)
        let store = ArchiveNaming.storeName(ofArchive: archive.name) ?? archive.name
        let (result, model) = try search(
          backend, at: location, archive, options: options, reference: references[store],
          anchor: &anchor)
        if references[store] == nil, let model { references[store] = model }
        results.append(result)
        try report(result)
        options.meter?.add(objects: 1)
      }
      if options.history != nil {
        try pointAtSuccessors(
          &results, backend: backend, at: location, options: options, models: references)
      }
      return results
    }
  }

  /// An object known by a key attribute's stored value: the entity (or ancestor) whose
  /// attribute it is, the attribute, and the value as the store keeps it.
  private struct KeyedValue {
    let entity: String
    let attribute: String
    let value: AttributeValue
  }

  /// Where `--history` (by primary key) first found its object: the store, and the value of
  /// the entity's one-attribute uniqueness constraint, by which archives of other stores
  /// (another `Z_UUID`, whose primary keys name other objects) are searched.
  private struct HistoryAnchor {
    let uuid: String
    let key: KeyedValue
  }

  /// For `--history`: in each store's first archive (oldest first) that no longer holds the
  /// object its previous one held, the object most like it (``ArchiveResult/likelySuccessor``).
  /// Those archives are read a second time; an archive that fails now is left as it was.
  private static func pointAtSuccessors(
    _ results: inout [ArchiveResult], backend: any StorageBackend, at place: Location,
    options: Options, models: [String: ObjectModel]
  ) throws {
    var previous: (store: String?, object: Object?) = (nil, nil)
    // Results are by store, each store's newest first: walk each store oldest first.
    let order = results.indices.sorted {
      results[$0].store != results[$1].store
        ? (results[$0].store ?? "") < (results[$1].store ?? "") : $0 > $1
    }
    for index in order {
      let result = results[index]
      if result.store != previous.store { previous = (result.store, nil) }
      guard result.error == nil else { continue }
      if let gone = previous.object, result.objects.isEmpty {
        var none: HistoryAnchor?
        let name = Location.lastComponent(of: result.archive)
        let (found, _) = try search(
          backend, at: place, StoredArchive(name: name, size: 0), options: options,
          reference: models[result.store ?? name],
          anchor: &none, likeness: gone)
        results[index].bytesRead += found.bytesRead
        if found.error == nil, let successor = found.likelySuccessor {
          results[index].likelySuccessor = successor
        }
      }
      previous.object = result.objects.first
    }
  }

  /// Searches one archive of `backend` (reached as `place` is); what goes wrong with it (but
  /// a bad predicate) becomes its `error`.
  /// - Parameters:
  ///   - reference: the model of the store's newest archive read, whose names the result is
  ///     given in: an entity or property it renamed (its renaming identifier) is looked for
  ///     under its older name and reported under the newer.
  ///   - likeness: instead of what the options ask, the object whose values are most like
  ///     this one's, as the result's ``ArchiveResult/likelySuccessor`` (nil when none is
  ///     enough like it).
  /// - Returns: the result, and the archive's model when it was read.
  private static func search(
    _ backend: any StorageBackend, at place: Location, _ archive: StoredArchive,
    options: Options, reference: ObjectModel?, anchor: inout HistoryAnchor?, likeness: Object? = nil
  ) throws -> (ArchiveResult, ObjectModel?) {
    let name = archive.name
    let address = place.sibling(name, in: backend)
    let scratch = try ScratchFolder()
    defer { withExtendedLifetime(scratch) {} }
    var bytesRead: Int64 = 0
    var size: Int64 = 0
    var created: String?
    do {
      // As listed: on object storage, no request to ask its size again.
      let input = try backend.openForReading(archive)
      size = input.size ?? 0
      let storePath = scratch.path("found.sqlite")
      let model: ObjectModel
      let uuid: String?
      if let framed = try ArchiveAccess.framed(
        input, name: address.description, password: options.password,
        allowingUnencrypted: options.allowUnencrypted)
      {
        // What was fetched, where the input counts it (object storage: what came with it when
        // it was opened by name too).
        defer { bytesRead = input.bytesFetched ?? framed.bytesRead }
        // An entity the model lacks loads nothing; `matching` names the mistake.
        let entity = options.entity
        guard
          let loaded = try PartialArchive.load(
            framed, into: storePath,
            wanted: { model in
              let names = ModelRenames(model: model, reference: reference)
              let older = names.older(entity)
              var wanted = PartialArchive.Wanted(
                entities: Set(model.hierarchy(from: older).map(\.name)))
              // A plain search reads the untested columns of the chunks holding a match only;
              // --history and the search for a successor compare objects by every value.
              if let predicate = options.predicate, options.history == nil, likeness == nil,
                anchor == nil
              {
                wanted.selection = FixtureCutter.Selection(entity: older, predicate: predicate)
              }
              return wanted
            })
        else { throw VaultError(.invalidInput, "the archive cannot be read by parts") }
        (model, created, uuid) = loaded
      } else {
        // Not framed: read whole, verified, into a private store.
        var restore = RestoreOptions()
        restore.password = options.password
        restore.allowUnencrypted = options.allowUnencrypted
        let (_, archived) = try RestoreService.restoreReadingModel(
          archive: address, to: storePath, options: restore)
        bytesRead = size
        let store = try CoreDataStore(path: storePath)
        guard let found = try ModelResolver.known(of: store, carried: archived) else {
          throw VaultError(.modelUnavailable, "the archive carries no model")
        }
        model = found
        uuid = store.uuid
        created = ArchiveNaming.time(ofArchive: name)
      }
      let store = ArchiveNaming.storeName(ofArchive: name)
      let names = ModelRenames(model: model, reference: reference)
      if let likeness {
        var result = ArchiveResult(
          archive: address.description, created: created, store: store, objects: [],
          bytesRead: bytesRead,
          bytes: size, error: nil)
        result.likelySuccessor = try mostAlike(
          likeness, in: storePath, model: model, entity: names.older(options.entity),
          names: names)
        return (result, model)
      }
      var older = options
      older.entity = names.older(options.entity)
      if let key = options.key, let dot = key.firstIndex(of: ".") {
        let entity = names.older(String(key[..<dot]))
        older.key = entity + "." + names.older(String(key[key.index(after: dot)...]), of: entity)
      }
      if let anchor, let uuid, anchor.uuid != uuid {
        // Another store: primary keys name other objects there.
        let entity = names.older(anchor.key.entity)
        let (objects, _) = try matching(
          in: storePath, model: model, options: older,
          by: KeyedValue(
            entity: entity, attribute: names.older(anchor.key.attribute, of: entity),
            value: anchor.key.value))
        return (
          ArchiveResult(
            archive: address.description, created: created, store: store,
            objects: objects.map(names.newer),
            matchedBy: "\(anchor.key.attribute)=\(ValueText.text(anchor.key.value))",
            bytesRead: bytesRead, bytes: size, error: nil), model
        )
      }
      let (objects, constrained) = try matching(in: storePath, model: model, options: older)
      if anchor == nil, let uuid, let constrained {
        anchor = HistoryAnchor(
          uuid: uuid,
          key: KeyedValue(
            entity: names.newer(entity: constrained.entity),
            attribute: names.newer(property: constrained.attribute, of: constrained.entity),
            value: constrained.value))
      }
      return (
        ArchiveResult(
          archive: address.description, created: created, store: store,
          objects: objects.map(names.newer),
          bytesRead: bytesRead, bytes: size, error: nil), model
      )
    } catch {
      if let vault = error as? VaultError, vault.kind == .usage { throw vault }
      let failure = VaultError(wrapping: error)
      return (
        ArchiveResult(
          archive: address.description, created: created,
          store: ArchiveNaming.storeName(ofArchive: name),
          objects: [], bytesRead: bytesRead, bytes: size, error: failure.detail,
          failure: failure.kind), nil
      )
    }
  }

  /// The objects of the store at `path` that the options ask for; for `--history`, the one
  /// object `match` names by a key attribute's stored value when given.
  /// - Returns: the objects, and for `--history` by primary key the object's value of its
  ///   entity's one-attribute uniqueness constraint (``ConstraintKeys``), when it has one.
  private static func matching(
    in path: String, model: ObjectModel, options: Options, by match: KeyedValue? = nil
  ) throws -> (objects: [Object], constrained: KeyedValue?) {
    guard model.entity(named: options.entity) != nil else {
      throw VaultError(
        .usage,
        "--entity \(options.entity): the archive's model has no such entity (it has \(model.entities.map(\.name).sorted().joined(separator: ", ")))"
      )
    }
    if let predicate = options.predicate {
      let ownValues = try usageOnBadPredicate { () throws(StoreError) in
        try ObjectCursor.testsOwnValuesOnly(predicate, model: model, entity: options.entity)
      }
      guard ownValues else {
        throw VaultError(
          .usage,
          "--where \(predicate): find reads only \(options.entity)'s own objects, so its predicate may test their attributes, not key paths, relationships or counts"
        )
      }
    }
    let keys: [String: String]
    let wanted: AttributeValue?
    if let match {
      keys = [match.entity: match.attribute]
      wanted = match.value
    } else {
      keys = try options.key.map { try DiffService.keyAttributes([$0], model: model) } ?? [:]
      wanted = try options.history.map { try historyKey($0, keys: keys, model: model, options) }
    }
    // The constraint an object followed by primary key is known by in other stores.
    let constraint =
      options.history != nil && keys.isEmpty
      ? ConstraintKeys(model: model, given: [:], differentStores: true).chosen : [:]
    var constrained: KeyedValue?
    let store = try CoreDataStore(path: path)
    let layout = try store.layout(for: model)
    var found: [Object] = []
    for entity in model.hierarchy(from: options.entity) where !entity.isAbstract {
      let named = KeyAttributes.of(entity.name, in: model)
      let cursor = try usageOnBadPredicate { () throws(StoreError) in
        try ObjectCursor(
          store: store, layout: layout, entity: entity.name, keys: keys,
          predicate: options.predicate)
      }
      while try cursor.step() {
        if let wanted, ObjectCursor.compare(cursor.key, wanted) != 0 { continue }
        let object = try cursor.object()
        if let owner = model.lineage(of: entity.name).first(where: { constraint[$0.name] != nil }),
          let attribute = constraint[owner.name],
          let value = object.record.attributes[attribute].flatMap(ObjectCursor.storedKey)
        {
          constrained = KeyedValue(entity: owner.name, attribute: attribute, value: value)
        }
        found.append(shown(object, entity: entity.name, keys: named))
      }
    }
    return (found, constrained)
  }

  /// The object of `entity` (with its sub-entities) in the store at `path` whose values are
  /// most like `object`'s (named as `names` gives them), when at least two and two thirds of
  /// those either has are equal; read one at a time, the best kept.
  private static func mostAlike(
    _ object: Object, in path: String, model: ObjectModel, entity: String, names: ModelRenames
  ) throws -> Successor? {
    let store = try CoreDataStore(path: path)
    let layout = try store.layout(for: model)
    var best: Successor?
    for described in model.hierarchy(from: entity) where !described.isAbstract {
      let cursor = try ObjectCursor(
        store: store, layout: layout, entity: described.name, keys: [:], predicate: nil)
      let keys = KeyAttributes.of(described.name, in: model)
      while try cursor.step() {
        let found = names.newer(try shown(cursor.object(), entity: described.name, keys: keys))
        let (equal, compared) = RenameFinder.likeness(object.values, found.values)
        guard RenameFinder.isAlike(equal: equal, of: compared) else { continue }
        if let best,
          RenameFinder.share((best.equal, best.compared), comparedWith: (equal, compared)) >= 0
        {
          continue
        }
        best = Successor(object: found, equal: equal, compared: compared)
      }
    }
    return best
  }

  /// An object of `entity` as find shows it: its attributes and relationships as text, and its
  /// entity's `keys` (``KeyAttributes``).
  private static func shown(_ object: ObjectCursor.Object, entity: String, keys: [String])
    -> Object
  {
    var values: [String: String] = [:]
    for (name, value) in object.record.attributes { values[name] = ValueText.text(value) }
    for (name, targets) in object.relationships {
      values[name] = targets.joined(separator: ", ")
    }
    return Object(entity: entity, primaryKey: object.record.primaryKey, values: values, keys: keys)
  }

  /// What `body` gives; a predicate it finds bad becomes a usage error.
  private static func usageOnBadPredicate<T>(_ body: () throws(StoreError) -> T) throws -> T {
    do {
      return try body()
    } catch {
      guard error.kind == .invalidPredicate else { throw error }
      throw VaultError(.usage, error.detail, cause: error)
    }
  }

  /// The key `--history` follows, as the cursor gives keys: a primary key, or the key
  /// attribute's value parsed as its type.
  private static func historyKey(
    _ text: String, keys: [String: String], model: ObjectModel, _ options: Options
  ) throws -> AttributeValue {
    guard let attribute = keys.values.first else {
      let digits = text.hasPrefix("p") ? String(text.dropFirst()) : text
      guard let key = Int64(digits), key > 0 else {
        throw VaultError(
          .usage, "--history \(text): give a primary key (12 or p12), or --key ENTITY.ATTRIBUTE")
      }
      return .integer(key)
    }
    guard
      let description = model.attributes(of: options.entity).first(where: {
        $0.name == attribute
      }), let value = AttributeValue(defaultValueString: text, type: description.type),
      let key = ObjectCursor.storedKey(value)
    else {
      throw VaultError(.usage, "--history \(text): not a value of \(options.entity).\(attribute)")
    }
    return key
  }

}
