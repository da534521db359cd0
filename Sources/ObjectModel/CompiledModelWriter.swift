import PropertyList
import Zlib

/// Writes compiled models: an `NSManagedObjectModel` keyed archive in the classes and keys
/// Apple's `Z_MODELCACHE` and `.mom` files use, so that a store graphvault creates describes
/// itself as a store Core Data created does. ``CompiledModelLoader`` reads it back to an equal
/// model.
///
/// The layout follows the fixtures' caches: entities in an `NSKnownKeysDictionary1` sorted by
/// name; each entity's `NSProperties` an `NSMutableDictionary` that repeats inherited
/// properties (copies whose `NSEntity` is the sub-entity); names and renaming identifiers as
/// Apple writes them; `_P` the property flags observed (`0xF1`, plus 2 when optional, 4 when
/// read-only, 8 when transient). What Apple's format has no key for is kept under keys of
/// graphvault's own, which Core Data ignores: `GVAllowsExternalBinaryDataStorage`.
public enum CompiledModelWriter {
  /// The model as keyed-archive bytes (the contents of a `.mom` file).
  public static func archive(_ model: ObjectModel) -> [UInt8] {
    archive(model, carryingVersionName: false)
  }

  /// The key under which a model cache keeps the model's version name (graphvault's own:
  /// Core Data's unarchiver passes over keys it does not know, and a compiled model has no
  /// version name of its own), so that a model built in code keeps its name in the store.
  public static let versionNameKey = "GVVersionName"

  private static func archive(_ model: ObjectModel, carryingVersionName: Bool) -> [UInt8] {
    var writer = Writer(model: model)
    let root = writer.encodeModel()
    if carryingVersionName, case .object(let object) = root, let name = model.versionName {
      writer.builder.set(.value(.string(name)), forKey: versionNameKey, of: object)
    }
    return writer.builder.archive(root: root)
  }

  /// The model as `Z_MODELCACHE.Z_CONTENT`: the keyed archive, with the model's version name
  /// (``versionNameKey``), raw DEFLATE compressed.
  /// - Throws: ``ModelError`` when compression fails.
  public static func modelCache(_ model: ObjectModel) throws(ModelError) -> [UInt8] {
    do {
      return try RawDeflate.compress(archive(model, carryingVersionName: true))
    } catch {
      throw ModelError(.unreadable, "cannot compress the model cache", underlying: error)
    }
  }

  private struct Writer {
    typealias Value = KeyedArchiveBuilder.Value
    let model: ObjectModel
    var builder = KeyedArchiveBuilder()
    var entityIDs: [String: KeyedArchiveBuilder.ObjectID] = [:]
    /// Relationship objects by entity and name, for inverses.
    var relationshipIDs: [String: [String: KeyedArchiveBuilder.ObjectID]] = [:]

    init(model: ObjectModel) { self.model = model }

    static let objectClasses = ["NSObject"]
    static let propertyFlags: Int64 = 0xF1

    mutating func encodeModel() -> Value {
      let root = builder.makeObject(classes: ["NSManagedObjectModel", "NSObject"])
      let entities = model.entities.sorted { $0.name < $1.name }
      for entity in entities {
        entityIDs[entity.name] = builder.makeObject(
          classes: ["NSEntityDescription", "NSObject"])
        for relationship in model.relationships(of: entity.name) {
          relationshipIDs[entity.name, default: [:]][relationship.name] = builder.makeObject(
            classes: ["NSRelationshipDescription", "NSPropertyDescription", "NSObject"])
        }
      }
      let known = builder.makeObject(
        classes: [
          "NSKnownKeysDictionary1", "NSKnownKeysDictionary", "NSMutableDictionary",
          "NSDictionary", "NSObject",
        ])
      let mapping = builder.makeObject(
        classes: ["NSKnownKeysMappingStrategy1", "NSKnownKeysMappingStrategy", "NSObject"])
      builder.set(.inline(.integer(Int64(entities.count))), forKey: "length", of: mapping)
      let names = builder.array(entities.map { .string($0.name) })
      builder.set(.value(names), forKey: "keys", of: mapping)
      builder.set(.inline(.integer(1)), forKey: "version", of: mapping)
      builder.set(.value(.object(mapping)), forKey: "searchMapping", of: known)
      builder.set(
        .value(.string("__empty_slot_token_4c24_98dc_ac1e_b773__")), forKey: "emptyToken",
        of: known)
      builder.set(
        .value(builder.array(entities.map { .object(entityIDs[$0.name]!) })), forKey: "values",
        of: known)
      builder.set(.inline(.integer(1)), forKey: "version", of: known)
      builder.set(.value(.object(known)), forKey: "NSEntities", of: root)
      builder.set(.value(.null), forKey: "NSFetchRequestTemplates", of: root)
      let identifiers = builder.set(model.versionIdentifiers.map { .string($0) })
      builder.set(.value(identifiers), forKey: "NSVersionIdentifiers", of: root)
      for entity in entities { encode(entity, model: root) }
      return .object(root)
    }

    mutating func encode(_ entity: EntityDescription, model root: KeyedArchiveBuilder.ObjectID) {
      let id = entityIDs[entity.name]!
      builder.set(.value(.string(entity.name)), forKey: "NSEntityName", of: id)
      builder.set(
        .value(entity.className.map(Value.string) ?? .null), forKey: "NSClassNameForEntity", of: id)
      builder.set(.value(userInfo(entity.userInfo)), forKey: "NSUserInfo", of: id)
      let children = model.entities.filter { $0.parent == entity.name }.sorted {
        $0.name < $1.name
      }
      builder.set(
        .value(
          children.isEmpty
            ? .null
            : builder.dictionary(
              children.map { (.string($0.name), .object(entityIDs[$0.name]!)) },
              classes: Self.mutableDictionary)), forKey: "NSSubentities", of: id)
      builder.set(
        .value(entity.versionHashModifier.map(Value.string) ?? .null),
        forKey: "NSVersionHashModifier", of: id)
      var properties: [(key: Value, value: Value)] = []
      for attribute in model.declaredAttributes(of: entity.name).sorted(by: { $0.name < $1.name }) {
        properties.append((.string(attribute.name), encode(attribute, entity: id)))
      }
      for relationship in model.relationships(of: entity.name).sorted(by: { $0.name < $1.name }) {
        properties.append(
          (.string(relationship.name), encode(relationship, entity: entity.name, id: id)))
      }
      properties.sort { ($0.key.stringText ?? "") < ($1.key.stringText ?? "") }
      builder.set(
        .value(builder.dictionary(properties, classes: Self.mutableDictionary)),
        forKey: "NSProperties", of: id)
      builder.set(
        .value(builder.mutableString(entity.renamingIdentifier ?? entity.name)),
        forKey: "NSRenamingIdentifier", of: id)
      builder.set(.value(.object(root)), forKey: "NSManagedObjectModel", of: id)
      builder.set(
        .value(entity.parent.flatMap { entityIDs[$0] }.map(Value.object) ?? .null),
        forKey: "NSSuperentity", of: id)
      if entity.isAbstract { builder.set(.inline(.bool(true)), forKey: "NSIsAbstract", of: id) }
      if !entity.uniquenessConstraints.isEmpty {
        let tuples = entity.uniquenessConstraints.map { tuple in
          builder.array(tuple.map { .string($0) })
        }
        builder.set(
          .value(builder.array(tuples, classes: ["NSMutableArray", "NSArray", "NSObject"])),
          forKey: "NSUniqueTuples", of: id)
      }
      if !entity.fetchIndexes.isEmpty {
        var indexes: [Value] = []
        for index in entity.fetchIndexes {
          let object = builder.makeObject(classes: ["NSFetchIndexDescription", "NSObject"])
          builder.set(.value(.string(index.name)), forKey: "NSIndexName", of: object)
          var elements: [Value] = []
          for element in index.elements {
            let item = builder.makeObject(
              classes: ["NSFetchIndexElementDescription", "NSObject"])
            builder.set(.value(.string(element.property)), forKey: "NSPropertyName", of: item)
            builder.set(
              .inline(.integer(element.kind == "R-Tree" ? 1 : 0)),
              forKey: "NSFetchIndexElementType", of: item)
            builder.set(.inline(.bool(element.ascending)), forKey: "NSAscending", of: item)
            elements.append(.object(item))
          }
          builder.set(.value(builder.array(elements)), forKey: "NSIndexElements", of: object)
          indexes.append(.object(object))
        }
        builder.set(
          .value(builder.array(indexes)), forKey: "NSFetchIndexDescriptions", of: id)
      }
    }

    static let mutableDictionary = ["NSMutableDictionary", "NSDictionary", "NSObject"]

    mutating func userInfo(_ info: [String: String]) -> Value {
      builder.dictionary(info.keys.sorted().map { (.string($0), .string(info[$0]!)) })
    }

    mutating func common(
      _ id: KeyedArchiveBuilder.ObjectID, name: String, entity: KeyedArchiveBuilder.ObjectID,
      optional: Bool, transient: Bool, readOnly: Bool, renaming: String?,
      versionHashModifier: String?, userInfo info: [String: String]
    ) {
      var flags = Self.propertyFlags
      if optional { flags |= 2 }
      if readOnly { flags |= 4 }
      if transient { flags |= 8 }
      builder.set(.inline(.integer(flags)), forKey: "_P", of: id)
      builder.set(.value(.object(entity)), forKey: "NSEntity", of: id)
      builder.set(.value(.string(name)), forKey: "NSPropertyName", of: id)
      builder.set(.value(.string(renaming ?? name)), forKey: "NSRenamingIdentifier", of: id)
      if optional { builder.set(.inline(.bool(true)), forKey: "NSIsOptional", of: id) }
      if transient { builder.set(.inline(.bool(true)), forKey: "NSIsTransient", of: id) }
      if readOnly { builder.set(.inline(.bool(true)), forKey: "NSIsReadOnly", of: id) }
      if let versionHashModifier {
        builder.set(.value(.string(versionHashModifier)), forKey: "NSVersionHashModifier", of: id)
      }
      if !info.isEmpty { builder.set(.value(userInfo(info)), forKey: "NSUserInfo", of: id) }
    }

    mutating func encode(_ attribute: AttributeDescription, entity: KeyedArchiveBuilder.ObjectID)
      -> Value
    {
      let id = builder.makeObject(
        classes: attribute.isDerived
          ? [
            "NSDerivedAttributeDescription", "NSAttributeDescription", "NSPropertyDescription",
            "NSObject",
          ]
          : attribute.isComposite
            ? [
              "NSCompositeAttributeDescription", "NSAttributeDescription",
              "NSPropertyDescription", "NSObject",
            ]
            : ["NSAttributeDescription", "NSPropertyDescription", "NSObject"])
      common(
        id, name: attribute.name, entity: entity, optional: attribute.isOptional,
        transient: attribute.isTransient, readOnly: attribute.isDerived,
        renaming: attribute.renamingIdentifier,
        versionHashModifier: attribute.versionHashModifier, userInfo: attribute.userInfo)
      builder.set(
        .inline(.integer(Int64(attribute.type.coreDataCode))), forKey: "NSAttributeType", of: id)
      let valueClass =
        attribute.type == .transformable ? attribute.valueClassName : attribute.type.valueClassName
      builder.set(
        .value(valueClass.map(Value.string) ?? .null), forKey: "NSAttributeValueClassName", of: id
      )
      builder.set(
        .value(attribute.valueTransformerName.map(Value.string) ?? .null),
        forKey: "NSValueTransformerName", of: id)
      builder.set(
        .value(attribute.defaultValue.map { defaultValue($0) } ?? .null),
        forKey: "NSDefaultValue", of: id)
      builder.set(
        .inline(.integer(attribute.preservesValueInHistoryOnDeletion ? 16 : 0)),
        forKey: "NSFlagsKey", of: id)
      if attribute.allowsExternalBinaryDataStorage {
        builder.set(.inline(.bool(true)), forKey: "GVAllowsExternalBinaryDataStorage", of: id)
      }
      if attribute.isComposite {
        // As Apple's caches keep them: the elements, attribute descriptions of their own, in
        // an NSMutableArray.
        let elements = attribute.elements.map { encode($0, entity: entity) }
        builder.set(
          .value(builder.array(elements, classes: ["NSMutableArray", "NSArray", "NSObject"])),
          forKey: "NSCompositeElements", of: id)
      }
      if attribute.isDerived, let derivation = attribute.derivationExpression {
        builder.set(
          .value(DerivationEncoder.encode(derivation, into: &builder)),
          forKey: "NSDerivationExpression", of: id)
      }
      return .object(id)
    }

    mutating func defaultValue(_ value: AttributeValue) -> Value {
      switch value {
      case .integer(let v): return .integer(v)
      case .double(let v): return .real(v)
      case .bool(let v): return .bool(v)
      case .string(let v): return .string(v)
      case .data(let v), .transformed(let v): return .data(v)
      case .date(let v): return builder.date(PropertyListDate(secondsSinceReferenceDate: v))
      case .decimal(let text): return DecimalArchive.encode(text, into: &builder)
      case .uuid(let bytes):
        let object = builder.makeObject(classes: ["NSUUID", "NSObject"])
        builder.set(.inline(.data(bytes)), forKey: "NS.uuidbytes", of: object)
        return .object(object)
      case .uri(let text):
        let object = builder.makeObject(classes: ["NSURL", "NSObject"])
        builder.set(.value(.null), forKey: "NS.base", of: object)
        builder.set(.value(.string(text)), forKey: "NS.relative", of: object)
        return .object(object)
      case .composite(let elements):
        return builder.dictionary(
          elements.keys.sorted().map { (.string($0), defaultValue(elements[$0]!)) })
      }
    }

    mutating func encode(
      _ relationship: RelationshipDescription, entity: String,
      id entityID: KeyedArchiveBuilder.ObjectID
    ) -> Value {
      // The entity's own object for its own relationships; a copy for an inherited one,
      // made here (the table holds the ones declared or inherited by this entity).
      let id = relationshipIDs[entity]![relationship.name]!
      common(
        id, name: relationship.name, entity: entityID, optional: relationship.isOptional,
        transient: relationship.isTransient, readOnly: false,
        renaming: relationship.renamingIdentifier,
        versionHashModifier: relationship.versionHashModifier, userInfo: relationship.userInfo)
      builder.set(
        .value(entityIDs[relationship.destination].map(Value.object) ?? .null),
        forKey: "NSDestinationEntity", of: id)
      builder.set(
        .value(.string(relationship.destination)), forKey: "_NSDestinationEntityName", of: id)
      if let inverse = relationship.inverse {
        let inverseID = relationshipIDs[relationship.destination]?[inverse]
        builder.set(
          .value(inverseID.map(Value.object) ?? .null), forKey: "NSInverseRelationship", of: id)
        builder.set(.value(.string(inverse)), forKey: "_NSInverseRelationshipName", of: id)
      }
      builder.set(
        .inline(.integer(Int64(relationship.deleteRule.coreDataCode))), forKey: "NSDeleteRule",
        of: id)
      builder.set(.inline(.integer(Int64(relationship.minCount))), forKey: "NSMinCount", of: id)
      builder.set(.inline(.integer(Int64(relationship.maxCount))), forKey: "NSMaxCount", of: id)
      if relationship.isOrdered {
        builder.set(.inline(.bool(true)), forKey: "NSIsOrdered", of: id)
      }
      return .object(id)
    }
  }
}

extension KeyedArchiveBuilder.Value {
  fileprivate var stringText: String? {
    if case .plain(.string(let text)) = self { return text }
    return nil
  }
}

extension AttributeType {
  /// The Foundation class Core Data names for values of this type (`NSAttributeValueClassName`).
  var valueClassName: String? {
    switch self {
    case .integer16, .integer32, .integer64, .double, .float, .boolean: return "NSNumber"
    case .decimal: return "NSDecimalNumber"
    case .string: return "NSString"
    case .date: return "NSDate"
    case .binaryData: return "NSData"
    case .uuid: return "NSUUID"
    case .uri: return "NSURL"
    case .composite: return "NSDictionary"
    case .transformable, .objectID, .undefined: return nil
    }
  }
}
