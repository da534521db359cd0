/// What a model's lookups answer, worked out once when the model is made: entities by name,
/// lineages, and the attributes and relationships each entity has with its ancestors'.
///
/// A context asks these object after object (an object's relationships, its inverse, its
/// table's root); walking the entity list and copying entity descriptions each time made a
/// merge of thirteen thousand objects spend a tenth of its time here. Part of the model's
/// value only as a cache: equality, hashing and coding ignore it.
final class ModelIndex: Sendable {
  let positions: [String: Int]
  let lineages: [String: [EntityDescription]]
  let attributes: [String: [AttributeDescription]]
  let relationships: [String: [RelationshipDescription]]

  init(_ entities: [EntityDescription]) {
    var positions: [String: Int] = [:]
    for (position, entity) in entities.enumerated() where positions[entity.name] == nil {
      positions[entity.name] = position
    }
    var lineages: [String: [EntityDescription]] = [:]
    var attributes: [String: [AttributeDescription]] = [:]
    var relationships: [String: [RelationshipDescription]] = [:]
    for entity in entities where lineages[entity.name] == nil {
      var lineage: [EntityDescription] = []
      var current: EntityDescription? = entity
      // A cycle (refused by validation, which asks for lineages first) ends here.
      while let next = current, lineage.count <= entities.count {
        lineage.append(next)
        current = next.parent.flatMap { positions[$0] }.map { entities[$0] }
      }
      lineages[entity.name] = lineage
      let declared = lineage.reversed().flatMap(\.attributes)
      // Most models have no composite: no array per attribute for them.
      attributes[entity.name] =
        declared.contains(where: \.isComposite) ? declared.flatMap(\.flattened) : declared
      relationships[entity.name] = lineage.reversed().flatMap(\.relationships)
    }
    self.positions = positions
    self.lineages = lineages
    self.attributes = attributes
    self.relationships = relationships
  }
}
