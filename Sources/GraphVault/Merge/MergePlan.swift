import ObjectModel
import ObjectStore
import SQLite

/// The work of one merge: each source object matched with the store's (``match(subset:roots:)``),
/// then the store's context changed to hold them (``apply(replacing:)``). See ``MergeService``.
struct MergePlan {
  /// What became of one source object.
  enum Fate {
    /// Not in the store: to be inserted (under its own key when the store has not used it).
    case insert
    /// In the store with the same values.
    case present(ManagedObject)
    /// In the store with other values (the attributes that differ).
    case conflict(ManagedObject, [String])
  }

  let model: ObjectModel
  let keys: [String: String]
  let from: ObjectContext
  let into: ObjectContext

  /// The source objects, in a stable order (table, then primary key), with their fate.
  private var objects: [(source: ManagedObject, fate: Fate)] = []
  /// The store's object for each source object merged.
  private var merged: [ObjectReference: ManagedObject] = [:]
  /// The source objects the merge inserts.
  private var insertedSources = Set<ObjectReference>()
  /// Source objects outside the selection looked for in the store (nil: not there).
  private var found: [ObjectReference: ManagedObject?] = [:]
  private(set) var counts: [String: MergeResult.Counts] = [:]
  private(set) var conflicts: [String] = []
  /// What became of each object, in order.
  private(set) var fates: [MergeResult.Fate] = []

  init(model: ObjectModel, keys: [String: String], from: ObjectContext, into: ObjectContext) {
    self.model = model
    self.keys = keys
    self.from = from
    self.into = into
  }

  /// The entity along `entity`'s lineage that has a key attribute, and the attribute.
  private func key(of entity: String) -> (entity: String, attribute: String)? {
    Self.key(of: entity, keys: keys, model: model)
  }

  /// The entity along `entity`'s lineage that `keys` gives a key attribute, and the attribute:
  /// the rule both matching and ``insertable(model:keys:store:)`` follow.
  private static func key(of entity: String, keys: [String: String], model: ObjectModel)
    -> (entity: String, attribute: String)?
  {
    for ancestor in model.lineage(of: entity) {
      if let attribute = keys[ancestor.name] { return (ancestor.name, attribute) }
    }
    return nil
  }

  /// The stored attributes an object is compared and copied by (derived ones are the
  /// store's to compute).
  private func attributes(of entity: String) -> [String] {
    model.attributes(of: entity).filter { $0.isStored && !$0.isDerived }.map(\.name)
  }

  // MARK: Matching

  /// Whether an object may be inserted into `store`, before anything is matched: false only
  /// for an object matched by primary key (no key attribute along its lineage) that the store
  /// holds under that key as the same entity, which ``match(subset:roots:)`` finds present.
  static func insertable(model: ObjectModel, keys: [String: String], store: CoreDataStore)
    throws -> (ObjectReference) throws -> Bool
  {
    let layout = try store.layout(for: model)
    let statements = StatementCache(database: store.database)
    return { object in
      guard key(of: object.entity, keys: keys, model: model) == nil,
        let table = layout.table(for: object.entity),
        let number = layout.entityNumbers[object.entity]
      else { return true }
      let statement = try statements.statement("SELECT Z_ENT FROM \(table.name) WHERE Z_PK = ?")
      try statement.bind(.integer(object.primaryKey), at: 1)
      return try statement.scalar().integerValue != Int64(number)
    }
  }

  /// Reads the subset's objects from the source and finds each in the store.
  mutating func match(subset: FixtureCutter.Subset, roots: [String: String]) throws {
    var sources: [ManagedObject] = []
    for (table, primaryKeys) in subset.keys.sorted(by: { $0.key < $1.key }) {
      guard let root = roots[table] else { continue }
      for primaryKey in primaryKeys.sorted() {
        if let object = try from.object(primaryKey: primaryKey, inHierarchyOf: root) {
          sources.append(object)
        }
      }
    }
    let byKey = try lookUpKeys(of: sources)
    for object in sources {
      let existing = try counterpart(of: object, byKey: byKey)
      let fate: Fate
      if let existing {
        let differing = try attributes(of: object.entity).filter {
          try object.value(for: $0) != existing.value(for: $0)
        }
        if differing.isEmpty {
          fate = .present(existing)
        } else {
          fate = .conflict(existing, differing)
          conflicts.append("\(existing) (\(differing.joined(separator: ", ")))")
        }
      } else {
        fate = .insert
      }
      objects.append((object, fate))
    }
  }

  /// The store's objects holding the key values of `sources`, per keyed entity.
  private func lookUpKeys(of sources: [ManagedObject]) throws -> [String: [AttributeValue:
    ManagedObject]]
  {
    var wanted: [String: (attribute: String, values: [AttributeValue])] = [:]
    for object in sources {
      guard let (entity, attribute) = key(of: object.entity),
        let value = try object.value(for: attribute)
      else { continue }
      wanted[entity, default: (attribute, [])].values.append(value)
    }
    var found: [String: [AttributeValue: ManagedObject]] = [:]
    for (entity, request) in wanted {
      found[entity] = try into.objects(of: entity, whose: request.attribute, isIn: request.values)
    }
    return found
  }

  /// The store's object that is `object`: by key attribute when its entity has one (an
  /// object without a key value has none), else by primary key and entity.
  private func counterpart(
    of object: ManagedObject, byKey: [String: [AttributeValue: ManagedObject]]
  ) throws -> ManagedObject? {
    if let (entity, attribute) = key(of: object.entity) {
      guard let value = try object.value(for: attribute), let match = byKey[entity]?[value],
        match.entity == object.entity
      else { return nil }
      return match
    }
    guard
      let match = try into.object(primaryKey: object.primaryKey, inHierarchyOf: object.entity),
      match.entity == object.entity
    else { return nil }
    return match
  }

  // MARK: Applying

  /// Gives `target` the stored attribute values of `source`.
  private func copyAttributes(of source: ManagedObject, to target: ManagedObject) throws {
    for attribute in attributes(of: source.entity) {
      try target.setValue(try source.value(for: attribute), for: attribute)
    }
  }

  /// Inserts, replaces and links in the store's context (nothing is saved here).
  mutating func apply(replacing: Bool) throws {
    // Objects keeping their own primary keys first: keys handed out afterwards come after
    // every key given, so a new key never takes one that a later object keeps.
    for keepsKey in [true, false] {
      for (source, fate) in objects {
        guard case .insert = fate, !insertedSources.contains(source.reference) else { continue }
        let free =
          try into.object(primaryKey: source.primaryKey, inHierarchyOf: source.entity) == nil
        guard free == keepsKey else { continue }
        let inserted = try into.insert(source.entity, primaryKey: free ? source.primaryKey : nil)
        try copyAttributes(of: source, to: inserted)
        merged[source.reference] = inserted
        insertedSources.insert(source.reference)
        counts[source.entity, default: .init()].inserted += 1
        if !free { counts[source.entity, default: .init()].renumbered += 1 }
        fates.append(
          .init(
            action: .insert, entity: source.entity, source: source.primaryKey,
            store: free ? source.primaryKey : nil,
            detail: free ? nil : "under a new primary key"))
      }
    }
    for (source, fate) in objects {
      switch fate {
      case .insert: break
      case .present(let existing):
        merged[source.reference] = existing
        counts[source.entity, default: .init()].present += 1
        fates.append(
          .init(
            action: .present, entity: source.entity, source: source.primaryKey,
            store: existing.primaryKey, detail: nil))
      case .conflict(let existing, let differing):
        merged[source.reference] = existing
        if replacing {
          try copyAttributes(of: source, to: existing)
          counts[source.entity, default: .init()].replaced += 1
        } else {
          counts[source.entity, default: .init()].kept += 1
        }
        fates.append(
          .init(
            action: replacing ? .replace : .keep, entity: source.entity,
            source: source.primaryKey, store: existing.primaryKey,
            detail: "differs: " + differing.joined(separator: ", ")))
      }
    }
    for (source, fate) in objects {
      switch fate {
      case .insert:
        try connect(source, to: merged[source.reference]!)
      case .conflict(let existing, _) where replacing:
        try connectToOne(source, to: existing)
      default: break
      }
    }
  }

  /// The store's object for a source object: the one merged, else the one the store holds
  /// (looked for once), else nil.
  private mutating func resolve(_ object: ManagedObject) throws -> ManagedObject? {
    if let merged = merged[object.reference] { return merged }
    if let known = found[object.reference] { return known }
    let byKey = try lookUpKeys(of: [object])
    let match = try counterpart(of: object, byKey: byKey)
    found[object.reference] = match
    return match
  }

  /// Points the to-one relationships of `target` where `source`'s point.
  private mutating func connectToOne(_ source: ManagedObject, to target: ManagedObject) throws {
    for relationship in model.relationships(of: source.entity)
    where !relationship.isTransient && !relationship.isToMany {
      guard let destination = try source.object(for: relationship.name),
        let mapped = try resolve(destination)
      else { continue }
      if try target.object(for: relationship.name) !== mapped {
        try target.setObject(mapped, for: relationship.name)
      }
    }
  }

  /// Whether `member`, an object the store keeps, already belongs to another object through
  /// `relationship` (of `target`'s entity), so that it cannot join `target`: a one-to-many's
  /// member whose side is set, or a member of a to-many without an inverse (kept on the
  /// members' rows, one owner each) that an owner holds. A many-to-many's member never is.
  private func isHeld(
    _ member: ManagedObject, through relationship: RelationshipDescription,
    inverse: RelationshipDescription?, of target: ManagedObject
  ) throws -> Bool {
    guard let inverse else {
      return try into.hasOwner(member, through: relationship.name, of: target.entity)
    }
    return try !inverse.isToMany && member.object(for: inverse.name) != nil
  }

  /// Gives an inserted object its relationships: to-ones as the source's, to-manys with the
  /// members found (a member already in the store only when its side is empty).
  private mutating func connect(_ source: ManagedObject, to target: ManagedObject) throws {
    try connectToOne(source, to: target)
    for relationship in model.relationships(of: source.entity)
    where !relationship.isTransient && relationship.isToMany {
      let sourceMembers = try source.objects(for: relationship.name)
      if !relationship.isOptional && sourceMembers.isEmpty {
        // The source held it empty: as it was, not a new violation.
        into.acceptEmpty(relationship.name, of: target)
      }
      let inverse = model.inverse(of: relationship)
      var members: [ManagedObject] = []
      for member in sourceMembers {
        guard let mapped = try resolve(member) else { continue }
        if !insertedSources.contains(member.reference) {
          if try isHeld(mapped, through: relationship, inverse: inverse, of: target) { continue }
          counts[mapped.entity, default: .init()].linked += 1
          let to = target.primaryKey > 0 ? " p\(target.primaryKey)" : " (inserted)"
          fates.append(
            .init(
              action: .link, entity: mapped.entity, source: nil, store: mapped.primaryKey,
              detail: "to \(source.entity)\(to) through \(relationship.name)"))
        }
        members.append(mapped)
      }
      if let inverse, !relationship.isOrdered && !inverse.isToMany {
        for member in members where try member.object(for: inverse.name) !== target {
          try target.add(member, to: relationship.name)
        }
      } else {
        let current = try target.objects(for: relationship.name)
        let missing = current.filter { object in !members.contains { $0 === object } }
        try target.setObjects(members + missing, for: relationship.name)
      }
    }
  }
}
