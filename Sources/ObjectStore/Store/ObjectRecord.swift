import ObjectModel

/// A reference to an object in a store: its entity and primary key.
public struct ObjectReference: Hashable, Sendable, CustomStringConvertible {
  /// The concrete entity's name.
  public let entity: String
  /// The primary key (`Z_PK`).
  public let primaryKey: Int64

  /// Creates a reference.
  public init(entity: String, primaryKey: Int64) {
    self.entity = entity
    self.primaryKey = primaryKey
  }

  /// `Entity/p<pk>`, as Core Data's object URIs end.
  public var description: String { "\(entity)/p\(primaryKey)" }

  /// Hashes the key and the entity name's length, not its characters: contexts and sets hash
  /// references by the hundred thousand, and equal keys of other entities are rare enough for
  /// equality to tell them apart.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(primaryKey)
    hasher.combine(entity.utf8.count)
  }
}

/// One object as read from a store: its entity, primary key, optimistic-lock version, stored
/// attribute values (absent = nil) and to-one references (absent = nil). To-many relationships
/// are the inverse of to-ones, or rows of join tables, and are read separately.
package struct ObjectRecord: Sendable, Equatable {
  /// The concrete entity's name.
  package var entity: String
  /// The primary key (`Z_PK`).
  package var primaryKey: Int64
  /// The optimistic-lock version (`Z_OPT`).
  package var version: Int64
  /// Attribute values by name; nil values are absent.
  package var attributes: [String: AttributeValue]
  /// To-one references by relationship name; empty relationships are absent.
  package var toOne: [String: ObjectReference]
  /// Values the model does not describe, by column, in their stored form (integer, double,
  /// string or data): order keys, columns the model lacks, and attribute values whose storage
  /// class does not match their type. NULLs are absent. With them a row can be restored exactly.
  package var extraColumns: [String: AttributeValue] = [:]

  /// Creates a record.
  package init(
    entity: String, primaryKey: Int64, version: Int64 = 1,
    attributes: [String: AttributeValue] = [:], toOne: [String: ObjectReference] = [:]
  ) {
    self.entity = entity
    self.primaryKey = primaryKey
    self.version = version
    self.attributes = attributes
    self.toOne = toOne
  }

  /// The object's reference.
  package var reference: ObjectReference { ObjectReference(entity: entity, primaryKey: primaryKey) }
}
