import ObjectModel

/// The value of one property of an object, as change tracking reports it
/// (``ManagedObject/changedValues()``, ``ManagedObject/committedValues(forKeys:)``).
public enum PropertyValue: Sendable, Equatable {
  /// An attribute's value (nil when it has none).
  case attribute(AttributeValue?)
  /// The object a to-one relationship points at (nil when empty).
  case toOne(ObjectReference?)
  /// The objects of a to-many relationship, in order (ordered ones) or by primary key.
  case toMany([ObjectReference])
}
