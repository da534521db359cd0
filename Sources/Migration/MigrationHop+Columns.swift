import ObjectModel
import ObjectStore

/// Objects of one entity on their way through a migration by columns: a batch in the shape of
/// the version reached (attribute and relationship columns by name), and the values kept as
/// stored by what they mean rather than by the column that held them.
struct ColumnObjects {
  /// The objects; its stored columns are empty (they travel in ``stored``).
  var batch: ObjectBatch
  /// Values kept as stored, by meaning.
  var stored: [(meaning: StoredShape.Meaning, column: ObjectBatch.StoredColumn)]
}

extension MigrationHop {
  /// How objects of one source entity become the destination's column by column: renamed,
  /// attributes kept, added or dropped with their defaults, relationships kept or dropped with
  /// the same cardinality and storage, nothing converted, generated, mapped or extracted.
  struct ColumnRule {
    /// The destination entity.
    let destination: String
    /// The destination's attributes.
    let attributes: [AttributeRule]
    /// The destination relationship by source relationship, for those kept.
    let relationships: [String: String]
    /// The destination entity of each source to-many relationship kept.
    let toManyDestinations: [String: String]
  }

  /// The column rule for objects of the concrete source entity `entity`; nil when they must be
  /// migrated object by object (their entity dropped included).
  func columnRule(for entity: String) -> ColumnRule? {
    guard let rule = rules[entity], rule.extractions.isEmpty, rule.ownerLinks.isEmpty else {
      return nil
    }
    for attribute in rule.attributes {
      guard attribute.generate == nil, attribute.extendedSource == nil, attribute.map.isEmpty,
        attribute.source == nil || attribute.sourceType == attribute.type,
        attribute.fill == nil || ObjectBatch.Values.empty(for: attribute.type) != nil
      else { return nil }
    }
    var relationships: [String: String] = [:]
    var toManyDestinations: [String: String] = [:]
    for relationship in source.relationships(of: entity) where !relationship.isTransient {
      guard let targets = rule.relationships[relationship.name], !targets.isEmpty else {
        continue
      }
      guard targets.count == 1,
        let kept = destination.relationships(of: rule.destination).first(where: {
          $0.name == targets[0].name
        }),
        kept.isToMany == relationship.isToMany
      else { return nil }
      // Where a link is stored (this row, the other's, a join table, an owner column) and
      // whether both ends store it must not change.
      let inverse = source.inverse(of: relationship)
      let keptInverse = destination.inverse(of: kept)
      guard (inverse == nil) == (keptInverse == nil), inverse?.isToMany == keptInverse?.isToMany
      else { return nil }
      if relationship.isToMany {
        guard relationship.isOrdered == kept.isOrdered else { return nil }
        if let mapped = entityMap[relationship.destination] {
          guard mapped == kept.destination else { return nil }
          toManyDestinations[relationship.name] = mapped
        }
      }
      relationships[relationship.name] = kept.name
    }
    return ColumnRule(
      destination: rule.destination, attributes: rule.attributes, relationships: relationships,
      toManyDestinations: toManyDestinations)
  }

  /// Migrates `objects` (of the source version, of a concrete entity `rule` is for) by
  /// columns, counting into `counts` as ``apply(_:into:state:)`` counts object by object; nil
  /// when they must go object by object after all (an owner link the destination keeps
  /// otherwise, a default not of its attribute's kind), `counts` then half counted.
  /// - Throws: ``MigrationError`` naming the first object without a value for a required
  ///   attribute that has no default.
  func apply(_ rule: ColumnRule, to objects: ColumnObjects, counts: inout [String: Counts])
    throws(MigrationError) -> ColumnObjects?
  {
    let batch = objects.batch
    let count = batch.count
    var tally = counts[rule.destination, default: Counts()]
    defer { counts[rule.destination] = tally }
    tally.migrated += count

    var stored: [(meaning: StoredShape.Meaning, column: ObjectBatch.StoredColumn)] = []
    for (meaning, column) in objects.stored {
      switch meaning {
      case .attribute(let name):
        for attribute in rule.attributes where attribute.source == name {
          stored.append((.attribute(attribute.name), column))
        }
      case .order(let name):
        if let kept = rule.relationships[name] { stored.append((.order(kept), column)) }
      case .owner(let entity, let name), .ownerOrder(let entity, let name):
        guard ownerColumnsCarry(entity, name) else { return nil }
        guard let (mapped, names) = ownerRelationships(entity, name) else {
          if case .owner = meaning {
            tally.droppedLinks[name, default: 0] += column.records.count
          }
          continue
        }
        let moved: StoredShape.Meaning =
          if case .owner = meaning { .owner(mapped, names[0]) } else {
            .ownerOrder(mapped, names[0])
          }
        stored.append((moved, column))
      }
    }
    var attributes: [String: ObjectBatch.Attribute] = [:]
    for attribute in batch.attributes { attributes[attribute.name] = attribute }
    var storedAttributes: [String: ObjectBatch.StoredColumn] = [:]
    for (meaning, column) in objects.stored {
      if case .attribute(let name) = meaning { storedAttributes[name] = column }
    }
    var result = ObjectBatch(
      entity: rule.destination, primaryKeys: batch.primaryKeys, versions: batch.versions)
    var firstMissing: (record: Int, attribute: String)?
    for attribute in rule.attributes {
      var column = attribute.source.flatMap { attributes[$0]?.renamed(attribute.name) }
      if let fill = attribute.fill {
        let present = column?.records.count ?? 0
        guard
          let filled = (column ?? Self.emptyColumn(attribute))?.filled(with: fill, count: count)
        else { return nil }
        if present < count { tally.filled[attribute.name, default: 0] += count - present }
        column = filled
      } else if !attribute.isOptional {
        let stored = attribute.source.flatMap { storedAttributes[$0]?.records } ?? []
        if let record = Self.firstGap(count, column?.records ?? [], stored),
          record < firstMissing?.record ?? count
        {
          firstMissing = (record, attribute.name)
        }
      }
      if let column { result.attributes.append(column) }
    }
    if let (record, attribute) = firstMissing {
      throw missingRequiredValue(
        entity: batch.entity, primaryKey: batch.primaryKeys[record], target: rule.destination,
        attribute: attribute)
    }

    for column in batch.toOne {
      guard let name = rule.relationships[column.name] else {
        tally.droppedLinks[column.name, default: 0] += column.records.count
        continue
      }
      var kept: [Int] = []
      var entities: [String] = []
      for (position, entity) in column.entities.enumerated() {
        guard let mapped = entityMap[entity] else {
          tally.droppedLinks[column.name, default: 0] += 1
          continue
        }
        kept.append(position)
        entities.append(mapped)
      }
      guard !kept.isEmpty else { continue }
      result.toOne.append(
        ObjectBatch.ToOne(
          name: name, records: kept.map { column.records[$0] }, keys: kept.map { column.keys[$0] },
          entities: entities))
    }
    for column in batch.toMany {
      guard let name = rule.relationships[column.name],
        rule.toManyDestinations[column.name] != nil
      else {
        tally.droppedLinks[column.name, default: 0] += column.rows.reduce(0) { $0 + $1.count }
        continue
      }
      result.toMany.append(
        ObjectBatch.ToMany(name: name, records: column.records, rows: column.rows))
    }

    return ColumnObjects(batch: result, stored: stored)
  }

  /// Whether the owner links of objects of `entity` (source version) through `entity`'s (the
  /// declaring entity) relationship `name` can be carried by column: the relationship feeds one
  /// destination relationship, still a to-many without an inverse, or is dropped.
  func ownerColumnsCarry(_ entity: String, _ name: String) -> Bool {
    guard let (mapped, names) = ownerRelationships(entity, name) else { return true }
    guard names.count == 1,
      let kept = destination.relationships(of: mapped).first(where: { $0.name == names[0] })
    else { return false }
    return kept.isToMany && kept.inverse == nil
  }

  /// An attribute's column with no values yet.
  private static func emptyColumn(_ attribute: AttributeRule) -> ObjectBatch.Attribute? {
    ObjectBatch.Values.empty(for: attribute.type).map {
      ObjectBatch.Attribute(name: attribute.name, type: attribute.type, records: [], values: $0)
    }
  }

  /// The first of `count` positions in neither `a` nor `b` (both ascending).
  private static func firstGap(_ count: Int, _ a: [Int], _ b: [Int]) -> Int? {
    var i = 0
    var j = 0
    for position in 0..<count {
      while i < a.count && a[i] < position { i += 1 }
      while j < b.count && b[j] < position { j += 1 }
      let inA = i < a.count && a[i] == position
      let inB = j < b.count && b[j] == position
      if !inA && !inB { return position }
    }
    return nil
  }
}
