import PropertyList

/// graphvault's own model descriptor: a property list that round-trips an ``ObjectModel``
/// exactly (every entity, attribute and relationship, renaming identifiers and Apple's version
/// hashes included). Archives carry it so a restore knows the model the data was written with.
///
/// Format 1, a dictionary: `format` (1), `name`, `versionName`, `versionIdentifiers`, and
/// `entities`, an array of dictionaries with the keys of ``EntityDescription``; attributes and
/// relationships are arrays of dictionaries with the keys of their descriptions; a default
/// value is `{type, value}`. Absent key = nil (or false, or empty).
public enum ModelDescriptor {
  /// The descriptor format this version writes.
  public static let formatVersion: Int64 = 1

  /// The model as a descriptor.
  public static func encode(_ model: ObjectModel) -> PropertyListValue {
    var root: [String: PropertyListValue] = [
      "format": .integer(formatVersion),
      "name": .string(model.name),
      "versionIdentifiers": .array(model.versionIdentifiers.map(PropertyListValue.string)),
      "entities": .array(model.entities.map(encode)),
    ]
    root["versionName"] = model.versionName.map(PropertyListValue.string)
    return .dictionary(root)
  }

  /// Reads a model from its descriptor.
  /// - Throws: ``ModelError`` (kind ``ModelError/Kind/unreadable``) naming the missing or
  ///   malformed key, or the model's own validation error.
  public static func decode(_ descriptor: PropertyListValue) throws(ModelError) -> ObjectModel {
    let root = try Fields(descriptor, context: "model descriptor")
    let format = try root.integer("format")
    guard format == formatVersion else {
      throw ModelError(
        .unreadable,
        "model descriptor format \(format) is not supported (this version reads \(formatVersion))")
    }
    var entities: [EntityDescription] = []
    for value in try root.array("entities") { entities.append(try decodeEntity(value)) }
    return try ObjectModel(
      name: try root.string("name"), versionName: try root.optionalString("versionName"),
      versionIdentifiers: try root.strings("versionIdentifiers"), entities: entities)
  }

  // MARK: Entities

  private static func encode(_ entity: EntityDescription) -> PropertyListValue {
    var fields: [String: PropertyListValue] = [
      "name": .string(entity.name),
      "attributes": .array(entity.attributes.map(encode)),
      "relationships": .array(entity.relationships.map(encode)),
    ]
    fields["className"] = entity.className.map(PropertyListValue.string)
    if entity.isAbstract { fields["abstract"] = .bool(true) }
    fields["parent"] = entity.parent.map(PropertyListValue.string)
    fields["renamingIdentifier"] = entity.renamingIdentifier.map(PropertyListValue.string)
    fields["versionHashModifier"] = entity.versionHashModifier.map(PropertyListValue.string)
    if !entity.userInfo.isEmpty { fields["userInfo"] = encode(entity.userInfo) }
    if !entity.uniquenessConstraints.isEmpty {
      fields["uniquenessConstraints"] = .array(
        entity.uniquenessConstraints.map { .array($0.map(PropertyListValue.string)) })
    }
    if !entity.fetchIndexes.isEmpty {
      fields["fetchIndexes"] = .array(
        entity.fetchIndexes.map { index in
          [
            "name": .string(index.name),
            "elements": .array(
              index.elements.map {
                [
                  "property": .string($0.property), "kind": .string($0.kind),
                  "ascending": .bool($0.ascending),
                ]
              }),
          ]
        })
    }
    fields["versionHash"] = entity.versionHash.map(PropertyListValue.data)
    return .dictionary(fields)
  }

  private static func decodeEntity(_ value: PropertyListValue) throws(ModelError)
    -> EntityDescription
  {
    let fields = try Fields(value, context: "entity")
    let name = try fields.string("name")
    let context = "entity \(name)"
    var attributes: [AttributeDescription] = []
    for attribute in try fields.array("attributes") {
      attributes.append(try decodeAttribute(attribute, context: context))
    }
    var relationships: [RelationshipDescription] = []
    for relationship in try fields.array("relationships") {
      relationships.append(try decodeRelationship(relationship, context: context))
    }
    var constraints: [[String]] = []
    for constraint in try fields.optionalArray("uniquenessConstraints") {
      guard case .array(let names) = constraint else {
        throw ModelError(.unreadable, "a uniqueness constraint is not an array", entity: name)
      }
      constraints.append(names.compactMap(\.stringValue))
    }
    var indexes: [FetchIndex] = []
    for index in try fields.optionalArray("fetchIndexes") {
      let indexFields = try Fields(index, context: "\(context) fetch index")
      var elements: [FetchIndex.Element] = []
      for element in try indexFields.array("elements") {
        let e = try Fields(element, context: "\(context) fetch index element")
        elements.append(
          FetchIndex.Element(
            property: try e.string("property"), kind: try e.string("kind"),
            ascending: try e.bool("ascending")))
      }
      indexes.append(FetchIndex(name: try indexFields.string("name"), elements: elements))
    }
    return EntityDescription(
      name: name, className: try fields.optionalString("className"),
      isAbstract: try fields.bool("abstract"), parent: try fields.optionalString("parent"),
      renamingIdentifier: try fields.optionalString("renamingIdentifier"),
      versionHashModifier: try fields.optionalString("versionHashModifier"),
      userInfo: try fields.stringDictionary("userInfo"), uniquenessConstraints: constraints,
      fetchIndexes: indexes, attributes: attributes, relationships: relationships,
      versionHash: try fields.optionalData("versionHash"))
  }

  // MARK: Attributes

  private static func encode(_ attribute: AttributeDescription) -> PropertyListValue {
    var fields: [String: PropertyListValue] = [
      "name": .string(attribute.name), "type": .string(attribute.type.rawValue),
    ]
    if attribute.isOptional { fields["optional"] = .bool(true) }
    if attribute.isTransient { fields["transient"] = .bool(true) }
    if attribute.isDerived { fields["derived"] = .bool(true) }
    fields["derivation"] = attribute.derivationExpression.map(PropertyListValue.string)
    fields["default"] = attribute.defaultValue.map(encode)
    fields["renamingIdentifier"] = attribute.renamingIdentifier.map(PropertyListValue.string)
    fields["versionHashModifier"] = attribute.versionHashModifier.map(PropertyListValue.string)
    if attribute.allowsExternalBinaryDataStorage { fields["externalStorage"] = .bool(true) }
    if attribute.preservesValueInHistoryOnDeletion { fields["preserveAfterDeletion"] = .bool(true) }
    fields["valueTransformerName"] = attribute.valueTransformerName.map(PropertyListValue.string)
    fields["valueClassName"] = attribute.valueClassName.map(PropertyListValue.string)
    if !attribute.userInfo.isEmpty { fields["userInfo"] = encode(attribute.userInfo) }
    if !attribute.elements.isEmpty {
      fields["elements"] = .array(attribute.elements.map { encode($0) })
    }
    return .dictionary(fields)
  }

  private static func decodeAttribute(
    _ value: PropertyListValue, context: String, depth: Int = 0
  ) throws(ModelError) -> AttributeDescription {
    let fields = try Fields(value, context: "\(context) attribute")
    let name = try fields.string("name")
    let typeName = try fields.string("type")
    guard let type = AttributeType(rawValue: typeName) else {
      throw ModelError(.unreadable, "unknown attribute type \(typeName)", property: name)
    }
    var defaultValue: AttributeValue?
    if let raw = fields.raw("default") {
      defaultValue = try decodeValue(raw, context: "\(context).\(name)")
    }
    var elements: [AttributeDescription] = []
    let elementValues = try fields.optionalArray("elements")
    if !elementValues.isEmpty {
      try AttributeDescription.checkCompositeDepth(depth, entity: nil, property: name)
    }
    for element in elementValues {
      elements.append(
        try decodeAttribute(element, context: "\(context).\(name)", depth: depth + 1))
    }
    return AttributeDescription(
      name: name, type: type, isOptional: try fields.bool("optional"),
      isTransient: try fields.bool("transient"), isDerived: try fields.bool("derived"),
      derivationExpression: try fields.optionalString("derivation"), defaultValue: defaultValue,
      renamingIdentifier: try fields.optionalString("renamingIdentifier"),
      versionHashModifier: try fields.optionalString("versionHashModifier"),
      allowsExternalBinaryDataStorage: try fields.bool("externalStorage"),
      preservesValueInHistoryOnDeletion: try fields.bool("preserveAfterDeletion"),
      valueTransformerName: try fields.optionalString("valueTransformerName"),
      valueClassName: try fields.optionalString("valueClassName"),
      userInfo: try fields.stringDictionary("userInfo"), elements: elements)
  }

  /// A typed value as `{type, value}`.
  public static func encode(_ value: AttributeValue) -> PropertyListValue {
    switch value {
    case .integer(let v): return ["type": "integer", "value": .integer(v)]
    case .double(let v): return ["type": "double", "value": .real(v)]
    case .decimal(let v): return ["type": "decimal", "value": .string(v)]
    case .string(let v): return ["type": "string", "value": .string(v)]
    case .bool(let v): return ["type": "bool", "value": .bool(v)]
    case .date(let v):
      return ["type": "date", "value": .date(PropertyListDate(secondsSinceReferenceDate: v))]
    case .data(let v): return ["type": "data", "value": .data(v)]
    case .uuid(let v): return ["type": "uuid", "value": .data(v)]
    case .uri(let v): return ["type": "uri", "value": .string(v)]
    case .transformed(let v): return ["type": "transformed", "value": .data(v)]
    case .composite(let elements):
      return ["type": "composite", "value": .dictionary(elements.mapValues { encode($0) })]
    }
  }

  /// Reads a typed value written by ``encode(_:)-3o2bh``.
  public static func decodeValue(_ raw: PropertyListValue, context: String) throws(ModelError)
    -> AttributeValue
  {
    let fields = try Fields(raw, context: "\(context) value")
    let type = try fields.string("type")
    let value = fields.raw("value")
    switch (type, value) {
    case ("integer", .integer(let v)?): return .integer(v)
    case ("double", .real(let v)?): return .double(v)
    case ("decimal", .string(let v)?): return .decimal(v)
    case ("string", .string(let v)?): return .string(v)
    case ("bool", .bool(let v)?): return .bool(v)
    case ("date", .date(let v)?): return .date(v.secondsSinceReferenceDate)
    case ("data", .data(let v)?): return .data(v)
    case ("uuid", .data(let v)?): return .uuid(v)
    case ("uri", .string(let v)?): return .uri(v)
    case ("transformed", .data(let v)?): return .transformed(v)
    case ("composite", .dictionary(let elements)?):
      var values: [String: AttributeValue] = [:]
      for (name, element) in elements {
        values[name] = try decodeValue(element, context: "\(context).\(name)")
      }
      return .composite(values)
    default:
      throw ModelError(
        .unreadable, "\(context): a \(type) value holds \(value?.kindName ?? "nothing")")
    }
  }

  // MARK: Relationships

  private static func encode(_ relationship: RelationshipDescription) -> PropertyListValue {
    var fields: [String: PropertyListValue] = [
      "name": .string(relationship.name), "destination": .string(relationship.destination),
      "minCount": .integer(Int64(relationship.minCount)),
      "maxCount": .integer(Int64(relationship.maxCount)),
      "deleteRule": .string(relationship.deleteRule.rawValue),
    ]
    fields["inverse"] = relationship.inverse.map(PropertyListValue.string)
    if relationship.isOrdered { fields["ordered"] = .bool(true) }
    if relationship.isOptional { fields["optional"] = .bool(true) }
    if relationship.isTransient { fields["transient"] = .bool(true) }
    fields["renamingIdentifier"] = relationship.renamingIdentifier.map(PropertyListValue.string)
    fields["versionHashModifier"] = relationship.versionHashModifier.map(PropertyListValue.string)
    if !relationship.userInfo.isEmpty { fields["userInfo"] = encode(relationship.userInfo) }
    return .dictionary(fields)
  }

  private static func decodeRelationship(_ value: PropertyListValue, context: String)
    throws(ModelError) -> RelationshipDescription
  {
    let fields = try Fields(value, context: "\(context) relationship")
    let name = try fields.string("name")
    let ruleName = try fields.string("deleteRule")
    guard let rule = DeleteRule(rawValue: ruleName) else {
      throw ModelError(.unreadable, "unknown delete rule \(ruleName)", property: name)
    }
    return RelationshipDescription(
      name: name, destination: try fields.string("destination"),
      inverse: try fields.optionalString("inverse"), minCount: Int(try fields.integer("minCount")),
      maxCount: Int(try fields.integer("maxCount")), isOrdered: try fields.bool("ordered"),
      deleteRule: rule, isOptional: try fields.bool("optional"),
      isTransient: try fields.bool("transient"),
      renamingIdentifier: try fields.optionalString("renamingIdentifier"),
      versionHashModifier: try fields.optionalString("versionHashModifier"),
      userInfo: try fields.stringDictionary("userInfo"))
  }

  private static func encode(_ userInfo: [String: String]) -> PropertyListValue {
    .dictionary(userInfo.mapValues(PropertyListValue.string))
  }
}

/// Typed access to a descriptor dictionary, with errors naming the key.
struct Fields {
  let values: [String: PropertyListValue]
  let context: String

  init(_ value: PropertyListValue, context: String) throws(ModelError) {
    guard case .dictionary(let values) = value else {
      throw ModelError(.unreadable, "\(context) is \(value.kindName), not a dictionary")
    }
    self.values = values
    self.context = context
  }

  func raw(_ key: String) -> PropertyListValue? { values[key] }

  private func wrongType(_ key: String, _ expected: String) -> ModelError {
    ModelError(
      .unreadable, "\(context): \(key) is \(values[key]?.kindName ?? "missing"), not \(expected)")
  }

  func string(_ key: String) throws(ModelError) -> String {
    guard case .string(let v)? = values[key] else { throw wrongType(key, "a string") }
    return v
  }

  func optionalString(_ key: String) throws(ModelError) -> String? {
    guard let value = values[key] else { return nil }
    guard case .string(let v) = value else { throw wrongType(key, "a string") }
    return v
  }

  func integer(_ key: String) throws(ModelError) -> Int64 {
    guard case .integer(let v)? = values[key] else { throw wrongType(key, "an integer") }
    return v
  }

  func bool(_ key: String) throws(ModelError) -> Bool {
    guard let value = values[key] else { return false }
    guard case .bool(let v) = value else { throw wrongType(key, "a boolean") }
    return v
  }

  func optionalData(_ key: String) throws(ModelError) -> [UInt8]? {
    guard let value = values[key] else { return nil }
    guard case .data(let v) = value else { throw wrongType(key, "data") }
    return v
  }

  func array(_ key: String) throws(ModelError) -> [PropertyListValue] {
    guard case .array(let v)? = values[key] else { throw wrongType(key, "an array") }
    return v
  }

  func optionalArray(_ key: String) throws(ModelError) -> [PropertyListValue] {
    guard values[key] != nil else { return [] }
    return try array(key)
  }

  func strings(_ key: String) throws(ModelError) -> [String] {
    try optionalArray(key).map { value throws(ModelError) in
      guard case .string(let v) = value else { throw wrongType(key, "an array of strings") }
      return v
    }
  }

  func stringDictionary(_ key: String) throws(ModelError) -> [String: String] {
    guard let value = values[key] else { return [:] }
    guard case .dictionary(let entries) = value else { throw wrongType(key, "a dictionary") }
    return entries.compactMapValues(\.stringValue)
  }
}
