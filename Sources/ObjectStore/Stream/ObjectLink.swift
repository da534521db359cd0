/// A link from an object of the object stream to another object (``ObjectValue``).
public struct ObjectLink: Sendable, Equatable {
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
