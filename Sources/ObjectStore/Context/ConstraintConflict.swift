import ObjectModel

/// A save that would give two objects the same values of an entity's uniqueness constraint
/// (Core Data's `NSConstraintConflict`): the ``StoreError`` of kind
/// ``StoreError/Kind/constraintConflict`` carries it.
public struct ConstraintConflict: Error, Sendable, Equatable, CustomStringConvertible {
  /// The entity whose constraint it is (the object's own, or an ancestor's).
  public let entity: String
  /// The constraint's attributes.
  public let attributes: [String]
  /// Their values, as the object being saved holds them.
  public let values: [AttributeValue]
  /// The object being saved.
  public let object: ObjectReference
  /// The object that holds the same values: in the store, or also being saved.
  public let conflictingObject: ObjectReference
  /// Whether ``conflictingObject`` is in the store already (else it is being saved too).
  public let isStored: Bool

  /// Creates a conflict.
  public init(
    entity: String, attributes: [String], values: [AttributeValue], object: ObjectReference,
    conflictingObject: ObjectReference, isStored: Bool
  ) {
    self.entity = entity
    self.attributes = attributes
    self.values = values
    self.object = object
    self.conflictingObject = conflictingObject
    self.isStored = isStored
  }

  /// `Book's uniqueness constraint (isbn) …`, naming both objects.
  public var description: String {
    let pairs = zip(attributes, values).map { "\($0)=\($1)" }.joined(separator: ", ")
    return
      "\(object) would hold \(pairs), which \(conflictingObject) \(isStored ? "holds in the store" : "is being saved with") too: \(entity)'s uniqueness constraint (\(attributes.joined(separator: ", "))) allows one"
  }
}
