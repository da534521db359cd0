import Foundation
import PropertyList
import Zlib

/// Reads compiled models: a `.mom` file, or a store's `Z_MODELCACHE` (raw DEFLATE of the same
/// keyed archive). Both hold an `NSManagedObjectModel` archived by `NSKeyedArchiver`.
///
/// What the archive says, as found in real models: a sub-entity's `NSProperties` repeats every
/// inherited property (so properties its ancestors have are dropped here); `NSMaxCount` is 1
/// for a to-one, 0 or -1 for an unbounded to-many (kept as written: the version hash covers
/// it) and larger for a bounded one;
/// `NSRenamingIdentifier` equals the name when there was no rename; bit 16 of `NSFlagsKey` is
/// "preserve after deletion". Whether an attribute allows external storage is not recognised
/// in Apple's compiled models (no fixture shows its flag) and reads as false, unless the model
/// was written by ``CompiledModelWriter``, which keeps it under a key of its own.
public enum CompiledModelLoader {
  /// The most bytes a `Z_MODELCACHE` may inflate to.
  public static let modelCacheLimit = 64 << 20

  /// Loads a `.mom` file.
  public static func load(path: String, name: String? = nil, versionName: String? = nil)
    throws(ModelError) -> ObjectModel
  {
    let url = URL(fileURLWithPath: path)
    let bytes: [UInt8]
    do {
      bytes = [UInt8](try Data(contentsOf: url))
    } catch {
      throw ModelError(.missing, "cannot read the compiled model", path: path, underlying: error)
    }
    let version = versionName ?? url.deletingPathExtension().lastPathComponent
    do {
      return try decode(archiveBytes: bytes, name: name ?? version, versionName: version)
    } catch {
      throw ModelError(
        error.kind, error.detail, entity: error.entity, property: error.property, path: path)
    }
  }

  /// Loads the model a store keeps in `Z_MODELCACHE.Z_CONTENT`, with its version name when the
  /// cache carries one (graphvault's caches do: ``CompiledModelWriter/versionNameKey``).
  public static func load(modelCache compressed: [UInt8], name: String) throws(ModelError)
    -> ObjectModel
  {
    let bytes: [UInt8]
    do {
      bytes = try RawDeflate.decompress(compressed, limit: modelCacheLimit)
    } catch {
      throw ModelError(.unreadable, "Z_MODELCACHE does not inflate", underlying: error)
    }
    return try decode(archiveBytes: bytes, name: name, versionName: nil, cached: true)
  }

  /// Decodes a keyed archive of an `NSManagedObjectModel`.
  public static func decode(archiveBytes: [UInt8], name: String, versionName: String?)
    throws(ModelError) -> ObjectModel
  {
    try decode(archiveBytes: archiveBytes, name: name, versionName: versionName, cached: false)
  }

  private static func decode(
    archiveBytes: [UInt8], name: String, versionName: String?, cached: Bool
  ) throws(ModelError) -> ObjectModel {
    do {
      let archive = try KeyedArchive(bytes: archiveBytes)
      let model = try archive.rootObject()
      guard model.classHierarchy.contains("NSManagedObjectModel") else {
        throw ModelError(.unreadable, "the archive holds \(model.className), not a model")
      }
      let entityObjects = try entities(of: model)
      let byName = try Dictionary(
        entityObjects.map { object throws(PropertyListError) in
          (try object.string(forKey: "NSEntityName") ?? "", object)
        }, uniquingKeysWith: { first, _ in first })
      var entities: [EntityDescription] = []
      for object in entityObjects {
        entities.append(try entity(object, byName: byName))
      }
      let identifiers =
        try model.value(forKey: "NSVersionIdentifiers").arrayValue?
        .compactMap(\.stringValue).sorted() ?? []
      let carried =
        cached ? try model.string(forKey: CompiledModelWriter.versionNameKey) : nil
      return try ObjectModel(
        name: name, versionName: versionName ?? carried, versionIdentifiers: identifiers,
        entities: entities)
    } catch let error as ModelError {
      throw error
    } catch {
      throw ModelError(.unreadable, "the compiled model is malformed", underlying: error)
    }
  }

  /// A `.mom` keeps entities in an `NSDictionary`; `Z_MODELCACHE` in an
  /// `NSKnownKeysDictionary1`, whose values are in a `values` array.
  private static func entities(of model: KeyedArchiveObject) throws -> [KeyedArchiveObject] {
    let container = try model.value(forKey: "NSEntities")
    if let entries = container.dictionaryEntries {
      return entries.compactMap { $0.value.objectValue }
    }
    if let known = container.objectValue, let values = try known.value(forKey: "values").arrayValue
    {
      return values.compactMap(\.objectValue)
    }
    throw ModelError(
      .unreadable, "NSEntities is \(container.kindName), not a dictionary of entities")
  }

  private static func string(_ object: KeyedArchiveObject, _ key: String) throws -> String? {
    try object.string(forKey: key)
  }

  private static func entity(_ object: KeyedArchiveObject, byName: [String: KeyedArchiveObject])
    throws -> EntityDescription
  {
    let name = try string(object, "NSEntityName") ?? ""
    let parent = try object.object(forKey: "NSSuperentity")?.string(forKey: "NSEntityName")
    // Names the ancestors already have: the archive repeats inherited properties.
    var inherited = Set<String>()
    var ancestor = parent
    while let ancestorName = ancestor, let ancestorObject = byName[ancestorName],
      inherited.count < 100_000
    {
      for (key, _) in try properties(of: ancestorObject) { inherited.insert(key) }
      ancestor = try ancestorObject.object(forKey: "NSSuperentity")?.string(forKey: "NSEntityName")
    }
    var entity = EntityDescription(
      name: name, className: try string(object, "NSClassNameForEntity"),
      isAbstract: try object.value(forKey: "NSIsAbstract").boolValue ?? false, parent: parent,
      renamingIdentifier: renaming(try string(object, "NSRenamingIdentifier"), name),
      versionHashModifier: try string(object, "NSVersionHashModifier"),
      userInfo: try userInfo(object))
    for (propertyName, property) in try properties(of: object)
    where !inherited.contains(propertyName) {
      switch property.className {
      case "NSAttributeDescription", "NSDerivedAttributeDescription",
        "NSCompositeAttributeDescription":
        entity.attributes.append(try attribute(property, name: propertyName, entity: name))
      case "NSRelationshipDescription":
        entity.relationships.append(try relationship(property, name: propertyName))
      default:
        break  // fetched properties are not stored
      }
    }
    entity.attributes.sort { $0.name < $1.name }
    entity.relationships.sort { $0.name < $1.name }
    if let tuples = try object.value(forKey: "NSUniqueTuples").arrayValue {
      entity.uniquenessConstraints = tuples.map { ($0.arrayValue ?? []).compactMap(\.stringValue) }
    }
    if let indexes = try object.value(forKey: "NSFetchIndexDescriptions").arrayValue {
      for index in indexes.compactMap(\.objectValue) {
        var elements: [FetchIndex.Element] = []
        for element in try index.value(forKey: "NSIndexElements").arrayValue?.compactMap(
          \.objectValue) ?? []
        {
          elements.append(
            FetchIndex.Element(
              property: try element.string(forKey: "NSPropertyName") ?? "",
              kind: try element.value(forKey: "NSFetchIndexElementType").integerValue == 1
                ? "R-Tree" : "Binary",
              ascending: try element.value(forKey: "NSAscending").boolValue ?? true))
        }
        entity.fetchIndexes.append(
          FetchIndex(name: try index.string(forKey: "NSIndexName") ?? "", elements: elements))
      }
    }
    return entity
  }

  private static func properties(of entity: KeyedArchiveObject) throws -> [(
    String, KeyedArchiveObject
  )] {
    guard let entries = try entity.value(forKey: "NSProperties").dictionaryEntries else {
      return []
    }
    return entries.compactMap { key, value in
      guard let name = key.stringValue, let object = value.objectValue else { return nil }
      return (name, object)
    }
  }

  private static func renaming(_ identifier: String?, _ name: String) -> String? {
    guard let identifier, !identifier.isEmpty, identifier != name else { return nil }
    return identifier
  }

  private static func userInfo(_ object: KeyedArchiveObject) throws -> [String: String] {
    (try object.value(forKey: "NSUserInfo").stringKeyedDictionary ?? [:]).compactMapValues(
      \.stringValue)
  }

  private static func attribute(
    _ object: KeyedArchiveObject, name: String, entity: String, depth: Int = 0
  ) throws -> AttributeDescription {
    let code = Int(try object.value(forKey: "NSAttributeType").integerValue ?? 0)
    guard let type = AttributeType(coreDataCode: code) else {
      throw ModelError(
        .unreadable, "unknown NSAttributeType \(code)", entity: entity, property: name)
    }
    let flags = try object.value(forKey: "NSFlagsKey").integerValue ?? 0
    let derived = object.className == "NSDerivedAttributeDescription"
    // A composite's elements: attribute descriptions (or composites) of their own, named by
    // their own NSPropertyName.
    var elements: [AttributeDescription] = []
    if type == .composite {
      try AttributeDescription.checkCompositeDepth(depth, entity: entity, property: name)
      for element in try object.value(forKey: "NSCompositeElements").arrayValue?.compactMap(
        \.objectValue) ?? []
      {
        let elementName = try element.string(forKey: "NSPropertyName") ?? ""
        elements.append(
          try attribute(element, name: elementName, entity: entity, depth: depth + 1))
      }
      elements.sort { $0.name < $1.name }
    }
    var derivation: String?
    if derived, let expression = try object.object(forKey: "NSDerivationExpression") {
      derivation = try ExpressionRenderer.render(expression)
    }
    return AttributeDescription(
      name: name, type: type,
      isOptional: try object.value(forKey: "NSIsOptional").boolValue ?? false,
      isTransient: try object.value(forKey: "NSIsTransient").boolValue ?? false, isDerived: derived,
      derivationExpression: derivation,
      defaultValue: try defaultValue(object.value(forKey: "NSDefaultValue"), type: type),
      renamingIdentifier: renaming(try string(object, "NSRenamingIdentifier"), name),
      versionHashModifier: try string(object, "NSVersionHashModifier"),
      allowsExternalBinaryDataStorage: try object.value(forKey: "GVAllowsExternalBinaryDataStorage")
        .boolValue ?? false,
      preservesValueInHistoryOnDeletion: flags & 16 != 0,
      valueTransformerName: try string(object, "NSValueTransformerName"),
      valueClassName: type == .transformable || type == .composite
        ? try string(object, "NSAttributeValueClassName") : nil,
      userInfo: try userInfo(object), elements: elements)
  }

  private static func defaultValue(_ value: KeyedArchiveValue, type: AttributeType)
    -> AttributeValue?
  {
    switch (type, value) {
    case (.integer16, _), (.integer32, _), (.integer64, _):
      return value.integerValue.map(AttributeValue.integer)
    case (.boolean, _): return value.boolValue.map(AttributeValue.bool)
    case (.double, _), (.float, _): return value.doubleValue.map(AttributeValue.double)
    case (.decimal, .object(let object)):
      return (try? DecimalArchive.decode(object)).flatMap { $0 }.map(AttributeValue.decimal)
    case (.decimal, _):
      return value.doubleValue.map { AttributeValue.decimal(String($0)) }
        ?? value.stringValue.map(AttributeValue.decimal)
    case (.uuid, .object(let object)):
      guard let bytes = try? object.value(forKey: "NS.uuidbytes").dataValue, bytes.count == 16
      else { return nil }
      return .uuid(bytes)
    case (.uri, .object(let object)):
      return (try? object.string(forKey: "NS.relative")).flatMap { $0 }.map(AttributeValue.uri)
    case (.string, .string(let text)): return .string(text)
    case (.uri, .string(let text)): return .uri(text)
    case (.date, .date(let date)): return .date(date.secondsSinceReferenceDate)
    case (.binaryData, .data(let bytes)): return .data(bytes)
    default: return nil
    }
  }

  private static func relationship(_ object: KeyedArchiveObject, name: String) throws
    -> RelationshipDescription
  {
    let destination =
      try string(object, "_NSDestinationEntityName")
      ?? object.object(forKey: "NSDestinationEntity")?.string(forKey: "NSEntityName") ?? ""
    let inverse =
      try string(object, "_NSInverseRelationshipName")
      ?? object.object(forKey: "NSInverseRelationship")?.string(forKey: "NSPropertyName")
    let maxCount = Int(try object.value(forKey: "NSMaxCount").integerValue ?? 1)
    let rule = DeleteRule(
      coreDataCode: Int(try object.value(forKey: "NSDeleteRule").integerValue ?? 1))
    return RelationshipDescription(
      name: name, destination: destination, inverse: inverse,
      minCount: max(0, Int(try object.value(forKey: "NSMinCount").integerValue ?? 0)),
      maxCount: maxCount,
      isOrdered: try object.value(forKey: "NSIsOrdered").boolValue ?? false,
      deleteRule: rule ?? .nullify,
      isOptional: try object.value(forKey: "NSIsOptional").boolValue ?? false,
      isTransient: try object.value(forKey: "NSIsTransient").boolValue ?? false,
      renamingIdentifier: renaming(try string(object, "NSRenamingIdentifier"), name),
      versionHashModifier: try string(object, "NSVersionHashModifier"),
      userInfo: try userInfo(object))
  }
}

/// Renders an archived `NSExpression` in the syntax Xcode writes for derivations
/// (`pages.@count`, `now()`, `title`).
enum ExpressionRenderer {
  static func render(_ expression: KeyedArchiveObject, depth: Int = 0) throws -> String {
    guard depth < 64 else { throw ModelError(.unreadable, "expression nests too deeply") }
    let arguments = try (expression.value(forKey: "NSArguments").arrayValue ?? [])
      .compactMap(\.objectValue).map { try render($0, depth: depth + 1) }
    switch expression.className {
    case "NSKeyPathSpecifierExpression":
      return try expression.string(forKey: "NSKeyPath") ?? ""
    case "NSSelfExpression":
      return "SELF"
    case "NSConstantValueExpression":
      let value = try expression.value(forKey: "NSConstantValue")
      if let text = value.stringValue { return "\"\(text)\"" }
      if case .integer(let number) = value { return String(number) }
      if let number = value.doubleValue { return String(number) }
      return "nil"
    case "NSKeyPathExpression":
      let key = arguments.first ?? ""
      if let operand = try expression.object(forKey: "NSOperand"),
        operand.className != "NSSelfExpression"
      {
        return try render(operand, depth: depth + 1) + "." + key
      }
      return key
    default:
      let selector = try expression.string(forKey: "NSSelectorName") ?? "FUNCTION"
      let aggregates = [
        "count:": "@count", "sum:": "@sum", "max:": "@max", "min:": "@min", "average:": "@avg",
      ]
      if let aggregate = aggregates[selector], arguments.count == 1 {
        return arguments[0] + "." + aggregate
      }
      let function = selector.hasSuffix(":") ? String(selector.dropLast()) : selector
      return function + "(" + arguments.joined(separator: ", ") + ")"
    }
  }
}
