/// An attribute of an entity.
public struct AttributeDescription: Hashable, Sendable, Codable {
  /// The attribute's name.
  public var name: String
  /// Its type.
  public var type: AttributeType
  /// Whether it may be nil.
  public var isOptional: Bool
  /// Whether it is transient (never stored).
  public var isTransient: Bool
  /// Whether it is derived (kept up to date by the store from `derivationExpression`).
  public var isDerived: Bool
  /// The derivation expression (`pages.@count`, …), for derived attributes.
  public var derivationExpression: String?
  /// The default value, if any.
  public var defaultValue: AttributeValue?
  /// The renaming identifier (Xcode's `elementID`): the name this attribute had in an earlier
  /// model version.
  public var renamingIdentifier: String?
  /// The version hash modifier.
  public var versionHashModifier: String?
  /// Whether large values may be stored outside the row (binary data).
  public var allowsExternalBinaryDataStorage: Bool
  /// Whether the value is kept in persistent history after the object is deleted.
  public var preservesValueInHistoryOnDeletion: Bool
  /// The value transformer's name (transformable attributes).
  public var valueTransformerName: String?
  /// The class of the transformed value (`customClassName` / `NSAttributeValueClassName`).
  public var valueClassName: String?
  /// The user info.
  public var userInfo: [String: String]
  /// A composite's elements (``AttributeType/composite``), each an attribute of its own (a
  /// composite again, for a nested one); empty for every other type.
  public var elements: [AttributeDescription]

  /// Creates an attribute.
  public init(
    name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
    isDerived: Bool = false, derivationExpression: String? = nil,
    defaultValue: AttributeValue? = nil, renamingIdentifier: String? = nil,
    versionHashModifier: String? = nil, allowsExternalBinaryDataStorage: Bool = false,
    preservesValueInHistoryOnDeletion: Bool = false, valueTransformerName: String? = nil,
    valueClassName: String? = nil, userInfo: [String: String] = [:],
    elements: [AttributeDescription] = []
  ) {
    self.name = name
    self.type = type
    self.isOptional = isOptional
    self.isTransient = isTransient
    self.isDerived = isDerived
    self.derivationExpression = derivationExpression
    self.defaultValue = defaultValue
    self.renamingIdentifier = renamingIdentifier
    self.versionHashModifier = versionHashModifier
    self.allowsExternalBinaryDataStorage = allowsExternalBinaryDataStorage
    self.preservesValueInHistoryOnDeletion = preservesValueInHistoryOnDeletion
    self.valueTransformerName = valueTransformerName
    self.valueClassName = valueClassName
    self.userInfo = userInfo
    self.elements = elements
  }

  /// Creates a composite attribute (``AttributeType/composite``) of `elements`.
  ///
  /// ```swift
  /// AttributeDescription(composite: "author", elements: [
  ///   AttributeDescription(name: "person", type: .string),
  ///   AttributeDescription(name: "year", type: .integer64),
  /// ])
  /// ```
  public init(
    composite name: String, elements: [AttributeDescription], isOptional: Bool = true,
    isTransient: Bool = false, renamingIdentifier: String? = nil,
    versionHashModifier: String? = nil, userInfo: [String: String] = [:]
  ) {
    self.init(
      name: name, type: .composite, isOptional: isOptional, isTransient: isTransient,
      renamingIdentifier: renamingIdentifier, versionHashModifier: versionHashModifier,
      valueClassName: "NSDictionary", userInfo: userInfo, elements: elements)
  }

  /// How deep composites may nest (a composite in a composite is depth 1): what a model file,
  /// a compiled model or a descriptor may hold, so that reading one is bounded.
  public static let maximumCompositeDepth = 16

  /// Throws when a composite at `depth` nests deeper than ``maximumCompositeDepth``.
  static func checkCompositeDepth(_ depth: Int, entity: String?, property: String)
    throws(ModelError)
  {
    guard depth >= maximumCompositeDepth else { return }
    throw ModelError(
      .unreadable, "composite attributes nest more than \(maximumCompositeDepth) deep",
      entity: entity, property: property)
  }

  /// Whether the attribute has a column in the store (not transient).
  public var isStored: Bool { !isTransient }

  /// Whether the attribute is a composite.
  public var isComposite: Bool { type == .composite }

  /// Whether this is an element of a composite as ``flattened`` hands it out: its name is a
  /// key path (`author.person`).
  public var isCompositeElement: Bool { name.contains(".") }

  /// The name of the column's own part: the last component of a composite element's key path
  /// (`person` for `author.person`), else the name. Core Data names an element's column after
  /// it alone.
  public var leafName: String {
    guard let dot = name.lastIndex(of: ".") else { return name }
    return String(name[name.index(after: dot)...])
  }

  /// The attributes whose values an object holds for this one: the attribute itself, or for a
  /// composite each of its elements (a nested composite's in turn), named by key path
  /// (`author.person`), as Core Data flattens a composite into one column per element.
  ///
  /// An element is optional when it or any composite around it is; it is transient when any
  /// of them is; its renaming identifier is the key path its names had in the earlier
  /// version, when the composite or the element was renamed.
  public var flattened: [AttributeDescription] {
    guard isComposite else { return [self] }
    return elements.flatMap { element(from: $0).flattened }
  }

  /// `element`, one of this composite's elements, as seen from the entity: named by its key
  /// path, optional or transient when it or this composite is, renamed by key path.
  func element(from element: AttributeDescription) -> AttributeDescription {
    var seen = element
    seen.name = name + "." + element.name
    seen.isOptional = element.isOptional || isOptional
    seen.isTransient = element.isTransient || isTransient
    if renamingIdentifier != nil || element.renamingIdentifier != nil {
      seen.renamingIdentifier =
        (renamingIdentifier ?? name) + "." + (element.renamingIdentifier ?? element.name)
    }
    return seen
  }
}
