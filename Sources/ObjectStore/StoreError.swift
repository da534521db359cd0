/// An error reading, creating or writing a Core Data store, with the store's path and the
/// lower-layer cause.
public struct StoreError: Error, CustomStringConvertible, Sendable {
  /// What went wrong.
  public enum Kind: Sendable, Equatable {
    /// The store file does not exist or cannot be opened.
    case missing
    /// The file is not an SQLite database.
    case notADatabase
    /// The database is not in Core Data's layout (no `Z_PRIMARYKEY`/`Z_METADATA`, …).
    case notACoreDataStore
    /// The model does not describe this store.
    case modelMismatch
    /// The destination exists already.
    case destinationExists
    /// The model uses something the store layer cannot create (an unsupported derivation, …).
    case unsupported
    /// SQLite failed (the cause says how).
    case database
    /// An object failed validation on save (a required value missing, a count out of range).
    case validation
    /// A value does not fit its attribute, or a property does not exist.
    case invalidValue
    /// A save refused a delete: a Deny relationship of the deleted object still holds an
    /// object.
    case deleteDenied
    /// Another writer changed an object since it was read (optimistic locking).
    case conflict
    /// A save would give two objects the same values of a uniqueness constraint
    /// (``StoreError/constraintConflict`` says which).
    case constraintConflict
    /// A predicate is malformed, names an unknown key, or misuses an operator (the underlying
    /// ``PredicateFormatError`` says where).
    case invalidPredicate
  }

  /// What went wrong.
  public let kind: Kind
  /// A sentence with the details.
  public let detail: String
  /// The store's path, when known.
  public let path: String?
  /// The lower-layer error, if any.
  public let underlying: (any Error & Sendable)?

  /// Creates an error from its parts.
  public init(
    _ kind: Kind, _ detail: String, path: String? = nil, underlying: (any Error & Sendable)? = nil
  ) {
    self.kind = kind
    self.detail = detail
    self.path = path
    self.underlying = underlying
  }

  /// For ``Kind/constraintConflict``: the entity, the constraint and both objects.
  public var constraintConflict: ConstraintConflict? { underlying as? ConstraintConflict }

  /// A one-line description naming the store and the cause.
  public var description: String {
    var text = detail
    if let path { text += " (\(path))" }
    // A detail made from the underlying error's own description says it once.
    if let underlying, case let cause = "\(underlying)", !text.contains(cause) {
      text += ": \(cause)"
    }
    return text
  }
}
