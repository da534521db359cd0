import Foundation
import PropertyList

/// Reads Xcode's XML model format (`X.xcdatamodel/contents`).
///
/// Omitted booleans mean NO (Xcode writes only YES). A to-one is written `maxCount="1"`; a
/// to-many `toMany="YES"`, with `maxCount` only when bounded. `elementID` is the renaming
/// identifier. Fetched properties and the diagram layout are not part of the stored model and
/// are skipped.
public enum XcodeModelLoader {
  /// Loads one `.xcdatamodel` folder (or its `contents` file).
  /// - Parameters:
  ///   - name: the model's name (defaults to the folder's name without extension).
  /// - Throws: ``ModelError`` naming the file, the entity and the attribute when it is not a
  ///   model or does not validate.
  public static func load(path: String, name: String? = nil) throws(ModelError) -> ObjectModel {
    var url = URL(fileURLWithPath: path)
    if url.lastPathComponent != "contents" { url.appendPathComponent("contents") }
    let bytes: [UInt8]
    do {
      bytes = [UInt8](try Data(contentsOf: url))
    } catch {
      throw ModelError(.missing, "cannot read the model file", path: url.path, underlying: error)
    }
    let versionName = url.deletingLastPathComponent().deletingPathExtension().lastPathComponent
    do {
      return try parse(bytes, name: name ?? versionName, versionName: versionName)
    } catch {
      throw ModelError(
        error.kind, error.detail, entity: error.entity, property: error.property, path: url.path)
    }
  }

  /// Parses the XML of a `contents` file.
  public static func parse(_ bytes: [UInt8], name: String, versionName: String?)
    throws(ModelError) -> ObjectModel
  {
    let root: SimpleXML.Element
    do {
      root = try SimpleXML.parse(bytes)
    } catch {
      throw ModelError(.unreadable, "the model file is not well-formed XML", underlying: error)
    }
    guard root.name == "model" else {
      throw ModelError(.unreadable, "the root element is <\(root.name)>, not <model>")
    }
    // Composite types Xcode 15's editor writes at model level, which attributes name.
    var composites: [String: SimpleXML.Element] = [:]
    for element in root.elements
    where element.name == "composite" || element.name == "compositeAttribute" {
      if let compositeName = element[attribute: "name"] { composites[compositeName] = element }
    }
    var entities: [EntityDescription] = []
    for element in root.elements(named: "entity") {
      entities.append(try entity(element, composites: composites))
    }
    // The identifier is recorded even when empty: Core Data stores [""] for it.
    let identifiers = root[attribute: "userDefinedModelVersionIdentifier"].map { [$0] } ?? []
    return try ObjectModel(
      name: name, versionName: versionName, versionIdentifiers: identifiers, entities: entities)
  }

  private static func yes(_ element: SimpleXML.Element, _ attribute: String) -> Bool {
    element[attribute: attribute] == "YES"
  }

  private static func entity(
    _ element: SimpleXML.Element, composites: [String: SimpleXML.Element]
  ) throws(ModelError) -> EntityDescription {
    guard let name = element[attribute: "name"] else {
      throw ModelError(.unreadable, "an <entity> has no name (line \(element.line))")
    }
    var entity = EntityDescription(
      name: name, className: element[attribute: "representedClassName"],
      isAbstract: yes(element, "isAbstract"), parent: element[attribute: "parentEntity"],
      renamingIdentifier: renaming(element, name),
      versionHashModifier: element[attribute: "versionHashModifier"],
      userInfo: userInfo(element))
    for child in element.elements {
      switch child.name {
      case "attribute":
        entity.attributes.append(try attribute(child, entity: name, composites: composites))
      case "relationship": entity.relationships.append(try relationship(child, entity: name))
      case "uniquenessConstraints":
        for constraint in child.elements(named: "uniquenessConstraint") {
          entity.uniquenessConstraints.append(
            constraint.elements(named: "constraint").compactMap { $0[attribute: "value"] })
        }
      case "fetchIndex":
        entity.fetchIndexes.append(
          FetchIndex(
            name: child[attribute: "name"] ?? "",
            elements: child.elements(named: "fetchIndexElement").map {
              FetchIndex.Element(
                property: $0[attribute: "property"] ?? "", kind: $0[attribute: "type"] ?? "Binary",
                ascending: $0[attribute: "order"] != "descending")
            }))
      default:
        break  // fetchedProperty, userInfo (read above), compoundIndexes (legacy), elements
      }
    }
    return entity
  }

  /// Xcode writes `elementID` only when set; an identifier equal to the name means no rename.
  private static func renaming(_ element: SimpleXML.Element, _ name: String) -> String? {
    guard let identifier = element[attribute: "elementID"], identifier != name else { return nil }
    return identifier
  }

  private static func userInfo(_ element: SimpleXML.Element) -> [String: String] {
    var result: [String: String] = [:]
    for info in element.elements(named: "userInfo") {
      for entry in info.elements(named: "entry") {
        if let key = entry[attribute: "key"] { result[key] = entry[attribute: "value"] ?? "" }
      }
    }
    return result
  }

  /// An attribute; a composite's elements are its own `<attribute>` children or those of the
  /// model-level `<composite>` its `composite` attribute names (nested up to 16 deep).
  private static func attribute(
    _ element: SimpleXML.Element, entity: String, composites: [String: SimpleXML.Element],
    depth: Int = 0
  ) throws(ModelError) -> AttributeDescription {
    guard let name = element[attribute: "name"] else {
      throw ModelError(
        .unreadable, "an <attribute> has no name (line \(element.line))", entity: entity)
    }
    let typeName = element[attribute: "attributeType"] ?? "Undefined"
    guard let type = AttributeType(rawValue: typeName) else {
      throw ModelError(
        .unreadable, "unknown attributeType \"\(typeName)\"", entity: entity, property: name)
    }
    var defaultValue: AttributeValue?
    if type == .date, let interval = element[attribute: "defaultDateTimeInterval"] {
      defaultValue = Double(interval).map(AttributeValue.date)
    } else if let text = element[attribute: "defaultValueString"] {
      guard let value = AttributeValue(defaultValueString: text, type: type) else {
        throw ModelError(
          .unreadable, "default value \"\(text)\" is not a valid \(typeName)", entity: entity,
          property: name)
      }
      defaultValue = value
    }
    var elements: [AttributeDescription] = []
    if type == .composite {
      try AttributeDescription.checkCompositeDepth(depth, entity: entity, property: name)
      var definition = element
      if let reference = element[attribute: "composite"] {
        guard let found = composites[reference] else {
          throw ModelError(
            .unreadable, "names the composite \(reference), which the model does not define",
            entity: entity, property: name)
        }
        definition = found
      }
      for child in definition.elements(named: "attribute") {
        elements.append(
          try attribute(child, entity: entity, composites: composites, depth: depth + 1))
      }
    }
    return AttributeDescription(
      name: name, type: type, isOptional: yes(element, "optional"),
      isTransient: yes(element, "transient"), isDerived: yes(element, "derived"),
      derivationExpression: element[attribute: "derivationExpression"],
      defaultValue: defaultValue, renamingIdentifier: renaming(element, name),
      versionHashModifier: element[attribute: "versionHashModifier"],
      allowsExternalBinaryDataStorage: yes(element, "allowsExternalBinaryDataStorage"),
      preservesValueInHistoryOnDeletion: yes(element, "preserveAfterDeletion"),
      valueTransformerName: element[attribute: "valueTransformerName"],
      valueClassName: type == .composite ? "NSDictionary" : element[attribute: "customClassName"],
      userInfo: userInfo(element), elements: elements)
  }

  private static func relationship(_ element: SimpleXML.Element, entity: String)
    throws(ModelError) -> RelationshipDescription
  {
    guard let name = element[attribute: "name"],
      let destination = element[attribute: "destinationEntity"]
    else {
      throw ModelError(
        .unreadable, "a <relationship> lacks a name or destinationEntity (line \(element.line))",
        entity: entity)
    }
    let toMany = yes(element, "toMany")
    let maxCount = element[attribute: "maxCount"].flatMap { Int($0) } ?? (toMany ? 0 : 1)
    let ruleName = element[attribute: "deletionRule"] ?? "Nullify"
    guard let rule = DeleteRule(rawValue: ruleName) else {
      throw ModelError(
        .unreadable, "unknown deletionRule \"\(ruleName)\"", entity: entity, property: name)
    }
    return RelationshipDescription(
      name: name, destination: destination, inverse: element[attribute: "inverseName"],
      minCount: element[attribute: "minCount"].flatMap { Int($0) } ?? 0, maxCount: maxCount,
      isOrdered: yes(element, "ordered"), deleteRule: rule, isOptional: yes(element, "optional"),
      isTransient: yes(element, "transient"), renamingIdentifier: renaming(element, name),
      versionHashModifier: element[attribute: "versionHashModifier"], userInfo: userInfo(element))
  }
}
