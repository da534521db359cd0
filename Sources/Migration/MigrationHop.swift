import Foundation
import ObjectModel
import ObjectStore
import PropertyList

/// One step of a migration, from a model version to the next: which entity, attribute and
/// relationship of the source each one of the destination comes from, and how values change.
///
/// Built by ``MigrationHop/init(from:to:mapping:)`` from what Core Data would infer (renaming
/// identifiers, added and removed elements, lossless type changes, defaults, moves within an
/// inheritance tree, to-one ↔ to-many) and the mapping file's rules for this hop.
public struct MigrationHop: Sendable {
  /// The version migrated from.
  public let source: ObjectModel
  /// The version migrated to.
  public let destination: ObjectModel
  /// Each change, in words, for the plan.
  public internal(set) var changes: [String] = []

  /// Destination entity by source entity, for every source entity that survives.
  var entityMap: [String: String] = [:]
  /// Rules by concrete source entity.
  var rules: [String: EntityRule] = [:]
  /// Attributes moved out into new objects, by source entity.
  var extractions: [ExtractionRule] = []

  struct EntityRule: Sendable {
    let destination: String
    var attributes: [AttributeRule]
    /// Destination relationships (name, whether to-one) by source relationship name: one
    /// source relationship may feed several (a mapping model's `owner` and `previousOwners`).
    var relationships: [String: [(name: String, isToOne: Bool)]]
    /// The extractions that apply to objects of this source entity (positions in
    /// ``MigrationHop/extractions``).
    var extractions: [Int] = []
    /// Source to-one relationships whose to-many inverse becomes one without an inverse in the
    /// destination: each link is kept as the owner's (the destination relationships' names).
    var ownerLinks: [String: [String]] = [:]
  }

  struct AttributeRule: Sendable {
    let name: String
    let type: AttributeType
    let isOptional: Bool
    let source: String?
    /// The source attribute's type.
    let sourceType: AttributeType?
    let convert: Bool
    let map: [String: AttributeValue]
    /// Given for objects without a value.
    let fill: AttributeValue?
    let generate: Generator?
    /// The source's bucket attribute and key when an extended attribute becomes this one.
    var extendedSource: (bucket: String, key: String)? = nil
  }

  enum Generator: String, Sendable {
    case uuid
    case now

    func value(for type: AttributeType) -> AttributeValue? {
      switch (self, type) {
      case (.uuid, .string): return .string(UUID().uuidString)
      case (.uuid, .uuid): return .uuid(AttributeValue.uuidBytes(UUID().uuidString) ?? [])
      case (.now, .date): return .date(Date().timeIntervalSinceReferenceDate)
      default: return nil
      }
    }
  }

  struct ExtractionRule: Sendable {
    let source: String
    let entity: String
    let each: MappingFile.Extraction.Each
    let attributes: [AttributeRule]
    /// Relationship of the new entity, the destination-side inverse, whether each is to-one,
    /// and whether it links to the source object (else to the related object).
    let links:
      [(name: String, inverse: String?, isToOne: Bool, inverseIsToOne: Bool, toSource: Bool)]
  }

  /// What a hop did, counted per destination entity.
  public struct Counts: Sendable, Codable, Equatable {
    /// Objects carried over.
    public var migrated = 0
    /// Objects made by the mapping or a custom stage.
    public var created = 0
    /// Objects of the source entity dropped (their entity was removed or dropped).
    public var dropped = 0
    /// Values given by a default or generated, by attribute.
    public var filled: [String: Int] = [:]
    /// Values converted to another type, by attribute.
    public var converted: [String: Int] = [:]
    /// Links dropped because their relationship or destination was removed, by relationship.
    public var droppedLinks: [String: Int] = [:]

    /// Creates empty counts.
    public init() {}
  }

  /// The objects and loose links a hop produced from one object.
  struct Output {
    var objects: [MigratingObject] = []
    var links: [LooseLink] = []
  }

  /// State shared by every object of one run through the hop.
  final class State {
    var counts: [String: Counts] = [:]
    /// Objects already made for each distinct value, by extraction.
    var distinct: [Int: [[AttributeValue?]: Int64]] = [:]
    let allocate: (String) -> Int64

    init(allocate: @escaping (String) -> Int64) { self.allocate = allocate }
  }

  // MARK: Applying

  /// Migrates `object` (of the source version) into `output` (of the destination version).
  func apply(_ object: MigratingObject, into output: inout Output, state: State)
    throws(MigrationError)
  {
    guard let rule = rules[object.entity] else {
      state.counts[object.entity, default: Counts()].dropped += 1
      return
    }
    var result = MigratingObject(
      entity: rule.destination, primaryKey: object.primaryKey, version: object.version)
    result.attributes.reserveCapacity(rule.attributes.count)
    var counts = state.counts[rule.destination, default: Counts()]
    defer { state.counts[rule.destination] = counts }
    counts.migrated += 1
    var promoted: [String: Set<String>] = [:]
    for attribute in rule.attributes {
      let value = try self.value(
        of: attribute, from: object, entity: rule.destination, counts: &counts)
      if let value { result.attributes[attribute.name] = value }
      if let extended = attribute.extendedSource {
        promoted[extended.bucket, default: []].insert(extended.key)
      }
      if let source = attribute.source, attribute.type == attribute.sourceType,
        let stored = object.storedAsIs[source]
      {
        result.storedAsIs[attribute.name] = stored
      }
    }
    for owned in object.owners {
      guard let (entity, names) = ownerRelationships(owned.owner.entity, owned.relationship)
      else {
        counts.droppedLinks[owned.relationship, default: 0] += 1
        continue
      }
      output.links += Self.links(
        from: ObjectReference(entity: entity, primaryKey: owned.owner.primaryKey), names,
        to: result.reference, order: owned.order)
    }
    for (name, links) in object.relationships {
      if let names = rule.ownerLinks[name] {
        // The inverse of this to-one keeps the link at the destination, on the owner's side.
        for link in links {
          guard let owner = entityMap[link.target.entity] else {
            counts.droppedLinks[name, default: 0] += 1
            continue
          }
          output.links += Self.links(
            from: ObjectReference(entity: owner, primaryKey: link.target.primaryKey), names,
            to: result.reference, order: link.order)
        }
        continue
      }
      guard let destinations = rule.relationships[name] else {
        counts.droppedLinks[name, default: 0] += links.count
        continue
      }
      var mapped: [MigrationLink] = []
      for var link in links {
        guard let entity = entityMap[link.target.entity] else {
          counts.droppedLinks[name, default: 0] += 1
          continue
        }
        link.target = ObjectReference(entity: entity, primaryKey: link.target.primaryKey)
        mapped.append(link)
      }
      for destination in destinations {
        if destination.isToOne && mapped.count > 1 {
          throw MigrationError(
            .refused,
            "\(object.entity)/p\(object.primaryKey) has \(mapped.count) objects in \(name), which is to-one (\(destination.name)) in \(versionName(of: self.destination)); a mapping must choose one or drop the relationship"
          )
        }
        if !mapped.isEmpty { result.relationships[destination.name] = mapped }
      }
    }
    // Promoted keys leave the bucket (which is NULL when nothing is left).
    for (bucket, keys) in promoted {
      guard case .data(let bytes)? = result.attributes[bucket],
        case .dictionary(var entries)? = try? PropertyListValue(binaryPropertyList: bytes)
      else { continue }
      for key in keys { entries.removeValue(forKey: key) }
      result.attributes[bucket] =
        entries.isEmpty ? nil : .data(PropertyListValue.dictionary(entries).binaryPropertyList())
      result.storedAsIs[bucket] = nil
    }
    let first = output.objects.count
    try extract(rule.extractions, from: object, into: &result, output: &output, state: state)
    output.objects.insert(result, at: first)
  }

  private func value(
    of rule: AttributeRule, from object: MigratingObject, entity: String, counts: inout Counts
  ) throws(MigrationError) -> AttributeValue? {
    var value: AttributeValue?
    if let generator = rule.generate {
      value = generator.value(for: rule.type)
      counts.filled[rule.name, default: 0] += 1
    } else if let source = rule.source, let original = object.attributes[source] {
      value = try converted(original, rule: rule, object: object, counts: &counts)
    } else if let extended = rule.extendedSource,
      case .data(let bytes)? = object.attributes[extended.bucket],
      case .dictionary(let entries)? = try? PropertyListValue(binaryPropertyList: bytes),
      let stored = entries[extended.key]
    {
      guard let promoted = ExtendedAttributes.attributeValue(stored, as: rule.type) else {
        throw MigrationError(
          .refused,
          "\(object.entity)/p\(object.primaryKey): extended.\(extended.key) holds a value that is not a \(rule.type.rawValue) for \(entity).\(rule.name)"
        )
      }
      value = promoted
    }
    if value == nil, let fill = rule.fill {
      value = fill
      counts.filled[rule.name, default: 0] += 1
    }
    if value == nil && !rule.isOptional && object.storedAsIs[rule.source ?? ""] == nil {
      throw missingRequiredValue(
        entity: object.entity, primaryKey: object.primaryKey, target: entity, attribute: rule.name)
    }
    return value
  }

  private func converted(
    _ original: AttributeValue, rule: AttributeRule, object: MigratingObject, counts: inout Counts
  ) throws(MigrationError) -> AttributeValue {
    if !rule.map.isEmpty, let text = ValueConversion.text(original), let mapped = rule.map[text] {
      counts.converted[rule.name, default: 0] += 1
      return mapped
    }
    if rule.sourceType == rule.type { return original }
    guard let value = ValueConversion.convert(original, to: rule.type) else {
      throw MigrationError(
        .refused,
        "\(object.entity)/p\(object.primaryKey): the value of \(rule.source ?? rule.name) (\(ValueConversion.text(original) ?? "binary")) does not convert to \(rule.type.rawValue) for \(rule.name); map it (\"map\") or drop it (\"drop\") in a mapping file"
      )
    }
    counts.converted[rule.name, default: 0] += 1
    return value
  }

  private func extract(
    _ applicable: [Int], from object: MigratingObject, into result: inout MigratingObject,
    output: inout Output, state: State
  ) throws(MigrationError) {
    for number in applicable {
      let extraction = extractions[number]
      var counts = state.counts[extraction.entity, default: Counts()]
      defer { state.counts[extraction.entity] = counts }
      var values = MigratingObject(entity: extraction.entity, primaryKey: 0)
      for attribute in extraction.attributes {
        if let value = try self.value(
          of: attribute, from: object, entity: extraction.entity, counts: &counts)
        {
          values.attributes[attribute.name] = value
        }
      }
      var targets: [ObjectReference?] = []
      var distinctKey: [AttributeValue?]?
      switch extraction.each {
      case .object: targets = [nil]
      case .distinct:
        let key = extraction.attributes.map { values.attributes[$0.name] }
        guard key.contains(where: { $0 != nil }) else { continue }
        distinctKey = key
        if let known = state.distinct[number]?[key] {
          values.primaryKey = known
          connect(&values, isNew: false, extraction, source: &result, related: nil, &output)
          continue
        }
        targets = [nil]
      case .related(let relationship):
        targets = (object.relationships[relationship] ?? []).compactMap { link in
          entityMap[link.target.entity].map {
            ObjectReference(entity: $0, primaryKey: link.target.primaryKey)
          }
        }
      }
      for target in targets {
        var made = values
        made.primaryKey = state.allocate(extraction.entity)
        if let distinctKey { state.distinct[number, default: [:]][distinctKey] = made.primaryKey }
        connect(&made, isNew: true, extraction, source: &result, related: target, &output)
        counts.created += 1
        output.objects.append(made)
      }
    }
  }

  /// Records the links of an extracted object (`made`, new or found again) to its source object
  /// and to the related object: on `made` where its side is to-one, on the source object where
  /// the inverse is to-one, and otherwise on whichever can still carry it (a found object was
  /// written already: its links travel loose).
  private func connect(
    _ made: inout MigratingObject, isNew: Bool, _ extraction: ExtractionRule,
    source: inout MigratingObject, related: ObjectReference?, _ output: inout Output
  ) {
    for link in extraction.links {
      let target: ObjectReference
      if link.toSource {
        target = source.reference
      } else {
        guard let related else { continue }
        target = related
      }
      let mirrored = isNew && link.toSource && link.isToOne && link.inverseIsToOne
      var carried = false
      if link.isToOne && isNew {
        made.relationships[link.name] = [MigrationLink(target: target, isMirrored: mirrored)]
        carried = true
      }
      if link.toSource, let inverse = link.inverse, link.inverseIsToOne || !carried {
        let back = MigrationLink(target: made.reference, isMirrored: mirrored)
        if link.inverseIsToOne {
          source.relationships[inverse] = [back]
        } else {
          source.relationships[inverse, default: []].append(back)
        }
        carried = true
      }
      if !carried {
        if isNew {
          made.relationships[link.name, default: []].append(MigrationLink(target: target))
        } else {
          output.links.append(
            LooseLink(
              from: made.reference, relationship: link.name, link: MigrationLink(target: target)))
        }
      }
    }
  }

  /// Maps a loose link of the source version into this hop's destination version: none when
  /// its relationship or destination is dropped, several when it feeds several relationships.
  func map(_ loose: LooseLink) -> [LooseLink] {
    guard let (entity, names) = ownerRelationships(loose.from.entity, loose.relationship),
      let target = entityMap[loose.link.target.entity]
    else { return [] }
    var link = loose.link
    link.target = ObjectReference(entity: target, primaryKey: link.target.primaryKey)
    return names.map { name in
      LooseLink(
        from: ObjectReference(entity: entity, primaryKey: loose.from.primaryKey),
        relationship: name, link: link)
    }
  }

  /// The links an owner keeps to `member` through each of its relationships `names` (a
  /// to-many without an inverse, or one whose inverse the member's row keeps).
  private static func links(
    from owner: ObjectReference, _ names: [String], to member: ObjectReference, order: Int64?
  ) -> [LooseLink] {
    names.map {
      LooseLink(
        from: owner, relationship: $0, link: MigrationLink(target: member, order: order))
    }
  }

  /// What the source entity `entity` (concrete, or one declaring a relationship for its
  /// sub-entities) becomes, and the destination relationships its relationship `name` feeds:
  /// nil when either is dropped.
  func ownerRelationships(_ entity: String, _ name: String) -> (
    entity: String, relationships: [String]
  )? {
    guard let mapped = entityMap[entity] else { return nil }
    let rule =
      rules[entity]
      ?? source.hierarchy(from: entity).lazy.compactMap { self.rules[$0.name] }.first {
        $0.relationships[name] != nil
      }
    guard let names = rule?.relationships[name], !names.isEmpty else { return nil }
    return (mapped, names.map(\.name))
  }
}

/// A version's name for messages.
func versionName(of model: ObjectModel) -> String {
  model.versionName ?? model.name
}
