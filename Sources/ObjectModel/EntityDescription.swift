/// An index Core Data creates for fetches (`fetchIndex` in Xcode's model).
public struct FetchIndex: Hashable, Sendable, Codable {
  /// One property of the index.
  public struct Element: Hashable, Sendable, Codable {
    /// The property's name.
    public var property: String
    /// `Binary` (a B-tree) or `R-Tree`.
    public var kind: String
    /// Whether the order is ascending.
    public var ascending: Bool

    /// Creates an index element.
    public init(property: String, kind: String = "Binary", ascending: Bool = true) {
      self.property = property
      self.kind = kind
      self.ascending = ascending
    }
  }

  /// The index's name.
  public var name: String
  /// Its properties, in order.
  public var elements: [Element]

  /// Creates a fetch index.
  public init(name: String, elements: [Element]) {
    self.name = name
    self.elements = elements
  }
}

/// An entity: its own attributes and relationships (inherited ones live on its parent).
public struct EntityDescription: Hashable, Sendable, Codable {
  /// The entity's name.
  public var name: String
  /// The class that represents it (`representedClassName`), possibly module-qualified.
  public var className: String?
  /// Whether it is abstract (no instances of its own).
  public var isAbstract: Bool
  /// The parent entity's name, if any.
  public var parent: String?
  /// The renaming identifier (Xcode's `elementID`).
  public var renamingIdentifier: String?
  /// The version hash modifier.
  public var versionHashModifier: String?
  /// The user info.
  public var userInfo: [String: String]
  /// Uniqueness constraints, each a list of property names.
  public var uniquenessConstraints: [[String]]
  /// Fetch indexes.
  public var fetchIndexes: [FetchIndex]
  /// The entity's own attributes.
  public var attributes: [AttributeDescription]
  /// The entity's own relationships.
  public var relationships: [RelationshipDescription]
  /// Apple's entity version hash (32 bytes), when the model came from Core Data (a compiled
  /// model or a store). Opaque: carried over, never computed.
  public var versionHash: [UInt8]?

  /// Creates an entity.
  public init(
    name: String, className: String? = nil, isAbstract: Bool = false, parent: String? = nil,
    renamingIdentifier: String? = nil, versionHashModifier: String? = nil,
    userInfo: [String: String] = [:], uniquenessConstraints: [[String]] = [],
    fetchIndexes: [FetchIndex] = [], attributes: [AttributeDescription] = [],
    relationships: [RelationshipDescription] = [], versionHash: [UInt8]? = nil
  ) {
    self.name = name
    self.className = className
    self.isAbstract = isAbstract
    self.parent = parent
    self.renamingIdentifier = renamingIdentifier
    self.versionHashModifier = versionHashModifier
    self.userInfo = userInfo
    self.uniquenessConstraints = uniquenessConstraints
    self.fetchIndexes = fetchIndexes
    self.attributes = attributes
    self.relationships = relationships
    self.versionHash = versionHash
  }

  /// The own attribute named `name`; for a key path into a composite (`author.person`), that
  /// element as ``AttributeDescription/flattened`` hands it out.
  public func attribute(named name: String) -> AttributeDescription? {
    guard let dot = name.firstIndex(of: ".") else { return attributes.first { $0.name == name } }
    guard let composite = attributes.first(where: { $0.name == name[..<dot] }),
      composite.isComposite
    else { return nil }
    // Down the key path, one element at a time (a nested composite is named too).
    var current = composite
    while current.name != name {
      guard
        let next = current.elements.lazy.map({ current.element(from: $0) }).first(where: {
          name == $0.name || name.hasPrefix($0.name + ".")
        })
      else { return nil }
      current = next
    }
    return current
  }

  /// The own relationship named `name`.
  public func relationship(named name: String) -> RelationshipDescription? {
    relationships.first { $0.name == name }
  }
}
