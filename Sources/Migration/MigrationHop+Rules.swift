import ObjectModel
import ObjectStore

extension MigrationHop {
  /// The hop from `source` to `destination`: inferred where Core Data would infer, with
  /// `mapping`'s rules for the rest.
  /// - Throws: ``MigrationError`` (``MigrationError/Kind/refused``) naming the entity,
  ///   attribute or relationship that cannot be migrated, or the mapping rule that names an
  ///   unknown one.
  public init(from source: ObjectModel, to destination: ObjectModel, mapping: MappingFile.Hop?)
    throws(MigrationError)
  {
    self.source = source
    self.destination = destination
    let mapping =
      mapping
      ?? MappingFile.Hop(
        from: versionName(of: source), to: versionName(of: destination), entities: [:],
        extractions: [])
    let hop = "\(versionName(of: source)) → \(versionName(of: destination))"
    func refuse(_ detail: String) -> MigrationError {
      MigrationError(.refused, "\(hop): \(detail)")
    }

    // Entities: the mapping's `from`, else the renaming identifier, else the same name.
    for name in mapping.entities.keys.sorted() where destination.entity(named: name) == nil {
      throw refuse(
        "the mapping names entity \(name), which \(versionName(of: destination)) does not have")
    }
    var sourceOf: [String: String] = [:]
    for entity in destination.entities {
      let rule = mapping.entities[entity.name]
      if let from = rule?.from {
        guard source.entity(named: from) != nil else {
          throw refuse(
            "the mapping maps \(entity.name) from \(from), which \(versionName(of: source)) does not have"
          )
        }
        sourceOf[entity.name] = from
      } else if let match = Self.match(
        entity.name, entity.renamingIdentifier,
        in: source.entities.map { ($0.name, $0.renamingIdentifier) })
      {
        sourceOf[entity.name] = match
      }
      if rule?.drop == true, let from = sourceOf[entity.name] {
        sourceOf[entity.name] = nil
        changes.append("\(entity.name): objects of \(from) are dropped (mapping)")
      }
    }
    var seen: [String: String] = [:]
    for (name, from) in sourceOf.sorted(by: { $0.key < $1.key }) {
      if let other = seen[from] {
        throw refuse("both \(other) and \(name) come from \(from)")
      }
      seen[from] = name
      entityMap[from] = name
      if from != name { changes.append("entity \(from) renamed \(name)") }
    }
    for entity in source.entities where entityMap[entity.name] == nil {
      changes.append("entity \(entity.name) removed: its objects are dropped")
    }
    for entity in destination.entities where sourceOf[entity.name] == nil {
      changes.append("entity \(entity.name) added")
    }
    try checkHierarchies(refuse)

    for entity in source.entities where !entity.isAbstract {
      guard let target = entityMap[entity.name] else { continue }
      rules[entity.name] = try rule(
        from: entity.name, to: target, mapping: mapping.entities[target] ?? Self.noRule,
        refuse: refuse)
    }
    try describeProperties(mapping: mapping)
    for extraction in mapping.extractions {
      extractions.append(try extractionRule(extraction, refuse: refuse))
    }
    for entity in rules.keys {
      let lineage = Set(source.lineage(of: entity).map(\.name))
      rules[entity]?.extractions = extractions.indices.filter {
        lineage.contains(extractions[$0].source)
      }
    }
  }

  static let noRule = MappingFile.EntityRule(
    from: nil, drop: false, attributes: [:], relationships: [:])

  /// The source element a destination element comes from: the one named by its renaming
  /// identifier, else the one of the same name, else one with the same renaming identifier.
  static func match(_ name: String, _ identifier: String?, in candidates: [(String, String?)])
    -> String?
  {
    if let identifier, candidates.contains(where: { $0.0 == identifier }) { return identifier }
    if candidates.contains(where: { $0.0 == name }) { return name }
    if let identifier, let same = candidates.first(where: { $0.1 == identifier }) { return same.0 }
    return nil
  }

  /// The source property a destination property comes from: the one the mapping names (which
  /// must exist), else the one matched by name and renaming identifier (when `inferring`).
  private static func source(
    of label: String, named: String?, inferring: (String, String?)?,
    among candidates: [(String, String?)], kind: String, refuse: (String) -> MigrationError
  ) throws(MigrationError) -> String? {
    if let named {
      guard candidates.contains(where: { $0.0 == named }) else {
        throw refuse("the mapping takes \(label) from \(named), which is not \(kind)")
      }
      return named
    }
    return inferring.flatMap { match($0.0, $0.1, in: candidates) }
  }

  /// Objects of two source hierarchies (two tables, two primary-key sequences) cannot end up in
  /// one: Core Data refuses to merge hierarchies, and their keys would collide.
  private func checkHierarchies(_ refuse: (String) -> MigrationError) throws(MigrationError) {
    var feeders: [String: Set<String>] = [:]
    for (from, to) in entityMap {
      guard let sourceRoot = source.root(of: from)?.name,
        let destinationRoot = destination.root(of: to)?.name
      else { continue }
      feeders[destinationRoot, default: []].insert(sourceRoot)
    }
    for (root, roots) in feeders.sorted(by: { $0.key < $1.key }) where roots.count > 1 {
      throw refuse(
        "\(root) would merge the hierarchies of \(roots.sorted().joined(separator: " and ")), which Core Data does not allow"
      )
    }
  }

  private func rule(
    from sourceEntity: String, to target: String, mapping: MappingFile.EntityRule,
    refuse: (String) -> MigrationError
  ) throws(MigrationError) -> EntityRule {
    let sourceAttributes = source.attributes(of: sourceEntity).filter(\.isStored)
    let candidates = sourceAttributes.map { ($0.name, $0.renamingIdentifier) }
    let targetAttributes = destination.attributes(of: target).filter(\.isStored)
    let sourceRelationships = source.relationships(of: sourceEntity).filter { !$0.isTransient }
    let targetRelationships = destination.relationships(of: target).filter { !$0.isTransient }
    for name in mapping.attributes.keys.sorted()
    where !targetAttributes.contains(where: { $0.name == name }) {
      if destination.attributes(of: target).contains(where: { $0.name == name }) { continue }
      throw refuse("the mapping names \(target).\(name), which is not an attribute of \(target)")
    }
    for name in mapping.relationships.keys.sorted()
    where !targetRelationships.contains(where: { $0.name == name }) {
      if destination.relationships(of: target).contains(where: { $0.name == name }) { continue }
      throw refuse("the mapping names \(target).\(name), which is not a relationship of \(target)")
    }
    var attributes: [AttributeRule] = []
    for attribute in targetAttributes {
      let explicit = mapping.attributes[attribute.name]
      let from = try Self.source(
        of: "\(target).\(attribute.name)", named: explicit?.from,
        inferring: explicit?.drop != true && explicit?.generate == nil
          ? (attribute.name, attribute.renamingIdentifier) : nil,
        among: candidates, kind: "an attribute of \(sourceEntity)", refuse: refuse)
      attributes.append(
        try attributeRule(
          attribute, entity: target, sourceEntity: sourceEntity,
          from: from.flatMap { name in
            sourceAttributes.first { $0.name == name }
          }, explicit: explicit, refuse: refuse))
    }
    var relationships: [String: [(name: String, isToOne: Bool)]] = [:]
    let relationshipCandidates = sourceRelationships.map { ($0.name, $0.renamingIdentifier) }
    for relationship in targetRelationships {
      let explicit = mapping.relationships[relationship.name]
      if explicit?.drop == true { continue }
      let from = try Self.source(
        of: "\(target).\(relationship.name)", named: explicit?.from,
        inferring: (relationship.name, relationship.renamingIdentifier),
        among: relationshipCandidates, kind: "a relationship of \(sourceEntity)", refuse: refuse)
      guard let from, let old = sourceRelationships.first(where: { $0.name == from }) else {
        continue
      }
      // The destination must still be the same objects (or a part of their hierarchy).
      let mapped = entityMap[old.destination]
      let related =
        mapped.map { mapped in
          destination.lineage(of: mapped).contains { $0.name == relationship.destination }
            || destination.lineage(of: relationship.destination).contains { $0.name == mapped }
        } ?? false
      guard related else {
        throw refuse(
          "\(target).\(relationship.name) points at \(relationship.destination), but \(sourceEntity).\(from) pointed at \(old.destination); map it in a mapping file or drop it"
        )
      }
      relationships[from, default: []].append((relationship.name, !relationship.isToMany))
    }
    var ownerLinks: [String: [String]] = [:]
    for old in sourceRelationships where !old.isToMany && relationships[old.name] == nil {
      // A to-one whose to-many inverse loses its inverse: the owner's side keeps the links.
      guard mapping.relationships[old.name]?.drop != true,
        let inverse = source.inverse(of: old), inverse.isToMany,
        let owner = entityMap[old.destination]
      else { continue }
      let kept = destination.relationships(of: owner).filter { candidate in
        candidate.isToMany && candidate.inverse == nil && !candidate.isTransient
          && Self.match(
            candidate.name, candidate.renamingIdentifier,
            in: [(inverse.name, inverse.renamingIdentifier)]) != nil
      }
      if !kept.isEmpty { ownerLinks[old.name] = kept.map(\.name) }
    }
    return EntityRule(
      destination: target, attributes: attributes, relationships: relationships,
      ownerLinks: ownerLinks)
  }

  func attributeRule(
    _ attribute: AttributeDescription, entity: String, sourceEntity: String,
    from old: AttributeDescription?, explicit: MappingFile.AttributeRule?,
    refuse: (String) -> MigrationError
  ) throws(MigrationError) -> AttributeRule {
    let name = "\(entity).\(attribute.name)"
    var map: [String: AttributeValue] = [:]
    for (key, text) in explicit?.map ?? [:] {
      guard let value = AttributeValue(defaultValueString: text, type: attribute.type) else {
        throw refuse(
          "the mapping maps \(name) to \"\(text)\", which is not a \(attribute.type.rawValue)")
      }
      map[key] = value
    }
    if let old, !ValueConversion.isLossless(from: old.type, to: attribute.type),
      explicit?.convert != true && map.isEmpty
    {
      throw refuse(
        "\(name) changes from \(old.type.rawValue) to \(attribute.type.rawValue), which is not a lossless change; convert it (\"convert\": true), map its values (\"map\") or drop them (\"drop\": true) in a mapping file"
      )
    }
    var generator: Generator?
    if let generate = explicit?.generate {
      guard let known = Generator(rawValue: generate), known.value(for: attribute.type) != nil
      else {
        throw refuse(
          "the mapping generates \(name) with \"\(generate)\", which does not make a \(attribute.type.rawValue) (uuid: String or UUID; now: Date)"
        )
      }
      generator = known
    }
    var fill: AttributeValue?
    if let text = explicit?.defaultValue {
      guard let value = AttributeValue(defaultValueString: text, type: attribute.type) else {
        throw refuse(
          "the mapping's default for \(name), \"\(text)\", is not a \(attribute.type.rawValue)")
      }
      fill = value
    } else if old == nil || !attribute.isOptional {
      // Core Data gives new attributes, and newly required ones, their default.
      fill = attribute.defaultValue
    }
    var extendedSource: (bucket: String, key: String)?
    if let key = explicit?.fromExtended {
      guard let bucket = ExtendedAttributes.bucket(of: sourceEntity, in: source) else {
        throw refuse(
          "the mapping promotes extended.\(key) to \(name), but the source entity keeps no extended attributes"
        )
      }
      extendedSource = (bucket, key)
    }
    return AttributeRule(
      name: attribute.name, type: attribute.type, isOptional: attribute.isOptional,
      source: old?.name, sourceType: old?.type, convert: explicit?.convert == true, map: map,
      fill: fill,
      generate: generator, extendedSource: extendedSource)
  }

  /// Describes attribute and relationship changes once per entity that owns them.
  private mutating func describeProperties(mapping: MappingFile.Hop) throws(MigrationError) {
    for entity in destination.entities {
      // A concrete entity of its hierarchy that has a source shows what it became.
      let ruled = rules
      guard
        let (from, rule) = destination.hierarchy(from: entity.name).lazy.compactMap({ concrete in
          ruled.first { $0.value.destination == concrete.name }.map { ($0.key, $0.value) }
        }).first
      else { continue }
      describeAttributes(of: entity, from: from, rule: rule)
      for relationship in entity.relationships where !relationship.isTransient {
        let label = "\(entity.name).\(relationship.name)"
        guard
          let old = rule.relationships.first(where: {
            $0.value.contains { $0.name == relationship.name }
          })
        else {
          changes.append("\(label): added")
          continue
        }
        if old.key != relationship.name { changes.append("\(label): renamed from \(old.key)") }
        if let before = source.relationships(of: from).first(where: { $0.name == old.key }),
          before.isToMany != relationship.isToMany
        {
          changes.append(
            "\(label): \(before.isToMany ? "to-many" : "to-one") → \(relationship.isToMany ? "to-many" : "to-one")"
          )
        }
      }
    }
    for entity in source.entities {
      let users = rules.filter { rule in
        source.lineage(of: rule.key).contains { $0.name == entity.name }
      }
      guard !users.isEmpty else { continue }
      for attribute in entity.attributes where attribute.isStored {
        let keeping = users.filter { $0.value.attributes.contains { $0.source == attribute.name } }
        let moved = mapping.extractions.contains { extraction in
          extraction.attributes.values.contains(attribute.name)
            && source.lineage(of: extraction.from).contains { $0.name == entity.name }
        }
        let label = "\(entity.name).\(attribute.name)"
        if moved {
          changes.append("\(label): moved out into new objects")
        } else if keeping.isEmpty {
          changes.append("\(label): removed, its values are dropped")
        } else if keeping.count < users.count {
          let kept = keeping.map(\.value.destination).sorted().joined(separator: ", ")
          changes.append("\(label): kept in \(kept) only, other objects' values are dropped")
        }
      }
      for relationship in entity.relationships where !relationship.isTransient {
        if !users.contains(where: { $0.value.relationships[relationship.name] != nil }) {
          changes.append("\(entity.name).\(relationship.name): removed")
        }
      }
    }
    for extraction in mapping.extractions {
      let each: String
      switch extraction.each {
      case .object: each = "one per \(extraction.from)"
      case .distinct: each = "one per distinct value"
      case .related(let relationship): each = "one per object in \(extraction.from).\(relationship)"
      }
      changes.append(
        "new \(extraction.entity) objects from \(extraction.from) (\(each)): "
          + extraction.attributes.sorted(by: { $0.key < $1.key }).map { "\($0.key) ← \($0.value)" }
          .joined(separator: ", "))
    }
  }

  private mutating func describeAttributes(
    of entity: EntityDescription, from: String, rule: EntityRule
  ) {
    let sourceAttributes = source.attributes(of: from)
    for attribute in entity.attributes where attribute.isStored {
      guard let attributeRule = rule.attributes.first(where: { $0.name == attribute.name })
      else { continue }
      let label = "\(entity.name).\(attribute.name)"
      guard
        let old = attributeRule.source.flatMap({ name in
          sourceAttributes.first { $0.name == name }
        })
      else {
        if let generate = attributeRule.generate {
          changes.append("\(label): generated (\(generate.rawValue))")
        } else {
          changes.append(
            "\(label): added" + (attributeRule.fill.map { ", set to \(describe($0))" } ?? ""))
        }
        continue
      }
      if old.name != attribute.name { changes.append("\(label): renamed from \(old.name)") }
      if let owner = source.lineage(of: from).first(where: { $0.attribute(named: old.name) != nil }
      ),
        entityMap[owner.name] != entity.name
      {
        changes.append("\(label): moved from \(owner.name)")
      }
      if old.type != attribute.type {
        changes.append(
          "\(label): \(old.type.rawValue) → \(attribute.type.rawValue)"
            + (attributeRule.convert || !attributeRule.map.isEmpty ? " (mapping)" : ""))
      }
      if old.isOptional && !attribute.isOptional {
        changes.append(
          "\(label): now required"
            + (attributeRule.fill.map { ", objects without a value get \(describe($0))" }
              ?? ", objects without a value fail"))
      }
    }
  }

  private func describe(_ value: AttributeValue) -> String {
    if case .bool(let flag) = value { return flag ? "YES" : "NO" }
    return ValueConversion.text(value).map { "\"\($0)\"" } ?? "a default"
  }

  private func extractionRule(
    _ extraction: MappingFile.Extraction, refuse: (String) -> MigrationError
  )
    throws(MigrationError) -> ExtractionRule
  {
    guard let newEntity = destination.entity(named: extraction.entity), !newEntity.isAbstract else {
      throw refuse(
        "the mapping extracts into \(extraction.entity), which is not a concrete entity of \(versionName(of: destination))"
      )
    }
    guard source.entity(named: extraction.from) != nil, let target = entityMap[extraction.from]
    else {
      throw refuse(
        "the mapping extracts from \(extraction.from), which \(versionName(of: source)) does not have or which is dropped"
      )
    }
    let sourceAttributes = source.attributes(of: extraction.from)
    var attributes: [AttributeRule] = []
    for name in Set(extraction.attributes.keys).union(extraction.generate.keys).sorted() {
      guard
        let attribute = destination.attributes(of: extraction.entity).first(where: {
          $0.name == name
        })
      else {
        throw refuse(
          "the mapping sets \(extraction.entity).\(name), which is not an attribute of \(extraction.entity)"
        )
      }
      var old: AttributeDescription?
      if let from = extraction.attributes[name] {
        guard let found = sourceAttributes.first(where: { $0.name == from }) else {
          throw refuse(
            "the mapping moves \(extraction.from).\(from), which is not an attribute of \(extraction.from)"
          )
        }
        old = found
      }
      let explicit = MappingFile.AttributeRule(generate: extraction.generate[name])
      attributes.append(
        try attributeRule(
          attribute, entity: extraction.entity, sourceEntity: extraction.from, from: old,
          explicit: explicit, refuse: refuse))
    }
    // The new entity's other attributes get their defaults.
    for attribute in destination.attributes(of: extraction.entity)
    where attribute.isStored && !attributes.contains(where: { $0.name == attribute.name }) {
      attributes.append(
        try attributeRule(
          attribute, entity: extraction.entity, sourceEntity: extraction.from, from: nil,
          explicit: nil, refuse: refuse))
    }
    var related: String?
    if case .related(let relationship) = extraction.each {
      guard
        let found = source.relationships(of: extraction.from).first(where: {
          $0.name == relationship
        }),
        found.isToMany
      else {
        throw refuse(
          "the mapping makes one object per \(extraction.from).\(relationship), which is not a to-many relationship of \(extraction.from)"
        )
      }
      related = entityMap[found.destination]
    }
    var links:
      [(name: String, inverse: String?, isToOne: Bool, inverseIsToOne: Bool, toSource: Bool)] = []
    for (name, role) in extraction.link.sorted(by: { $0.key < $1.key }) {
      guard
        let relationship = destination.relationships(of: extraction.entity).first(where: {
          $0.name == name
        })
      else {
        throw refuse(
          "the mapping links \(extraction.entity).\(name), which is not a relationship of \(extraction.entity)"
        )
      }
      guard role == "source" || (role == "each" && related != nil) else {
        throw refuse(
          "the mapping links \(extraction.entity).\(name) to \"\(role)\"; use \"source\", or \"each\" with \"each\" naming a to-many relationship"
        )
      }
      let end = role == "source" ? target : related!
      guard destination.lineage(of: end).contains(where: { $0.name == relationship.destination })
      else {
        throw refuse(
          "\(extraction.entity).\(name) points at \(relationship.destination), not at \(end)")
      }
      let inverse = destination.inverse(of: relationship)
      links.append(
        (
          name, inverse?.name, !relationship.isToMany, inverse.map { !$0.isToMany } ?? false,
          role == "source"
        ))
    }
    return ExtractionRule(
      source: extraction.from, entity: extraction.entity, each: extraction.each,
      attributes: attributes, links: links)
  }
}
