import ObjectModel
import ObjectStore

/// One object on its way through a migration: its entity, primary key, attribute values and
/// the relationship links it carries, in the shape of the model version it has reached.
///
/// A link is carried by the object whose row (or join-table rows) stored it in the archive: a
/// to-one's object, or the owner of a many-to-many join table. Where both sides of a
/// one-to-one store it, both carry it and the link is marked ``MigrationLink/isMirrored``.
public struct MigratingObject: Sendable, Equatable {
  /// The concrete entity's name in the current version.
  public var entity: String
  /// The primary key (`Z_PK`), kept across versions.
  public var primaryKey: Int64
  /// The optimistic-lock version (`Z_OPT`).
  public var version: Int64
  /// Attribute values by name; nil values are absent.
  public var attributes: [String: AttributeValue]
  /// Links by relationship name.
  public var relationships: [String: [MigrationLink]]
  /// Attribute values stored in another storage class than their type's, kept as stored, by
  /// attribute name.
  public var storedAsIs: [String: AttributeValue]
  /// The owners of this object through to-many relationships without an inverse, whose links
  /// its row keeps (a `Z<n><NAME>` column).
  public var owners: [OwnerLink]

  /// An owner of a migrating object through a to-many relationship without an inverse.
  public struct OwnerLink: Sendable, Equatable {
    /// The owner: its entity is the one that declares the relationship (the row's column does
    /// not tell which sub-entity it is), its primary key the one the row keeps.
    public var owner: ObjectReference
    /// The owner's relationship.
    public var relationship: String
    /// The object's place in the relationship, when ordered.
    public var order: Int64?

    /// Creates an owner link.
    public init(owner: ObjectReference, relationship: String, order: Int64? = nil) {
      self.owner = owner
      self.relationship = relationship
      self.order = order
    }
  }

  /// Creates an object.
  public init(
    entity: String, primaryKey: Int64, version: Int64 = 1,
    attributes: [String: AttributeValue] = [:], relationships: [String: [MigrationLink]] = [:]
  ) {
    self.entity = entity
    self.primaryKey = primaryKey
    self.version = version
    self.attributes = attributes
    self.relationships = relationships
    self.storedAsIs = [:]
    self.owners = []
  }

  /// The object's reference.
  public var reference: ObjectReference { ObjectReference(entity: entity, primaryKey: primaryKey) }
}

/// A link from a migrating object to another object.
public struct MigrationLink: Sendable, Equatable {
  /// The destination.
  public var target: ObjectReference
  /// The order key, for ordered to-many relationships.
  public var order: Int64?
  /// Whether the destination carries the same link back (a one-to-one stored on both sides).
  public var isMirrored: Bool

  /// Creates a link.
  public init(target: ObjectReference, order: Int64? = nil, isMirrored: Bool = false) {
    self.target = target
    self.order = order
    self.isMirrored = isMirrored
  }
}
