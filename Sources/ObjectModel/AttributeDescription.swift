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

  /// Creates an attribute.
  public init(
    name: String, type: AttributeType, isOptional: Bool = true, isTransient: Bool = false,
    isDerived: Bool = false, derivationExpression: String? = nil,
    defaultValue: AttributeValue? = nil, renamingIdentifier: String? = nil,
    versionHashModifier: String? = nil, allowsExternalBinaryDataStorage: Bool = false,
    preservesValueInHistoryOnDeletion: Bool = false, valueTransformerName: String? = nil,
    valueClassName: String? = nil, userInfo: [String: String] = [:]
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
  }

  /// Whether the attribute has a column in the store (not transient).
  public var isStored: Bool { !isTransient }
}
