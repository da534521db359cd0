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
    return composite.flattened.first { $0.name == name }
      ?? Self.nestedComposite(name, in: composite)
  }

  /// A composite nested in `composite`, named by its key path (`author.address`).
  private static func nestedComposite(_ path: String, in composite: AttributeDescription)
    -> AttributeDescription?
  {
    for element in composite.elements where element.isComposite {
      var nested = element
      nested.name = composite.name + "." + element.name
      nested.isOptional = element.isOptional || composite.isOptional
      if nested.name == path { return nested }
      if path.hasPrefix(nested.name + "."), let found = nestedComposite(path, in: nested) {
        return found
      }
    }
    return nil
  }

  /// The attributes whose values the entity's objects hold, each composite replaced by its
  /// elements (``AttributeDescription/flattened``), sorted by name.
  public var flattenedAttributes: [AttributeDescription] {
    attributes.flatMap(\.flattened).sorted { $0.name < $1.name }
  }

  /// The own relationship named `name`.
  public func relationship(named name: String) -> RelationshipDescription? {
    relationships.first { $0.name == name }
  }
}
