import ObjectModel

extension ManagedObject {
  /// The object as a class-tagged dictionary: its stored attributes (derived and transient ones
  /// aside; attributes without a value left out), its extended attributes (in their place of
  /// the bucket attribute), its non-empty to-one relationships, and its
  /// to-many relationships (in order for ordered ones, else by primary key), all as references.
  /// - Throws: ``StoreError`` when a relationship cannot be read.
  public func dictionary() throws(StoreError) -> ObjectDictionary {
    var result = ObjectDictionary(entity: entity, primaryKey: primaryKey)
    let bucket = traits.bucket
    for attribute in context.model.attributes(of: entity)
    where !attribute.isTransient && !attribute.isDerived && attribute.name != bucket {
      if let value = attributes[attribute.name] { result.attributes[attribute.name] = value }
    }
    if bucket != nil {
      for (key, value) in try extendedValues() { result.extended[key] = value }
    }
    for relationship in context.model.relationships(of: entity) where !relationship.isTransient {
      if relationship.isToMany {
        var members = try context.members(of: self, relationship.name)
        if !relationship.isOrdered {
          members.sort { ($0.primaryKey, $0.entity) < ($1.primaryKey, $1.entity) }
        }
        result.toMany[relationship.name] = members.map(ObjectDictionary.Reference.init)
      } else if let target = toOne[relationship.name] {
        result.toOne[relationship.name] = ObjectDictionary.Reference(target)
      }
    }
    return result
  }

  /// Sets what `dictionary` holds: each attribute and relationship it names (a `nil` empties
  /// it; a to-many one becomes exactly the members given, in their order), leaving the rest.
  /// Its entity must be this object's or a super-entity of it; its primary key is ignored.
  /// - Throws: ``StoreError`` naming the key when an attribute or relationship is unknown, a
  ///   value does not fit, or a reference does not resolve to exactly one object.
  public func populate(from dictionary: ObjectDictionary) throws(StoreError) {
    context.undoManager?.beginUndoGrouping()
    defer { context.undoManager?.endUndoGrouping() }
    guard context.model.lineage(of: entity).contains(where: { $0.name == dictionary.entity })
    else {
      throw context.fail(.invalidValue, "\(self) is not a \(dictionary.entity)")
    }
    for (key, value) in dictionary.attributes.sorted(by: { $0.key < $1.key }) {
      try setValue(value, for: key)
    }
    for (key, value) in dictionary.extended.sorted(by: { $0.key < $1.key }) {
      try setValue(value, forExtendedKey: key)
    }
    for (key, reference) in dictionary.toOne.sorted(by: { $0.key < $1.key }) {
      let target = try reference.map { reference throws(StoreError) in
        try context.object(resolving: reference, for: "\(entity).\(key)")
      }
      try setObject(target, for: key)
    }
    for (key, references) in dictionary.toMany.sorted(by: { $0.key < $1.key }) {
      var members: [ObjectReference] = []
      for reference in references {
        members.append(try context.object(resolving: reference, for: "\(entity).\(key)").reference)
      }
      try context.setMembers(members, of: self, key)
    }
  }
}

extension ObjectContext {
  /// Creates an object from a class-tagged dictionary: with its primary key when it has one
  /// (which must be free), else a fresh one; then its attributes and relationships as
  /// ``ManagedObject/populate(from:)`` sets them.
  /// - Throws: ``StoreError`` when the entity is unknown or abstract, the key is taken, or
  ///   populating fails.
  @discardableResult
  public func insert(_ dictionary: ObjectDictionary) throws(StoreError) -> ManagedObject {
    let object = try insert(dictionary.entity, primaryKey: dictionary.primaryKey)
    try object.populate(from: dictionary)
    return object
  }

  /// The one object a reference picks out: by primary key (among the entity's hierarchy), or
  /// by the values of its natural key, pending changes included.
  /// - Parameter key: what holds the reference, for messages (`Book.author`).
  /// - Throws: ``StoreError`` when no object or more than one matches.
  public func object(resolving reference: ObjectDictionary.Reference, for key: String? = nil)
    throws(StoreError) -> ManagedObject
  {
    let place = key.map { " (\($0))" } ?? ""
    guard model.entity(named: reference.entity) != nil else {
      throw fail(.invalidValue, "the model has no entity \(reference.entity)\(place)")
    }
    if let primaryKey = reference.primaryKey {
      for entity in model.hierarchy(from: reference.entity) {
        if let known = registered[ObjectReference(entity: entity.name, primaryKey: primaryKey)],
          !known.isDeleted
        {
          return known
        }
      }
      let table = try table(for: reference.entity)
      let wanted = Set(model.hierarchy(from: reference.entity).map(\.name))
      if let found = try load(table, filter: "Z_PK = ?", bindings: [.integer(primaryKey)]).first,
        wanted.contains(found.entity), !found.isDeleted
      {
        return found
      }
      throw fail(.invalidValue, "no object \(reference)\(place)")
    }
    guard !reference.naturalKey.isEmpty else {
      throw fail(
        .invalidValue, "a reference to \(reference.entity) has neither a key nor values\(place)")
    }
    let known = Set(model.attributes(of: reference.entity).map(\.name))
    for name in reference.naturalKey.keys.sorted() where !known.contains(name) {
      throw fail(.invalidValue, "\(reference.entity) has no attribute \(name)\(place)")
    }
    let conditions = reference.naturalKey.sorted { $0.key < $1.key }.map {
      Predicate.equal($0.key, $0.value)
    }
    let matches = try fetch(FetchRequest(entity: reference.entity, predicate: .and(conditions)))
    guard matches.count == 1 else {
      throw fail(
        .invalidValue,
        matches.isEmpty
          ? "no \(reference)\(place)"
          : "\(matches.count) objects match \(reference)\(place); a natural key must pick out one")
    }
    return matches[0]
  }

  /// Makes a to-many relationship hold exactly `members`, in their order; inverses follow.
  func setMembers(_ members: [ObjectReference], of object: ManagedObject, _ name: String)
    throws(StoreError)
  {
    let relationship = try relationship(name, of: object.entity)
    guard relationship.isToMany else {
      throw fail(.invalidValue, "\(object.entity).\(name) is to-one")
    }
    var wanted: [ObjectReference] = []
    var seen = Set<ObjectReference>()
    for member in members where seen.insert(member).inserted { wanted.append(member) }
    let current = try self.members(of: object, name)
    guard current != wanted else { return }
    let step = undoStep { .members(object.reference, name, current) }
    defer { step.end() }
    for member in current where !seen.contains(member) {
      try removeMember(member, from: object, name)
    }
    let present = Set(current)
    for member in wanted where !present.contains(member) {
      try addMember(member, to: object, name)
    }
    if relationship.isOrdered && object.toMany[name] != wanted {
      object.toMany[name] = wanted
      reordered.insert(OrderedMembership(owner: object.reference, relationship: name))
    }
    step.commit()
  }
}
