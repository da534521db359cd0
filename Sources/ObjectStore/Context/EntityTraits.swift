import ObjectModel

/// What a context needs of an entity often, worked out once and shared by the entity's
/// objects: its attributes by slot, their default values, its to-many relationships, its
/// extended attributes' bucket, and how a save writes its rows.
@usableFromInline final class EntityTraits {
  /// The entity's name.
  let name: String
  /// The root of its hierarchy, whose counter numbers its objects; nil when the model has no
  /// such entity.
  let root: String?
  /// Whether it is abstract (no object is of it alone).
  let isAbstract: Bool
  /// Its attributes and its ancestors', composites by their elements, in slot order
  /// (``AttributeSlots``).
  @usableFromInline let slotAttributes: [AttributeDescription]
  /// Their names, in slot order.
  let slotNames: [String]
  /// Each attribute's slot, by name.
  @usableFromInline let slots: [String: Int]
  /// A new object's values by slot: the defaults.
  let defaultValues: [AttributeValue?]
  /// Each to-many relationship empty: what a new object holds (shared until one changes).
  let emptyToMany: [String: [ObjectReference]]
  /// The required attributes a save checks (neither optional nor derived), by name and slot,
  /// with whether each is transient.
  let required: [(name: String, slot: Int, isTransient: Bool)]
  /// The relationships a save checks: required to-ones, and to-manys with an inverse whose
  /// count is bounded or required.
  let checkedRelationships: [RelationshipDescription]
  /// The attribute that holds its extended attributes, if it keeps any.
  let bucket: String?
  /// Whether a key it does not have falls through to its extended attributes.
  let fallsThrough: Bool
  /// How a save writes its rows; made on the first save that writes one.
  var rows: RowStatements?

  /// The attribute named `name`, if the entity has one.
  func attribute(named name: String) -> AttributeDescription? {
    slots[name].map { slotAttributes[$0] }
  }

  init(entity: String, model: ObjectModel) {
    name = entity
    let description = model.entity(named: entity)
    root = description == nil ? nil : model.root(of: entity)?.name
    isAbstract = description?.isAbstract ?? false
    let all = model.attributes(of: entity)
    let byName = Dictionary(all.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    slotNames = byName.keys.sorted()
    slotAttributes = slotNames.map { byName[$0]! }
    slots = Dictionary(uniqueKeysWithValues: slotNames.enumerated().map { ($1, $0) })
    defaultValues = slotAttributes.map(\.defaultValue)
    emptyToMany = Dictionary(
      model.relationships(of: entity).filter(\.isToMany).map { ($0.name, []) },
      uniquingKeysWith: { first, _ in first })
    let slots = self.slots
    required = all.filter { !$0.isOptional && !$0.isDerived }.compactMap { attribute in
      slots[attribute.name].map { (attribute.name, $0, attribute.isTransient) }
    }
    checkedRelationships = model.relationships(of: entity).filter { relationship in
      guard !relationship.isTransient else { return false }
      guard relationship.isToMany else { return !relationship.isOptional }
      return (!relationship.isOptional || relationship.minCount > 0 || relationship.maxCount > 1)
        && model.inverse(of: relationship) != nil
    }
    let bucket = ExtendedAttributes.bucket(of: entity, in: model)
    let fallsThrough = model.lineage(of: entity).contains {
      ["YES", "TRUE", "1"].contains($0.userInfo[ExtendedAttributes.fallThroughKey]?.uppercased())
    }
    self.bucket = bucket
    self.fallsThrough = bucket != nil && fallsThrough
  }
}

extension ObjectContext {
  /// The traits of `entity`, worked out on first use.
  func traits(of entity: String) -> EntityTraits {
    if let known = entityTraits[entity] { return known }
    let traits = EntityTraits(entity: entity, model: model)
    entityTraits[entity] = traits
    return traits
  }
}
