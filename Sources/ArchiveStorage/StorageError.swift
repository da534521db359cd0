/// A failure of the place archives are kept, naming the location and the archive.
public struct StorageError: Error, CustomStringConvertible, Sendable {
  /// What kind of failure it is.
  public enum Kind: Sendable, Equatable {
    /// No archive (or folder, or bucket) by that name.
    case notFound
    /// An archive by that name exists already.
    case exists
    /// What is there is not an archive (a folder, a device).
    case notAnArchive
    /// The archive is there, but this process may not read it.
    case unreadable
    /// Another run holds the lock.
    case locked
    /// Reading or writing failed (for object storage, after its retries).
    case io
    /// The credentials were refused, or lack the permission.
    case denied
    /// The place is misconfigured (no credentials, a malformed endpoint).
    case configuration
  }

  /// What kind of failure it is.
  public let kind: Kind
  /// A sentence saying what is wrong, naming the location.
  public let detail: String

  /// Creates an error.
  public init(_ kind: Kind, _ detail: String) {
    self.kind = kind
    self.detail = detail
  }

  /// The detail.
  public var description: String { detail }
}
