/// Builds a model in Swift code, entity by entity, then validates it.
///
/// A builder is frozen by ``build()``: a model handed to a store or context must not change
/// under it, so changing the builder afterwards throws ``ModelError`` (kind
/// ``ModelError/Kind/frozen``) instead of silently diverging. Start a new builder from the
/// model (``init(model:)``) to make the next version.
///
/// ```swift
/// let builder = ModelBuilder(name: "Library")
/// try builder.addEntity(EntityDescription(name: "Book", attributes: [
///   AttributeDescription(name: "title", type: .string, isOptional: false),
/// ]))
/// let model = try builder.build()
/// ```
public final class ModelBuilder {
  /// The model's name.
  public let name: String
  private var versionName: String?
  private var versionIdentifiers: [String]
  private var entities: [String: EntityDescription] = [:]
  private var built: ObjectModel?

  /// A builder for a new, empty model.
  public init(name: String, versionName: String? = nil, versionIdentifiers: [String] = []) {
    self.name = name
    self.versionName = versionName
    self.versionIdentifiers = versionIdentifiers
  }

  /// A builder starting from an existing model (to make its next version).
  public init(model: ObjectModel, versionName: String? = nil) {
    self.name = model.name
    self.versionName = versionName ?? model.versionName
    self.versionIdentifiers = model.versionIdentifiers
    for entity in model.entities { entities[entity.name] = entity }
  }

  /// Whether ``build()`` has frozen the builder.
  public var isFrozen: Bool { built != nil }

  private func checkNotFrozen(_ entity: String? = nil) throws(ModelError) {
    if built != nil {
      throw ModelError(
        .frozen,
        "model \(name) is frozen: it was built and may be in use; start a new ModelBuilder",
        entity: entity)
    }
  }

  /// Adds an entity.
  /// - Throws: ``ModelError`` when the builder is frozen or an entity of that name exists.
  public func addEntity(_ entity: EntityDescription) throws(ModelError) {
    try checkNotFrozen(entity.name)
    guard entities[entity.name] == nil else {
      throw ModelError(.duplicateName, "two entities are named \(entity.name)", entity: entity.name)
    }
    entities[entity.name] = entity
  }

  /// Changes an entity in place.
  /// - Throws: ``ModelError`` when the builder is frozen or the entity does not exist.
  public func modifyEntity(_ name: String, _ change: (inout EntityDescription) -> Void)
    throws(ModelError)
  {
    try checkNotFrozen(name)
    guard var entity = entities[name] else {
      throw ModelError(.unknownReference, "the model has no entity \(name)", entity: name)
    }
    change(&entity)
    entities.removeValue(forKey: name)
    entities[entity.name] = entity
  }

  /// Removes an entity.
  public func removeEntity(_ name: String) throws(ModelError) {
    try checkNotFrozen(name)
    entities.removeValue(forKey: name)
  }

  /// Adds a relationship and its inverse in one step, so both ends always agree.
  /// - Parameters:
  ///   - relationship: the relationship on `entity`.
  ///   - inverse: its inverse, on the relationship's destination.
  public func relate(
    _ entity: String, _ relationship: RelationshipDescription,
    inverse: RelationshipDescription
  ) throws(ModelError) {
    var forward = relationship
    var backward = inverse
    forward.inverse = inverse.name
    backward.inverse = relationship.name
    backward.destination = entity
    try modifyEntity(entity) { $0.relationships.append(forward) }
    try modifyEntity(relationship.destination) { $0.relationships.append(backward) }
  }

  /// Validates the model and freezes the builder.
  /// - Throws: ``ModelError`` naming what is wrong (see
  ///   ``ObjectModel/init(name:versionName:versionIdentifiers:entities:)``).
  @discardableResult
  public func build() throws(ModelError) -> ObjectModel {
    if let built { return built }
    let model = try ObjectModel(
      name: name, versionName: versionName, versionIdentifiers: versionIdentifiers,
      entities: Array(entities.values))
    built = model
    return model
  }
}
