/// A validated managed-object model: its entities with their attributes and relationships.
///
/// A model is a value: once built it cannot change. Models come from Swift code
/// (``ModelBuilder`` or ``init(name:versionName:versionIdentifiers:entities:)``), from Xcode's
/// `.xcdatamodel`/`.xcdatamodeld`, from a compiled `.mom`/`.momd`, or from a store's
/// `Z_MODELCACHE`.
///
/// ```swift
/// let model = try ObjectModel(name: "Library", entities: [
///   EntityDescription(name: "Book", attributes: [.init(name: "title", type: .string)],
///     relationships: [.init(name: "author", destination: "Author", inverse: "books", maxCount: 1)]),
///   EntityDescription(name: "Author",
///     relationships: [.init(name: "books", destination: "Book", inverse: "author", maxCount: 0)]),
/// ])
/// ```
public struct ObjectModel: Hashable, Sendable, Codable {
  /// The model's name (the `.xcdatamodeld` or `.momd` name, when it came from one).
  public let name: String
  /// The version's name (`SampleModel2`), when the model is one version of a set.
  public let versionName: String?
  /// The version identifiers (`userDefinedModelVersionIdentifier`; Core Data's
  /// `NSStoreModelVersionIdentifiers`).
  public let versionIdentifiers: [String]
  /// The entities, sorted by name (their properties sorted by name too).
  public let entities: [EntityDescription]
  /// The lookups' answers, worked out once (not part of the model's value).
  private let index: ModelIndex

  /// Validates and creates a model.
  /// - Throws: ``ModelError`` naming the entity and property when names collide, a parent,
  ///   destination or inverse is missing, inverses disagree, inheritance has a cycle, or counts
  ///   are invalid.
  public init(
    name: String, versionName: String? = nil, versionIdentifiers: [String] = [],
    entities: [EntityDescription]
  ) throws(ModelError) {
    self.name = name
    self.versionName = versionName
    self.versionIdentifiers = versionIdentifiers
    self.entities = ObjectModel.canonical(entities)
    index = ModelIndex(self.entities)
    try validate()
  }

  /// A model from parts already validated (a copy with some fields cleared).
  static func unchecked(
    name: String, versionName: String?, versionIdentifiers: [String],
    entities: [EntityDescription]
  ) -> ObjectModel {
    ObjectModel(
      uncheckedName: name, versionName: versionName, versionIdentifiers: versionIdentifiers,
      entities: entities)
  }

  private init(
    uncheckedName name: String, versionName: String?, versionIdentifiers: [String],
    entities: [EntityDescription]
  ) {
    self.name = name
    self.versionName = versionName
    self.versionIdentifiers = versionIdentifiers
    self.entities = ObjectModel.canonical(entities)
    index = ModelIndex(self.entities)
  }

  private enum CodingKeys: String, CodingKey {
    case name, versionName, versionIdentifiers, entities
  }

  /// Decodes a model as it was encoded (its entities already in order).
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    name = try container.decode(String.self, forKey: .name)
    versionName = try container.decodeIfPresent(String.self, forKey: .versionName)
    versionIdentifiers = try container.decode([String].self, forKey: .versionIdentifiers)
    entities = try container.decode([EntityDescription].self, forKey: .entities)
    index = ModelIndex(entities)
  }

  /// Encodes the model's name, version and entities.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(name, forKey: .name)
    try container.encodeIfPresent(versionName, forKey: .versionName)
    try container.encode(versionIdentifiers, forKey: .versionIdentifiers)
    try container.encode(entities, forKey: .entities)
  }

  /// Models are equal when their names, versions and entities are.
  public static func == (lhs: ObjectModel, rhs: ObjectModel) -> Bool {
    lhs.name == rhs.name && lhs.versionName == rhs.versionName
      && lhs.versionIdentifiers == rhs.versionIdentifiers && lhs.entities == rhs.entities
  }

  /// Hashes the name, versions and entities.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(name)
    hasher.combine(versionName)
    hasher.combine(versionIdentifiers)
    hasher.combine(entities)
  }

  /// Entities sorted by name, each with its attributes and relationships sorted by name, so
  /// equal models compare and fingerprint equal whatever order their source listed them in.
  private static func canonical(_ entities: [EntityDescription]) -> [EntityDescription] {
    func sortingElements(_ attribute: AttributeDescription) -> AttributeDescription {
      guard !attribute.elements.isEmpty else { return attribute }
      var attribute = attribute
      attribute.elements = attribute.elements.map(sortingElements).sorted { $0.name < $1.name }
      return attribute
    }
    return entities.sorted { $0.name < $1.name }.map { entity in
      var entity = entity
      entity.attributes = entity.attributes.map(sortingElements).sorted { $0.name < $1.name }
      entity.relationships.sort { $0.name < $1.name }
      return entity
    }
  }

  // MARK: Lookups

  /// The entity named `name`.
  public func entity(named name: String) -> EntityDescription? {
    index.positions[name].map { entities[$0] }
  }

  /// The entity named `name`, or an error naming it.
  public func requireEntity(_ name: String) throws(ModelError) -> EntityDescription {
    guard let entity = entity(named: name) else {
      throw ModelError(.unknownReference, "the model has no entity \(name)", entity: name)
    }
    return entity
  }

  /// The entity and its ancestors, the entity first.
  public func lineage(of name: String) -> [EntityDescription] {
    index.lineages[name] ?? []
  }

  /// The root of the entity's inheritance tree (the entity whose table holds its rows).
  public func root(of name: String) -> EntityDescription? { lineage(of: name).last }

  /// The direct sub-entities of `name`, sorted by name.
  public func subentities(of name: String) -> [EntityDescription] {
    entities.filter { $0.parent == name }
  }

  /// The entity and all its descendants, in pre-order (parents before children, siblings by
  /// name).
  public func hierarchy(from name: String) -> [EntityDescription] {
    guard let entity = entity(named: name) else { return [] }
    return [entity] + subentities(of: name).flatMap { hierarchy(from: $0.name) }
  }

  /// The root entities (no parent), sorted by name.
  public var rootEntities: [EntityDescription] { entities.filter { $0.parent == nil } }

  /// Every entity in the order of Core Data's numbering (`Z_ENT`): roots by name, each followed
  /// at once by its sub-entities, depth first. The order a backup writes entities in.
  public var numberedEntities: [EntityDescription] {
    rootEntities.flatMap { hierarchy(from: $0.name) }
  }

  /// Core Data's entity numbering (`Z_ENT`): ``numberedEntities``' order, from 1.
  public var entityNumbers: [String: Int] {
    var numbers: [String: Int] = [:]
    for (offset, entity) in numberedEntities.enumerated() {
      numbers[entity.name] = offset + 1
    }
    return numbers
  }

  /// The attributes whose values objects of `name` hold, inherited ones included, ancestors'
  /// first: each composite replaced by its elements, named by key path (`author.person`; see
  /// ``AttributeDescription/flattened``). Values are read, written, compared and stored per
  /// element, as Core Data stores a composite in one column per element.
  public func attributes(of name: String) -> [AttributeDescription] {
    index.attributes[name] ?? []
  }

  /// The attributes `name` and its ancestors declare, ancestors' first, a composite as one
  /// attribute with its elements: the model's own view, for describing and hashing it.
  public func declaredAttributes(of name: String) -> [AttributeDescription] {
    lineage(of: name).reversed().flatMap(\.attributes)
  }

  /// The composite attribute (or nested composite, by key path: `author.origin`) that `key`
  /// names in `entity` or an ancestor; nil when `key` names no composite.
  public func compositeAttribute(_ key: String, of entity: String) -> AttributeDescription? {
    for ancestor in lineage(of: entity) {
      if let attribute = ancestor.attribute(named: key), attribute.isComposite { return attribute }
    }
    return nil
  }

  /// The relationships of `name` including inherited ones, ancestors' first.
  public func relationships(of name: String) -> [RelationshipDescription] {
    index.relationships[name] ?? []
  }

  /// The inverse of `relationship` on entity `entity`, if it has one.
  public func inverse(of relationship: RelationshipDescription) -> RelationshipDescription? {
    guard let inverse = relationship.inverse else { return nil }
    return relationships(of: relationship.destination).first { $0.name == inverse }
  }

  /// Apple's entity version hashes, for the entities that carry them.
  public var entityVersionHashes: [String: [UInt8]] {
    var hashes: [String: [UInt8]] = [:]
    for entity in entities { if let hash = entity.versionHash { hashes[entity.name] = hash } }
    return hashes
  }

  // MARK: Validation

  /// Whether `name` is a name Core Data takes for an entity, a property or a fetch index: ASCII
  /// letters, digits and `_`, not starting with a digit. Names become the store's table,
  /// column and index names, so nothing else may be in them.
  public static func isIdentifier(_ name: String) -> Bool {
    guard let first = name.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
    return name.unicodeScalars.allSatisfy {
      $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0)
    }
  }

  private func validate() throws(ModelError) {
    var names = Set<String>()
    for entity in entities {
      guard !entity.name.isEmpty else { throw ModelError(.invalidName, "an entity has no name") }
      guard Self.isIdentifier(entity.name) else {
        throw ModelError(
          .invalidName,
          "the entity name \(entity.name.debugDescription) is not a name Core Data takes (letters, digits and _, not starting with a digit)",
          entity: entity.name)
      }
      guard names.insert(entity.name).inserted else {
        throw ModelError(
          .duplicateName, "two entities are named \(entity.name)", entity: entity.name)
      }
    }
    for entity in entities {
      if let parent = entity.parent, self.entity(named: parent) == nil {
        throw ModelError(
          .unknownReference, "parent entity \(parent) does not exist", entity: entity.name)
      }
      if lineage(of: entity.name).count > entities.count {
        throw ModelError(
          .inheritanceCycle, "the entity is its own ancestor", entity: entity.name)
      }
    }
    for entity in entities {
      try validateProperties(of: entity)
    }
  }

  private func validateProperties(of entity: EntityDescription) throws(ModelError) {
    var seen = Set<String>()
    let inherited = lineage(of: entity.name).dropFirst()
    for ancestor in inherited.reversed() {
      for name in ancestor.attributes.map(\.name) + ancestor.relationships.map(\.name) {
        seen.insert(name)
      }
    }
    for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
      guard !name.isEmpty else {
        throw ModelError(.invalidName, "a property has no name", entity: entity.name)
      }
      guard Self.isIdentifier(name) else {
        throw ModelError(
          .invalidName,
          "the property name \(name.debugDescription) is not a name Core Data takes (letters, digits and _, not starting with a digit)",
          entity: entity.name, property: name)
      }
      guard seen.insert(name).inserted else {
        throw ModelError(
          .duplicateName, "the property name is used twice (inherited ones included)",
          entity: entity.name, property: name)
      }
    }
    for attribute in entity.attributes where attribute.isComposite || !attribute.elements.isEmpty {
      try validateComposite(attribute, of: entity.name, path: attribute.name, depth: 0)
    }
    for ancestor in lineage(of: entity.name) {
      for leaf in ancestor.attributes where leaf.isComposite {
        for element in leaf.flattened { seen.insert(element.name) }
      }
    }
    for relationship in entity.relationships {
      try validate(relationship, of: entity)
    }
    for constraint in entity.uniquenessConstraints {
      for property in constraint where !seen.contains(property) {
        throw ModelError(
          .unknownReference, "uniqueness constraint names an unknown property",
          entity: entity.name, property: property)
      }
    }
    for index in entity.fetchIndexes {
      guard Self.isIdentifier(index.name) else {
        throw ModelError(
          .invalidName, "fetch index name \(index.name.debugDescription) is not a plain name",
          entity: entity.name)
      }
      for element in index.elements where !seen.contains(element.property) {
        throw ModelError(
          .unknownReference, "fetch index \(index.name) names an unknown property",
          entity: entity.name, property: element.property)
      }
    }
  }

  /// A composite has elements (and only a composite has), each named as a property is, no two
  /// alike, none transient or derived on its own, and nests at most 16 deep.
  private func validateComposite(
    _ attribute: AttributeDescription, of entity: String, path: String, depth: Int
  ) throws(ModelError) {
    guard attribute.isComposite else {
      throw ModelError(
        .invalidName, "only a composite attribute has elements", entity: entity, property: path)
    }
    guard !attribute.elements.isEmpty else {
      throw ModelError(
        .invalidName, "the composite attribute has no elements", entity: entity, property: path)
    }
    try AttributeDescription.checkCompositeDepth(depth, entity: entity, property: path)
    var names = Set<String>()
    for element in attribute.elements {
      let elementPath = path + "." + element.name
      guard Self.isIdentifier(element.name) else {
        throw ModelError(
          .invalidName,
          "the element name \(element.name.debugDescription) is not a name Core Data takes (letters, digits and _, not starting with a digit)",
          entity: entity, property: elementPath)
      }
      guard names.insert(element.name).inserted else {
        throw ModelError(
          .duplicateName, "the composite has two elements of that name", entity: entity,
          property: elementPath)
      }
      guard !element.isDerived else {
        throw ModelError(
          .invalidName, "an element of a composite cannot be derived", entity: entity,
          property: elementPath)
      }
      if element.isComposite || !element.elements.isEmpty {
        try validateComposite(element, of: entity, path: elementPath, depth: depth + 1)
      }
    }
  }

  private func validate(_ relationship: RelationshipDescription, of entity: EntityDescription)
    throws(ModelError)
  {
    let context = (entity: entity.name, property: relationship.name)
    guard self.entity(named: relationship.destination) != nil else {
      throw ModelError(
        .unknownReference, "destination entity \(relationship.destination) does not exist",
        entity: context.entity, property: context.property)
    }
    guard relationship.minCount >= 0,
      relationship.maxCount <= 0 || relationship.minCount <= relationship.maxCount
    else {
      throw ModelError(
        .invalidCount,
        "counts \(relationship.minCount)...\(relationship.maxCount) are invalid (maxCount 0 or less means unbounded)",
        entity: context.entity, property: context.property)
    }
    guard let inverseName = relationship.inverse else { return }
    guard
      let inverse = relationships(of: relationship.destination).first(where: {
        $0.name == inverseName
      })
    else {
      throw ModelError(
        .unknownReference,
        "inverse \(relationship.destination).\(inverseName) does not exist",
        entity: context.entity, property: context.property)
    }
    let pointsBack = lineage(of: entity.name).contains { $0.name == inverse.destination }
    guard inverse.inverse == relationship.name, pointsBack else {
      throw ModelError(
        .inverseMismatch,
        "inverse \(relationship.destination).\(inverseName) points to \(inverse.destination).\(inverse.inverse ?? "nothing"), not back here",
        entity: context.entity, property: context.property)
    }
  }
}
