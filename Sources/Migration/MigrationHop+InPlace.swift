import ObjectModel

extension MigrationHop {
  /// What a hop asks of one attribute's stored values when it is done in SQL on the store
  /// itself: its values kept under another name, a default for the objects that hold none, or
  /// no object left without one.
  package struct InPlaceAttribute: Sendable, Equatable {
    /// The concrete entity whose objects it is about (in the destination version).
    package let entity: String
    /// The attribute (in the destination version).
    package let attribute: String
    /// The value the objects without one are given.
    package let fill: AttributeValue?
    /// Whether an object must hold a value (one without is refused, as the hop refuses it).
    package let isRequired: Bool
    /// The attribute's name in the source version, when the hop renames it (by its renaming
    /// identifier or a mapping): its values stay where they are, under the new name.
    package var renamedFrom: String? = nil
    /// The entity's name in the source version, when the hop renames it.
    package var sourceEntity: String? = nil
  }

  /// Each source entity's name in the destination version, for every one that survives.
  package var keptEntities: [String: String] { entityMap }

  /// The destination's name of the relationship `name` of the source's `entity` (declared by
  /// it or an ancestor), read from the rules of its concrete entities; nil when the hop drops
  /// it.
  package func keptRelationship(_ name: String, of entity: String) -> String? {
    for member in source.hierarchy(from: entity) where !member.isAbstract {
      if let targets = rules[member.name]?.relationships[name] { return targets.first?.name }
    }
    return nil
  }

  /// The attributes to rename, fill or check when the hop keeps every relationship and entity
  /// it keeps under its own name or renamed (each into one), and changes
  /// nothing but attributes added, removed or renamed (every kept attribute of the same type,
  /// not mapped, converted, generated or promoted out of a bucket, nothing extracted), besides
  /// entities and relationships added or removed: then the hop can be done in SQL on the store,
  /// as Core Data's lightweight migration does such a change, and gives what the hop gives
  /// object by object (whether the store's tables allow it, and how what is removed is
  /// counted, is the store's side to judge). Nil for any other hop.
  package var inPlaceAttributes: [InPlaceAttribute]? {
    guard extractions.isEmpty else { return nil }
    var attributes: [InPlaceAttribute] = []
    for (entity, rule) in rules.sorted(by: { $0.key < $1.key }) {
      guard rule.extractions.isEmpty, rule.ownerLinks.isEmpty,
        rule.relationships.allSatisfy({ $0.value.count == 1 })
      else { return nil }
      for attribute in rule.attributes {
        guard attribute.generate == nil, attribute.extendedSource == nil, attribute.map.isEmpty
        else { return nil }
        if attribute.source != nil, attribute.sourceType != attribute.type { return nil }
        let renamedFrom = attribute.source.flatMap { $0 == attribute.name ? nil : $0 }
        if attribute.fill != nil || !attribute.isOptional || renamedFrom != nil {
          attributes.append(
            InPlaceAttribute(
              entity: rule.destination, attribute: attribute.name, fill: attribute.fill,
              isRequired: !attribute.isOptional, renamedFrom: renamedFrom,
              sourceEntity: rule.destination == entity ? nil : entity))
        }
      }
    }
    return attributes
  }

  /// Why object `primaryKey` of `entity` without a value for `attribute` (of `destination`'s
  /// entity `target`) stops the hop, object by object or in place.
  package func missingRequiredValue(
    entity: String, primaryKey: Int64, target: String, attribute: String
  ) -> MigrationError {
    MigrationError(
      .refused,
      "\(versionName(of: source)) → \(versionName(of: destination)): \(entity)/p\(primaryKey) has no value for \(target).\(attribute), which is required in \(versionName(of: destination)) and has no default, so Core Data cannot infer this migration; give one in a mapping file (\"default\")"
    )
  }
}

extension MigrationPlan {
  /// The report of this plan's run, through a ``MigrationRun`` or in SQL on the store: each
  /// hop's changes with `counts[i]`, the hop's counts by destination entity.
  package func report(counts: [[String: MigrationHop.Counts]], notes: [String]) -> MigrationReport {
    MigrationReport(
      from: sourceVersion, to: targetVersion,
      hops: zip(hops, counts).map { hop, counts in
        MigrationReport.Hop(
          from: versionName(of: hop.source), to: versionName(of: hop.destination),
          changes: hop.changes, objects: counts)
      }, notes: notes)
  }
}
