/// The credentials requests are signed with, from the standard AWS environment.
public struct S3Credentials: Sendable, Equatable {
  /// `AWS_ACCESS_KEY_ID`.
  public let accessKeyID: String
  /// `AWS_SECRET_ACCESS_KEY` (never printed).
  public let secretAccessKey: String
  /// `AWS_SESSION_TOKEN`, for temporary credentials.
  public let sessionToken: String?

  /// Credentials from their parts.
  public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
    self.accessKeyID = accessKeyID
    self.secretAccessKey = secretAccessKey
    self.sessionToken = sessionToken
  }
}
