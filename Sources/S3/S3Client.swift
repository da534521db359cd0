import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A small synchronous S3 client: the requests graphvault needs (list, head, ranged get, put,
/// delete, multipart upload), signed with ``SigV4Signer``, sent with `URLSession`, and retried
/// with exponential backoff when the failure is transient (a reset or timed-out connection,
/// HTTP 500, 502, 503, 504, `SlowDown`, `RequestTimeout`). Permanent failures (403, 404,
/// `NoSuchBucket`) are thrown at once.
public final class S3Client: @unchecked Sendable {
  /// One response.
  public struct Response: Sendable {
    /// The HTTP status.
    public let status: Int
    /// The headers, names lowercased.
    public let headers: [String: String]
    /// The body.
    public let body: Data
  }

  /// The configuration.
  public let configuration: S3Configuration
  private let signer: SigV4Signer
  /// Guarded by `guardian`: replaced after a transient failure, so that a retry never rides a
  /// connection the failure left in doubt.
  private var session: URLSession
  private let guardian = NSLock()

  /// A client for `configuration`.
  public init(configuration: S3Configuration) {
    self.configuration = configuration
    signer = SigV4Signer(credentials: configuration.credentials, region: configuration.region)
    session = Self.makeSession()
  }

  deinit { session.finishTasksAndInvalidate() }

  private static func makeSession() -> URLSession {
    let settings = URLSessionConfiguration.ephemeral
    settings.timeoutIntervalForRequest = 60
    settings.httpMaximumConnectionsPerHost = 4
    settings.requestCachePolicy = .reloadIgnoringLocalCacheData
    return URLSession(configuration: settings)
  }

  private func renewSession() {
    guardian.withLock {
      session.finishTasksAndInvalidate()
      session = Self.makeSession()
    }
  }

  /// Sends a signed request, retrying transient failures.
  /// - Parameters:
  ///   - what: what the request does, for messages ("upload part 3 of s3://b/k").
  ///   - accept: statuses that are not failures (2xx always are).
  /// - Throws: ``S3Error``.
  public func send(
    _ method: String, bucket: String, key: String = "", query: [(String, String)] = [],
    headers: [String: String] = [:], body: Data = Data(), what: String,
    accept: Set<Int> = []
  ) throws(S3Error) -> Response {
    let url = configuration.url(bucket: bucket, key: key, query: query)
    let payloadHash = SigV4Signer.payloadHash(body)
    var pause = configuration.backoff
    var lastFailure = ""
    for attempt in 1...max(1, configuration.attempts) {
      var request = URLRequest(url: url)
      request.httpMethod = method
      let signed = signer.signedHeaders(
        method: method, url: url, headers: headers, payloadHash: payloadHash, date: Date())
      for (name, value) in headers.merging(signed, uniquingKeysWith: { $1 }) {
        request.setValue(value, forHTTPHeaderField: name)
      }
      if !body.isEmpty || method == "PUT" || method == "POST" {
        request.httpBody = body
        if headers["Content-Type"] == nil {
          request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        }
      }
      switch perform(request) {
      case .success(let response):
        if (200..<300).contains(response.status) || accept.contains(response.status) {
          return response
        }
        let (code, message) = Self.errorCode(response.body)
        let failure = Self.classify(status: response.status, code: code)
        if failure != .unavailable {
          throw S3Error(
            failure, Self.describe(what, status: response.status, code: code, message: message),
            status: response.status, code: code)
        }
        lastFailure = Self.describe(what, status: response.status, code: code, message: message)
      case .failure(let error):
        lastFailure = "\(what): \(error.localizedDescription)"
      }
      if attempt < configuration.attempts {
        renewSession()
        Thread.sleep(forTimeInterval: pause * Double.random(in: 0.5...1.5))
        pause = min(pause * 2, 10)
      }
    }
    throw S3Error(
      .unavailable,
      "\(lastFailure) (gave up after \(configuration.attempts) tries)")
  }

  private func perform(_ request: URLRequest) -> Result<Response, URLError> {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: Result<Response, URLError> = .failure(URLError(.unknown))
    let task = guardian.withLock { session }.dataTask(with: request) { data, response, error in
      if let http = response as? HTTPURLResponse, error == nil {
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
          if let name = name as? String, let value = value as? String {
            headers[name.lowercased()] = value
          }
        }
        result = .success(Response(status: http.statusCode, headers: headers, body: data ?? Data()))
      } else {
        result = .failure((error as? URLError) ?? URLError(.networkConnectionLost))
      }
      done.signal()
    }
    task.resume()
    done.wait()
    return result
  }

  /// What kind of failure a status and S3 error code are.
  static func classify(status: Int, code: String?) -> S3Error.Kind {
    switch (status, code) {
    case (_, "SlowDown"), (_, "RequestTimeout"), (_, "InternalError"), (500, _), (502, _),
      (503, _), (504, _):
      return .unavailable
    case (404, _), (_, "NoSuchBucket"), (_, "NoSuchKey"), (_, "NoSuchUpload"):
      return .notFound
    case (401, _), (403, _): return .denied
    default: return .failed
    }
  }

  private static func describe(_ what: String, status: Int, code: String?, message: String?)
    -> String
  {
    var text = "\(what): HTTP \(status)"
    if let code { text += " \(code)" }
    if let message, !message.isEmpty { text += ": \(message)" }
    return text
  }

  /// The `Code` and `Message` of an S3 error body.
  static func errorCode(_ body: Data) -> (String?, String?) {
    let document = S3XML.parse(body)
    return (document.first("Code"), document.first("Message"))
  }
}
