import Foundation

/// The object operations graphvault needs, each one request (listings follow their
/// continuation tokens).
extension S3Client {
  /// An object as a listing shows it.
  public struct Object: Sendable, Equatable {
    /// Its key.
    public let key: String
    /// Its size in bytes.
    public let size: Int64
    /// When it was last written (the service's clock).
    public let lastModified: Date?
    /// Its ETag, as a HEAD request gives it (quotes included); nil when the listing gives none.
    public var etag: String? = nil
  }

  /// A multipart upload that was begun and neither completed nor aborted.
  public struct Upload: Sendable, Equatable {
    /// The key it would complete into.
    public let key: String
    /// Its id.
    public let uploadID: String
    /// When it began (the service's clock).
    public let initiated: Date?
  }

  /// The objects whose keys start with `prefix` and hold no further `/`, every page of the
  /// listing, and the service's time when the listing began.
  public func list(bucket: String, prefix: String) throws(S3Error) -> (
    objects: [Object], now: Date?
  ) {
    var objects: [Object] = []
    var token: String?
    var now: Date?
    repeat {
      var query = [("list-type", "2"), ("prefix", prefix), ("delimiter", "/")]
      if let token { query.append(("continuation-token", token)) }
      let response = try send(
        "GET", bucket: bucket, query: query, what: "list s3://\(bucket)/\(prefix)")
      if now == nil { now = response.headers["date"].flatMap(Self.httpDate) }
      let document = S3XML.parse(response.body, records: ["Contents", "CommonPrefixes"])
      for record in document.records {
        guard let key = record["Key"] else { continue }
        objects.append(
          Object(
            key: key, size: Int64(record["Size"] ?? "") ?? 0,
            lastModified: record["LastModified"].flatMap(Self.isoDate), etag: record["ETag"]))
      }
      token =
        document.first("IsTruncated") == "true" ? document.first("NextContinuationToken") : nil
    } while token != nil
    return (objects, now)
  }

  /// The object's size and ETag.
  /// - Throws: ``S3Error`` (``S3Error/Kind/notFound`` when there is no such object or bucket).
  public func head(bucket: String, key: String) throws(S3Error) -> (size: Int64, etag: String?) {
    let response = try send("HEAD", bucket: bucket, key: key, what: "read s3://\(bucket)/\(key)")
    return (Int64(response.headers["content-length"] ?? "") ?? 0, response.headers["etag"])
  }

  /// Bytes `range` of the object (as it was when `etag` was read, when given).
  public func get(bucket: String, key: String, range: Range<Int64>, etag: String?)
    throws(S3Error) -> Data
  {
    var headers = ["Range": "bytes=\(range.lowerBound)-\(range.upperBound - 1)"]
    if let etag { headers["If-Match"] = etag }
    return try send(
      "GET", bucket: bucket, key: key, headers: headers, what: "read s3://\(bucket)/\(key)"
    ).body
  }

  /// The object's first `count` bytes (all of it when it is smaller), with its size and ETag:
  /// what a HEAD request tells, and the start of the object in the same request. An empty
  /// object (whose every range is unsatisfiable, 416) gives no bytes and size 0.
  /// - Throws: ``S3Error`` (``S3Error/Kind/notFound`` when there is no such object or bucket).
  public func getStart(bucket: String, key: String, count: Int) throws(S3Error) -> (
    bytes: Data, size: Int64, etag: String?
  ) {
    let response = try send(
      "GET", bucket: bucket, key: key, headers: ["Range": "bytes=0-\(max(1, count) - 1)"],
      what: "read s3://\(bucket)/\(key)", accept: [416])
    if response.status == 416 { return (Data(), 0, response.headers["etag"]) }
    // `bytes 0-65535/157375937`; a service that ignored the range sent the whole object (200).
    let total = response.headers["content-range"]?.split(separator: "/").last.flatMap {
      Int64($0)
    }
    guard response.status == 200 || total != nil else {
      throw S3Error(
        .failed, "read s3://\(bucket)/\(key): a part without its object's size (Content-Range)",
        status: response.status)
    }
    return (response.body, total ?? Int64(response.body.count), response.headers["etag"])
  }

  /// The whole (small) object.
  public func get(bucket: String, key: String) throws(S3Error) -> Data {
    try send("GET", bucket: bucket, key: key, what: "read s3://\(bucket)/\(key)").body
  }

  /// Writes a small object whole.
  public func put(bucket: String, key: String, body: Data) throws(S3Error) {
    _ = try send("PUT", bucket: bucket, key: key, body: body, what: "write s3://\(bucket)/\(key)")
  }

  /// Removes an object (removing one that is not there is no error, as in S3).
  public func delete(bucket: String, key: String) throws(S3Error) {
    _ = try send("DELETE", bucket: bucket, key: key, what: "remove s3://\(bucket)/\(key)")
  }

  /// Begins a multipart upload into `key`.
  /// - Returns: its id.
  public func createUpload(bucket: String, key: String) throws(S3Error) -> String {
    let response = try send(
      "POST", bucket: bucket, key: key, query: [("uploads", "")],
      what: "begin the upload of s3://\(bucket)/\(key)")
    guard let id = S3XML.parse(response.body).first("UploadId") else {
      throw S3Error(.failed, "begin the upload of s3://\(bucket)/\(key): no UploadId in the answer")
    }
    return id
  }

  /// Uploads part `number` (from 1).
  /// - Returns: its ETag, for ``completeUpload(bucket:key:uploadID:parts:)``.
  public func uploadPart(bucket: String, key: String, uploadID: String, number: Int, body: Data)
    throws(S3Error) -> String
  {
    let response = try send(
      "PUT", bucket: bucket, key: key,
      query: [("partNumber", String(number)), ("uploadId", uploadID)], body: body,
      what: "upload part \(number) of s3://\(bucket)/\(key)")
    return response.headers["etag"] ?? ""
  }

  /// Completes an upload: the object appears under its key, whole, at once.
  public func completeUpload(bucket: String, key: String, uploadID: String, parts: [String])
    throws(S3Error)
  {
    var xml = "<CompleteMultipartUpload>"
    for (index, etag) in parts.enumerated() {
      let escaped = etag.replacingOccurrences(of: "&", with: "&amp;")
        .replacingOccurrences(of: "\"", with: "&quot;")
      xml += "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(escaped)</ETag></Part>"
    }
    xml += "</CompleteMultipartUpload>"
    let response = try send(
      "POST", bucket: bucket, key: key, query: [("uploadId", uploadID)],
      headers: ["Content-Type": "application/xml"], body: Data(xml.utf8),
      what: "complete the upload of s3://\(bucket)/\(key)")
    // S3 may answer 200 with an error in the body.
    let (code, message) = Self.errorCode(response.body)
    if let code, S3XML.parse(response.body).first("ETag") == nil {
      throw S3Error(
        Self.classify(status: 500, code: code) == .unavailable ? .unavailable : .failed,
        "complete the upload of s3://\(bucket)/\(key): \(code) \(message ?? "")", code: code)
    }
  }

  /// Aborts an upload: its parts are dropped.
  public func abortUpload(bucket: String, key: String, uploadID: String) throws(S3Error) {
    _ = try send(
      "DELETE", bucket: bucket, key: key, query: [("uploadId", uploadID)],
      what: "abort the upload of s3://\(bucket)/\(key)", accept: [404])
  }

  /// The uploads begun under `prefix` and never completed or aborted, and the service's time.
  public func listUploads(bucket: String, prefix: String) throws(S3Error) -> (
    uploads: [Upload], now: Date?
  ) {
    var uploads: [Upload] = []
    var markers: (String, String)?
    var now: Date?
    repeat {
      var query = [("uploads", ""), ("prefix", prefix)]
      if let markers { query += [("key-marker", markers.0), ("upload-id-marker", markers.1)] }
      let response = try send(
        "GET", bucket: bucket, query: query, what: "list the uploads of s3://\(bucket)/\(prefix)")
      if now == nil { now = response.headers["date"].flatMap(Self.httpDate) }
      let document = S3XML.parse(response.body, records: ["Upload"])
      for record in document.records {
        guard let key = record["Key"], let id = record["UploadId"] else { continue }
        uploads.append(
          Upload(key: key, uploadID: id, initiated: record["Initiated"].flatMap(Self.isoDate)))
      }
      if document.first("IsTruncated") == "true", let key = document.first("NextKeyMarker"),
        let id = document.first("NextUploadIdMarker")
      {
        markers = (key, id)
      } else {
        markers = nil
      }
    } while markers != nil
    return (uploads, now)
  }

  static func isoDate(_ text: String) -> Date? {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    if let date = formatter.date(from: text) { return date }
    formatter.formatOptions = [.withInternetDateTime]
    return formatter.date(from: text)
  }

  static func httpDate(_ text: String) -> Date? {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    return formatter.date(from: text)
  }
}
