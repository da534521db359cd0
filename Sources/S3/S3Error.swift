/// A failed request to object storage, naming the bucket and key, with S3's error code.
public struct S3Error: Error, CustomStringConvertible, Sendable {
  /// What a caller must do about it.
  public enum Kind: Sendable, Equatable {
    /// No such bucket, key or upload.
    case notFound
    /// The credentials were refused, or lack the permission.
    case denied
    /// Transient failures, retried until the tries ran out.
    case unavailable
    /// The configuration is wrong (no credentials, a malformed URL).
    case configuration
    /// Anything else the service refused.
    case failed
  }

  /// What a caller must do about it.
  public let kind: Kind
  /// The HTTP status, when there was a response.
  public let status: Int?
  /// S3's error code (`NoSuchBucket`, `AccessDenied`, …), when it sent one.
  public let code: String?
  /// A sentence saying what failed, naming the bucket and key.
  public let detail: String

  /// Creates an error.
  public init(_ kind: Kind, _ detail: String, status: Int? = nil, code: String? = nil) {
    self.kind = kind
    self.detail = detail
    self.status = status
    self.code = code
  }

  /// The detail.
  public var description: String { detail }
}
