import Foundation

/// Where and as whom to reach object storage: from the standard AWS environment, so that the
/// same job runs against AWS, MinIO, Ceph, R2 or Garage.
public struct S3Configuration: Sendable {
  /// The credentials.
  public let credentials: S3Credentials
  /// The region (`AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`).
  public let region: String
  /// A custom endpoint (`AWS_ENDPOINT_URL_S3`, else `AWS_ENDPOINT_URL`), reached with
  /// path-style addressing; nil for AWS itself, reached virtual-hosted style.
  public let endpoint: URL?
  /// How many times a request is tried before a transient failure is final.
  public var attempts = 6
  /// The first pause between tries, doubled each time (with jitter), in seconds.
  public var backoff = 0.2

  /// A configuration from its parts.
  public init(credentials: S3Credentials, region: String, endpoint: URL?) {
    self.credentials = credentials
    self.region = region
    self.endpoint = endpoint
  }

  /// The configuration the environment describes.
  /// - Throws: ``S3Error`` (``S3Error/Kind/configuration``) without credentials, or with an
  ///   endpoint that is not an http(s) URL.
  public static func fromEnvironment(_ environment: [String: String]) throws(S3Error)
    -> S3Configuration
  {
    func value(_ name: String) -> String? {
      environment[name].flatMap { $0.isEmpty ? nil : $0 }
    }
    guard let key = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") else {
      throw S3Error(
        .configuration,
        "no credentials for object storage: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
    }
    var endpoint: URL?
    if let text = value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL") {
      guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https",
        url.host != nil
      else {
        throw S3Error(.configuration, "the endpoint is not an http(s) URL: \(text)")
      }
      endpoint = url
    }
    return S3Configuration(
      credentials: S3Credentials(
        accessKeyID: key, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN")),
      region: value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? "us-east-1",
      endpoint: endpoint)
  }

  /// The URL of `key` in `bucket` (the bucket itself when `key` is empty), with `query`.
  public func url(bucket: String, key: String, query: [(String, String)] = []) -> URL {
    var text: String
    let path = SigV4Signer.encode(key, keepingSlashes: true)
    if let endpoint {
      var base = endpoint.absoluteString
      while base.hasSuffix("/") { base.removeLast() }
      text = "\(base)/\(SigV4Signer.encode(bucket))/\(path)"
    } else {
      text = "https://\(bucket).s3.\(region).amazonaws.com/\(path)"
    }
    if !query.isEmpty {
      text +=
        "?"
        + query.map {
          $0.1.isEmpty
            ? SigV4Signer.encode($0.0) : "\(SigV4Signer.encode($0.0))=\(SigV4Signer.encode($0.1))"
        }
        .joined(separator: "&")
    }
    return URL(string: text)!
  }
}
