import Crypto
import Foundation

/// AWS Signature Version 4 (header-based, single-chunk payloads), as S3 and every service that
/// speaks its API check it: a canonical request, a string to sign, a signing key derived from
/// the secret by date, region and service, and the `Authorization` header.
public struct SigV4Signer: Sendable {
  /// The credentials requests are signed with.
  public let credentials: S3Credentials
  /// The region (`us-east-1`).
  public let region: String
  /// The service (`s3`).
  public let service: String

  /// A signer for `service` in `region`.
  public init(credentials: S3Credentials, region: String, service: String = "s3") {
    self.credentials = credentials
    self.region = region
    self.service = service
  }

  /// The SHA-256 of an empty payload, in hex.
  public static let emptyPayloadHash =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

  /// The hex SHA-256 of `payload`.
  public static func payloadHash(_ payload: some DataProtocol) -> String {
    hex(SHA256.hash(data: payload))
  }

  /// The headers to add to a request so that it is signed: `x-amz-date`,
  /// `x-amz-content-sha256` (unless `includeContentHash` is false, as outside S3),
  /// `x-amz-security-token` with a session token, and `Authorization`.
  /// - Parameters:
  ///   - method: the HTTP method.
  ///   - url: the URL as sent (its percent-encoded path and query are signed as they are).
  ///   - headers: the other headers to sign (names in any case; `host` is added from `url`).
  ///   - payloadHash: the hex SHA-256 of the body (or `UNSIGNED-PAYLOAD`).
  ///   - date: the signing time.
  public func signedHeaders(
    method: String, url: URL, headers: [String: String] = [:], payloadHash: String,
    date: Date, includeContentHash: Bool = true
  ) -> [String: String] {
    let amzDate = Self.amzDate(date)
    var added: [String: String] = ["x-amz-date": amzDate]
    if includeContentHash { added["x-amz-content-sha256"] = payloadHash }
    if let token = credentials.sessionToken { added["x-amz-security-token"] = token }
    var signed: [String: String] = [:]
    for (name, value) in headers.merging(added, uniquingKeysWith: { $1 }) {
      signed[name.lowercased()] = value
    }
    signed["host"] = Self.host(of: url)
    let names = signed.keys.sorted()
    let canonicalHeaders = names.map { "\($0):\(Self.trimmed(signed[$0]!))\n" }.joined()
    let signedNames = names.joined(separator: ";")
    let canonicalRequest = [
      method, Self.canonicalPath(url), Self.canonicalQuery(url), canonicalHeaders, signedNames,
      payloadHash,
    ].joined(separator: "\n")
    let day = String(amzDate.prefix(8))
    let scope = "\(day)/\(region)/\(service)/aws4_request"
    let stringToSign = [
      "AWS4-HMAC-SHA256", amzDate, scope, Self.payloadHash(Array(canonicalRequest.utf8)),
    ].joined(separator: "\n")
    var key = SymmetricKey(data: Array("AWS4\(credentials.secretAccessKey)".utf8))
    for part in [day, region, service, "aws4_request"] {
      key = SymmetricKey(data: HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key))
    }
    let signature = Self.hex(
      HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key))
    added["Authorization"] =
      "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope), "
      + "SignedHeaders=\(signedNames), Signature=\(signature)"
    return added
  }

  /// `20150830T123600Z`.
  static func amzDate(_ date: Date) -> String {
    var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
    var parts = tm()
    gmtime_r(&seconds, &parts)
    func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
    return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
      + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
  }

  /// The `Host` header a client sends for `url`: the host, with the port when it is not the
  /// scheme's default.
  static func host(of url: URL) -> String {
    let host = url.host ?? ""
    guard let port = url.port else { return host }
    let usual = url.scheme == "https" ? 443 : 80
    return port == usual ? host : "\(host):\(port)"
  }

  /// The path as sent (already percent-encoded), `/` when empty.
  static func canonicalPath(_ url: URL) -> String {
    let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
    let path = components?.percentEncodedPath ?? ""
    return path.isEmpty ? "/" : path
  }

  /// The query's pairs, each name and value encoded as AWS encodes them, sorted by name then
  /// value, joined with `&`.
  static func canonicalQuery(_ url: URL) -> String {
    guard let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery,
      !query.isEmpty
    else { return "" }
    let pairs = query.split(separator: "&").map { pair -> (String, String) in
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
      let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? "") : ""
      return (encode(name), encode(value))
    }
    return pairs.sorted { $0.0 == $1.0 ? $0.1 < $1.1 : $0.0 < $1.0 }
      .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
  }

  /// RFC 3986 encoding: everything but unreserved characters (`A–Z a–z 0–9 - _ . ~`).
  public static func encode(_ text: String, keepingSlashes: Bool = false) -> String {
    var result = ""
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"),
        UInt8(ascii: "."), UInt8(ascii: "~"):
        result.append(Character(UnicodeScalar(byte)))
      case UInt8(ascii: "/") where keepingSlashes:
        result.append("/")
      default:
        result += String(format: "%%%02X", byte)
      }
    }
    return result
  }

  private static func trimmed(_ value: String) -> String {
    value.split(whereSeparator: { $0 == " " || $0 == "\t" }).joined(separator: " ")
  }

  private static func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { String(format: "%02x", $0) }.joined()
  }
}
