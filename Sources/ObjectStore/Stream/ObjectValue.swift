import ObjectModel

/// One object in the object stream, in its model's terms: its entity, primary key, version,
/// attribute values and links by relationship name (with their order), values kept as stored
/// by attribute name, and apart from them the columns its model does not describe.
///
/// What a stage of the stream (a migration's hop, an app's ``perObject`` code) sees and
/// changes; only the store's side and the archive codec translate it to and from columns
/// (``StoredShape``).
///
/// A link is carried by the object whose row (or join-table rows) stored it: a to-one's
/// object, or the owner of a many-to-many join table. Where both sides of a one-to-one store
/// it, both carry it and the link is marked ``ObjectLink/isMirrored``.
public struct ObjectValue: Sendable, Equatable {
  /// The concrete entity's name.
  public var entity: String
  /// The primary key (`Z_PK`).
  public var primaryKey: Int64
  /// The optimistic-lock version (`Z_OPT`).
  public var version: Int64
  /// Attribute values by name; nil values are absent.
  public var attributes: [String: AttributeValue]
  /// Links by relationship name.
  public var relationships: [String: [ObjectLink]]
  /// Attribute values stored in another storage class than their type's, kept as stored, by
  /// attribute name.
  public var storedAsIs: [String: AttributeValue]
  /// The owners of this object through to-many relationships without an inverse, whose links
  /// its row keeps (a `Z<n><NAME>` column).
  public var owners: [OwnerLink]
  /// Values in columns of the object's row that its model does not describe, by column, as
  /// stored. A migration drops them (and counts them in its report).
  public var unmodelled: [String: AttributeValue]

  /// An owner of an object through a to-many relationship without an inverse.
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
    attributes: [String: AttributeValue] = [:], relationships: [String: [ObjectLink]] = [:]
  ) {
    self.entity = entity
    self.primaryKey = primaryKey
    self.version = version
    self.attributes = attributes
    self.relationships = relationships
    self.storedAsIs = [:]
    self.owners = []
    self.unmodelled = [:]
  }

  /// The object's reference.
  public var reference: ObjectReference { ObjectReference(entity: entity, primaryKey: primaryKey) }
}
