import Foundation
import ObjectModel

extension MappingModel {
  /// A custom entity migration policy class that entity mappings of a hop name.
  public struct Policy: Sendable, Equatable {
    /// The class name, as the mapping model writes it.
    public var className: String
    /// The entity mappings that name it.
    public var mappings: [String]
    /// Their destination entities (the source entity for a removal).
    public var entities: [String]
  }

  /// Whether this mapping model maps `source` to `destination`: by the entity version hashes
  /// its entity mappings carry (a `.cdm`, as Core Data chooses one), else by the version names
  /// of the `.xcdatamodel`s it was drawn between.
  public func covers(from source: ObjectModel, to destination: ObjectModel) -> Bool {
    let hashed = entityMappings.contains { $0.sourceHash != nil || $0.destinationHash != nil }
    guard hashed else {
      return sourceVersion == versionName(of: source)
        && destinationVersion == versionName(of: destination)
    }
    let sourceHashes = source.versionHashes
    let destinationHashes = destination.versionHashes
    for mapping in entityMappings {
      if let hash = mapping.sourceHash,
        mapping.source.flatMap({ sourceHashes[$0] }) != hash
      {
        return false
      }
      if let hash = mapping.destinationHash,
        mapping.destination.flatMap({ destinationHashes[$0] }) != hash
      {
        return false
      }
    }
    return true
  }

  /// The engine's rules for the hop `source` → `destination` from the entity mappings of
  /// `models` (every model that covers the hop: an app may split one hop over several), with
  /// the custom policy classes they name.
  ///
  /// A mapping model is followed as Core Data follows it, not inferred around: a destination
  /// entity no entity mapping fills gets no objects, a property without a value expression
  /// gets its default, and a relationship's links survive when either of its ends maps them.
  /// Where an `.xcmappingmodel` and its compiled `.cdm` both give a mapping, the `.cdm` is
  /// followed (it is what Core Data runs).
  /// - Throws: ``MigrationError`` (``MigrationError/Kind/refused``) naming the mapping, the
  ///   property and the expression graphvault does not migrate.
  public static func rules(
    for models: [MappingModel], from source: ObjectModel, to destination: ObjectModel
  ) throws(MigrationError) -> (hop: MappingFile.Hop, policies: [Policy]) {
    let hopName = "\(versionName(of: source)) → \(versionName(of: destination))"
    func refuse(_ detail: String) -> MigrationError {
      MigrationError(.refused, "\(hopName): \(detail)")
    }
    var mappings: [(mapping: EntityMapping, path: String)] = []
    var seen: [String: MappingModel] = [:]
    for model in models.sorted(by: { $0.isCompiled && !$1.isCompiled }) {
      for mapping in model.entityMappings {
        if let other = seen[mapping.name] {
          if other.isCompiled != model.isCompiled { continue }
          throw refuse(
            "entity mapping \(mapping.name) is in both \(other.path) and \(model.path); give one of them"
          )
        }
        seen[mapping.name] = model
        mappings.append((mapping, model.path))
      }
    }
    let byName = Dictionary(mappings.map { ($0.mapping.name, $0.mapping) }) { first, _ in first }

    var entities: [String: MappingFile.EntityRule] = [:]
    var madeBy: [String: String] = [:]
    var policies: [Policy] = []
    for (mapping, path) in mappings {
      let label = "entity mapping \(mapping.name) (\(path))"
      if let className = mapping.policyClassName, !className.isEmpty {
        let entity = mapping.destination ?? mapping.source ?? mapping.name
        if let index = policies.firstIndex(where: { $0.className == className }) {
          policies[index].mappings.append(mapping.name)
          policies[index].entities.append(entity)
        } else {
          policies.append(
            Policy(className: className, mappings: [mapping.name], entities: [entity]))
        }
      }
      if let entity = mapping.source, source.entity(named: entity) == nil {
        throw refuse("\(label) maps from \(entity), which \(versionName(of: source)) does not have")
      }
      if let entity = mapping.destination, destination.entity(named: entity) == nil {
        throw refuse(
          "\(label) maps to \(entity), which \(versionName(of: destination)) does not have")
      }
      try checkSourceExpression(of: mapping, label: label, refuse: refuse)
      guard let from = mapping.source, let to = mapping.destination,
        mapping.kind != .add, mapping.kind != .remove
      else { continue }
      if let other = madeBy[to] {
        throw refuse(
          "entity mappings \(other) and \(mapping.name) both make \(to) objects; graphvault migrates each destination entity from one source entity"
        )
      }
      madeBy[to] = mapping.name
      entities[to] = try rule(
        mapping, from: from, to: to, source: source, destination: destination, known: byName,
        label: label, refuse: refuse)
    }
    // Concrete entities no mapping fills get no objects, as in Core Data.
    for entity in destination.entities where !entity.isAbstract && entities[entity.name] == nil {
      entities[entity.name] = MappingFile.EntityRule(
        from: nil, drop: true, attributes: [:], relationships: [:])
    }
    keepLinksMappedAtEitherEnd(&entities, source: source, destination: destination)
    return (
      MappingFile.Hop(
        from: versionName(of: source), to: versionName(of: destination), entities: entities,
        extractions: []),
      policies
    )
  }

  /// Refuses a source expression that chooses some of the source objects: graphvault migrates
  /// every object of an entity.
  private static func checkSourceExpression(
    of mapping: EntityMapping, label: String, refuse: (String) -> MigrationError
  ) throws(MigrationError) {
    guard let expression = mapping.sourceExpression else { return }
    guard let fetch = expression.sourceFetch, fetch.entity == mapping.source else {
      throw refuse(
        "\(label) takes its objects from \(expression), which is not a fetch of its source entity")
    }
    let predicate = fetch.predicate.trimmingCharacters(in: .whitespaces)
    guard predicate.isEmpty || predicate == "TRUEPREDICATE" else {
      throw refuse(
        "\(label) migrates only the \(fetch.entity) objects matching \(predicate); graphvault migrates every object of an entity (drop the filter, or choose objects in a MigrationStage)"
      )
    }
  }

  private static func rule(
    _ mapping: EntityMapping, from: String, to: String, source: ObjectModel,
    destination: ObjectModel, known: [String: EntityMapping], label: String,
    refuse: (String) -> MigrationError
  ) throws(MigrationError) -> MappingFile.EntityRule {
    let sourceAttributes = Set(source.attributes(of: from).filter(\.isStored).map(\.name))
    let sourceRelationships = Set(
      source.relationships(of: from).filter { !$0.isTransient }.map(\.name))
    let attributes = destination.attributes(of: to)
    let relationships = destination.relationships(of: to)
    for property in mapping.attributes
    where !attributes.contains(where: { $0.name == property.name }) {
      throw refuse("\(label) maps \(to).\(property.name), which is not an attribute of \(to)")
    }
    for property in mapping.relationships
    where !relationships.contains(where: { $0.name == property.name }) {
      throw refuse("\(label) maps \(to).\(property.name), which is not a relationship of \(to)")
    }

    var rule = MappingFile.EntityRule(from: from, drop: false, attributes: [:], relationships: [:])
    for attribute in attributes where attribute.isStored {
      let property = mapping.attributes.first { $0.name == attribute.name }
      var expression = property?.expression
      if expression == nil, property?.isAutogenerated == true,
        sourceAttributes.contains(attribute.name)
      {
        expression = .keyPath(.variable("source"), attribute.name)
      }
      let name = "\(to).\(attribute.name)"
      switch expression {
      case nil, .constant(.null)?:
        rule.attributes[attribute.name] = MappingFile.AttributeRule(drop: true)
      case .constant(let constant)?:
        let text: String
        switch constant {
        case .string(let value): text = value
        case .integer(let value): text = String(value)
        case .real(let value): text = String(value)
        case .null: text = ""
        }
        rule.attributes[attribute.name] = MappingFile.AttributeRule(defaultValue: text, drop: true)
      case let expression?:
        guard let path = expression.sourceKeyPath, sourceAttributes.contains(path) else {
          throw refuse(
            "\(label) gives \(name) the value \(expression), which graphvault does not evaluate: it migrates $source.ATTRIBUTE, constants, and the FUNCTION($manager, …) calls Xcode writes for relationships; register a MigrationStage under the entity mapping's policy class for the rest"
          )
        }
        rule.attributes[attribute.name] = MappingFile.AttributeRule(from: path)
      }
    }
    for relationship in relationships where !relationship.isTransient {
      let property = mapping.relationships.first { $0.name == relationship.name }
      let name = "\(to).\(relationship.name)"
      var from: String?
      if let expression = property?.expression {
        guard let call = expression.destinationInstances,
          sourceRelationships.contains(call.sourceKeyPath)
        else {
          throw refuse(
            "\(label) gives \(name) the value \(expression), which graphvault does not evaluate: it migrates FUNCTION($manager, \"destinationInstancesForEntityMappingNamed:sourceInstances:\", \"MAPPING\", $source.RELATIONSHIP) and its …ForSourceRelationshipNamed: form"
          )
        }
        if call.byMapping, known[call.name] == nil {
          throw refuse(
            "\(label) fills \(name) through entity mapping \(call.name), which no mapping model of this hop has"
          )
        }
        from = call.sourceKeyPath
      } else if property?.isAutogenerated == true, sourceRelationships.contains(relationship.name) {
        from = relationship.name
      }
      rule.relationships[relationship.name] =
        from.map { MappingFile.RelationshipRule(from: $0, drop: false) }
        ?? MappingFile.RelationshipRule(from: nil, drop: true)
    }
    return rule
  }

  /// Core Data keeps a relationship's inverse: a link one end's mapping fills is there at the
  /// other end too. The engine carries each link on the end that stored it, so an end that
  /// maps nothing takes its mapping from the other end, inverted.
  private static func keepLinksMappedAtEitherEnd(
    _ entities: inout [String: MappingFile.EntityRule], source: ObjectModel,
    destination: ObjectModel
  ) {
    var inverted: [(entity: String, relationship: String, from: String)] = []
    for (entity, rule) in entities where !rule.drop {
      guard let sourceEntity = rule.from else { continue }
      for (name, relationshipRule) in rule.relationships {
        guard let from = relationshipRule.from,
          let old = source.relationships(of: sourceEntity).first(where: { $0.name == from }),
          let oldInverse = source.inverse(of: old),
          let new = destination.relationships(of: entity).first(where: { $0.name == name }),
          let newInverse = destination.inverse(of: new)
        else { continue }
        for (other, otherRule) in entities where !otherRule.drop {
          guard let otherSource = otherRule.from,
            source.lineage(of: otherSource).contains(where: { $0.name == old.destination }),
            destination.lineage(of: other).contains(where: { $0.name == new.destination }),
            otherRule.relationships[newInverse.name]?.drop == true
          else { continue }
          inverted.append((other, newInverse.name, oldInverse.name))
        }
      }
    }
    for (entity, relationship, from) in inverted {
      entities[entity]?.relationships[relationship] = MappingFile.RelationshipRule(
        from: from, drop: false)
    }
  }
}
