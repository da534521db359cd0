import ObjectStore

/// Why a migration cannot go on: it was refused as asked (no path between the versions, a rule
/// that does not fit, an object or value the target refuses, a malformed mapping file), a
/// mapping file could not be read, or writing the new store failed.
public struct MigrationError: Error, CustomStringConvertible, Sendable {
  /// What kind of failure it is.
  public enum Kind: Sendable, Equatable {
    /// The models, the mapping or an object do not allow the migration; the detail says which
    /// and what would.
    case refused
    /// The mapping file cannot be read.
    case unreadableMapping
    /// The new store could not be written; ``MigrationError/cause`` says why.
    case store
  }

  /// What kind of failure it is.
  public let kind: Kind
  /// A sentence saying what is wrong, naming the versions, entity, object or key.
  public let detail: String
  /// The store layer's error, when writing the new store failed.
  public let cause: StoreError?

  /// Creates an error.
  public init(_ kind: Kind, _ detail: String, cause: StoreError? = nil) {
    self.kind = kind
    self.detail = detail
    self.cause = cause
  }

  /// Carries a lower layer's error: a ``MigrationError`` as it is, a ``StoreError`` as the
  /// cause of a ``Kind/store`` failure.
  init(wrapping error: any Error) {
    switch error {
    case let error as MigrationError: self = error
    case let error as StoreError: self.init(.store, error.description, cause: error)
    default: self.init(.store, String(describing: error))
    }
  }

  /// The detail (which already names what is wrong).
  public var description: String { detail }
}
