import ObjectModel
import PropertyList

/// An object as a class-tagged dictionary: its entity, its primary key, its attribute values,
/// its extended attributes and its relationships as references (entity and key), never as nested objects, so a graph with
/// cycles converts without any "already visited" flag, as many times as wanted.
///
/// ``ManagedObject/dictionary()`` makes one; ``ObjectContext/insert(_:)``
/// creates an object from one and ``ManagedObject/populate(from:)`` updates one.
public struct ObjectDictionary: Hashable, Sendable {
  /// A reference to an object: by primary key, or by values of attributes that pick out exactly
  /// one object (a natural key, such as a uniqueness constraint's attributes).
  public struct Reference: Hashable, Sendable, CustomStringConvertible {
    /// The entity (or one of its super-entities).
    public var entity: String
    /// The primary key, when the reference is by key.
    public var primaryKey: Int64?
    /// Attribute values that pick out the object, when the reference has no primary key.
    public var naturalKey: [String: AttributeValue]

    /// A reference by primary key.
    public init(entity: String, primaryKey: Int64) {
      self.entity = entity
      self.primaryKey = primaryKey
      naturalKey = [:]
    }

    /// A reference by natural key (`["firstName": .string("Ann"), "lastName": …]`).
    public init(entity: String, naturalKey: [String: AttributeValue]) {
      self.entity = entity
      primaryKey = nil
      self.naturalKey = naturalKey
    }

    /// A reference to a stored object.
    public init(_ reference: ObjectReference) {
      self.init(entity: reference.entity, primaryKey: reference.primaryKey)
    }

    /// `Book/p12`, or `Person(firstName: "Ann", lastName: "Lee")`.
    public var description: String {
      if let primaryKey { return "\(entity)/p\(primaryKey)" }
      let pairs = naturalKey.sorted { $0.key < $1.key }.map {
        "\($0.key): \(ObjectDictionary.text($0.value))"
      }
      return "\(entity)(\(pairs.joined(separator: ", ")))"
    }

  }

  /// The entity's name (the "class").
  public var entity: String
  /// The primary key; nil for an object yet to be created with a fresh key.
  public var primaryKey: Int64?
  /// Attribute values by name; a `nil` value empties the attribute when populating.
  public var attributes: [String: AttributeValue?]
  /// To-one relationships by name; a `nil` value empties the relationship when populating.
  public var toOne: [String: Reference?]
  /// To-many relationships by name, in order for ordered ones.
  public var toMany: [String: [Reference]]
  /// Extended attributes (kept in the entity's bucket) by key; a `nil` value removes the key
  /// when populating.
  public var extended: [String: PropertyListValue?]

  /// Creates a dictionary.
  public init(
    entity: String, primaryKey: Int64? = nil, attributes: [String: AttributeValue?] = [:],
    toOne: [String: Reference?] = [:], toMany: [String: [Reference]] = [:],
    extended: [String: PropertyListValue?] = [:]
  ) {
    self.entity = entity
    self.primaryKey = primaryKey
    self.attributes = attributes
    self.toOne = toOne
    self.toMany = toMany
    self.extended = extended
  }
}
