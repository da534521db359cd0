import Foundation
import S3
import TestSupport
import Testing

@Suite("Signature Version 4")
struct SigV4SignerTests {
  /// The credentials of AWS's SigV4 test suite.
  static let suite = SigV4Signer(
    credentials: S3Credentials(
      accessKeyID: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
    region: "us-east-1", service: "service")
  static let suiteDate = Date(timeIntervalSince1970: 1_440_938_160)  // 2015-08-30T12:36:00Z

  static func signature(_ headers: [String: String]) -> String? {
    headers["Authorization"]?.components(separatedBy: "Signature=").last
  }

  @Test func theTestSuitesGetAndPostVanillaSignAsPublished() {
    let url = URL(string: "https://example.amazonaws.com/")!
    let get = Self.suite.signedHeaders(
      method: "GET", url: url, payloadHash: SigV4Signer.emptyPayloadHash, date: Self.suiteDate,
      includeContentHash: false)
    #expect(
      get["Authorization"]
        == "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
    )
    #expect(get["x-amz-date"] == "20150830T123600Z")
    let post = Self.suite.signedHeaders(
      method: "POST", url: url, payloadHash: SigV4Signer.emptyPayloadHash, date: Self.suiteDate,
      includeContentHash: false)
    #expect(
      Self.signature(post) == "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b")
  }

  @Test func theS3ReferencesGetObjectExampleSignsAsPublished() {
    // Amazon S3 API Reference, "Signature Calculations for the Authorization Header",
    // Example: GET Object (the first ten bytes of test.txt in examplebucket).
    let signer = SigV4Signer(
      credentials: S3Credentials(
        accessKeyID: "AKIAIOSFODNN7EXAMPLE",
        secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
      region: "us-east-1")
    let headers = signer.signedHeaders(
      method: "GET", url: URL(string: "https://examplebucket.s3.amazonaws.com/test.txt")!,
      headers: ["Range": "bytes=0-9"], payloadHash: SigV4Signer.emptyPayloadHash,
      date: Date(timeIntervalSince1970: 1_369_353_600))  // 2013-05-24T00:00:00Z
    #expect(
      headers["Authorization"]
        == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
    )
  }

  /// botocore's signer (an independent implementation), when Python has it.
  static let botocoreSigns = """
    import sys, json, datetime
    from unittest import mock
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
    spec = json.load(sys.stdin)
    creds = Credentials(spec["key"], spec["secret"], spec.get("token"))
    request = AWSRequest(method=spec["method"], url=spec["url"], data=bytes.fromhex(spec["body"]), headers=spec["headers"])
    auth = S3SigV4Auth(creds, "s3", spec["region"])
    moment = datetime.datetime(2026, 11, 22, 3, 15, 0)
    with mock.patch("botocore.auth.get_current_datetime", return_value=moment):
        auth.add_auth(request)
    print(request.headers["Authorization"])
    """

  @Test(
    arguments: [
      (
        "GET", "http://127.0.0.1:9000/backups/?list-type=2&prefix=nightly%2F&delimiter=%2F", "", nil
      ),
      (
        "PUT",
        "http://127.0.0.1:9000/backups/nightly/Library-20261122T031500.000Z.gvault?partNumber=3&uploadId=a%2Bb%3Dc",
        "00ff10", nil
      ),
      (
        "POST", "https://backups.s3.eu-west-1.amazonaws.com/a%20b/c.gvault?uploads", "",
        "session-token"
      ),
      ("DELETE", "https://backups.s3.eu-west-1.amazonaws.com/k~e_y-1.gvault", "", nil),
    ] as [(String, String, String, String?)])
  func requestsSignAsBotocoreSignsThem(method: String, url: String, body: String, token: String?)
    throws
  {
    let probe = try Subprocess.python("import botocore")
    try #require(probe.status == 0, "botocore is not installed: skipped")
    let region = url.contains("eu-west-1") ? "eu-west-1" : "us-east-1"
    let credentials = S3Credentials(
      accessKeyID: "AKIAEXAMPLEKEY", secretAccessKey: "secret/with+chars", sessionToken: token)
    let bytes = stride(from: 0, to: body.count, by: 2).map {
      UInt8(body[body.index(body.startIndex, offsetBy: $0)...].prefix(2), radix: 16)!
    }
    let signer = SigV4Signer(credentials: credentials, region: region)
    let headers = signer.signedHeaders(
      method: method, url: URL(string: url)!, payloadHash: SigV4Signer.payloadHash(bytes),
      date: Date(timeIntervalSince1970: 1_795_317_300))  // 2026-11-22T03:15:00Z
    let spec: [String: Any] = [
      "method": method, "url": url, "body": body, "region": region, "key": "AKIAEXAMPLEKEY",
      "secret": "secret/with+chars", "token": token as Any,
      "headers": ["x-amz-content-sha256": SigV4Signer.payloadHash(bytes)],
    ]
    let result = try Subprocess.python(
      Self.botocoreSigns, input: [UInt8](try JSONSerialization.data(withJSONObject: spec)))
    #expect(result.status == 0, "\(result.stderr)")
    #expect(
      Self.signature(headers)
        == result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        .components(separatedBy: "Signature=").last, "\(method) \(url)")
  }
}
