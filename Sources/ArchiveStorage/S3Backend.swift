import Foundation
import S3

/// Archives kept under a prefix of an S3 bucket (AWS, or anything that speaks its API).
///
/// New archives are multipart uploads, part by part as the archive is produced, so memory holds
/// one part at a time; an archive appears under its key only when the upload completes, and an
/// abandoned upload is aborted. A killed run leaves an incomplete upload, which ``leftovers()``
/// lists once it is a day old.
///
/// Locks are objects under `PREFIX.graphvault-locks/NAME/`, one per holder, refreshed while the
/// holder lives; a lock is stale once it has not been refreshed for ``staleAfter`` (by the
/// service's clock), or at once when it names this host and a process that is gone.
///
/// Each archive published here has a copy of its ends (``ArchiveEnds``: its first 32 KiB and
/// last 224 KiB) under `PREFIX.graphvault-ends/NAME`, written once the archive is whole and
/// removed with it, so that reading what an archive is (``openForSummary(_:)``) costs one small
/// GET rather than ranged GETs of a large object. An archive without one (copied here by other
/// tools, or whose backup died between the two writes) is read itself; a copy without its
/// archive is a leftover.
public final class S3Backend: StorageBackend {
  /// The bucket.
  public let bucket: String
  /// The prefix (empty, or ending in `/`).
  public let prefix: String
  /// The client.
  public let client: S3Client
  /// The size of each uploaded part and of each ranged read.
  public var partSize = 8 << 20
  /// How long a lock lives without a refresh.
  public var staleAfter: TimeInterval = 30 * 60
  /// How often a held lock is refreshed.
  public var refreshEvery: TimeInterval = 5 * 60
  /// The folder under the prefix that holds the archives' copied ends.
  public static let endsFolder = ".graphvault-ends/"
  /// The archives whose copied ends the last ``list()`` saw.
  private var listedEnds: Set<String> = []
  /// The size and ETag of each archive the last ``list()`` saw, by name: what
  /// ``openForReading(_:)-(StoredArchive)`` would otherwise ask for again.
  private var listedVersions: [String: (size: Int64, etag: String)] = [:]

  /// The place `s3://bucket/prefix/`.
  public init(bucket: String, prefix: String, client: S3Client) {
    self.bucket = bucket
    self.prefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix : prefix + "/"
    self.client = client
  }

  /// `s3://bucket/prefix/`.
  public var location: String { "s3://\(bucket)/\(prefix)" }

  /// The URL of `name`.
  public func url(of name: String) -> String { location + name }

  /// The archive's URL.
  public func address(of name: String) -> String { url(of: name) }

  /// The `.gvault` objects directly under the prefix (every page of the listing); which of
  /// them have their ends copied is noted for ``openForSummary(_:)``.
  public func list() throws(StorageError) -> [StoredArchive] {
    let objects = try objects(under: prefix)
    listedEnds = Set(try copiedEnds().map(\.name))
    listedVersions = [:]
    for (archive, etag) in objects {
      if let etag { listedVersions[archive.name] = (archive.size, etag) }
    }
    return objects.map(\.archive)
  }

  /// The archive `archive` as ``list()`` listed it, read by ranged GETs pinned to the ETag
  /// the listing gave (no HEAD request); by name when that listing did not see it so.
  public func openForReading(_ archive: StoredArchive) throws(StorageError) -> any ArchiveInput {
    guard let listed = listedVersions[archive.name], listed.size == archive.size else {
      return try openForReading(archive.name)
    }
    return S3Input(backend: self, key: prefix + archive.name, size: listed.size, etag: listed.etag)
  }

  /// The copies of ends under the prefix, each by its archive's name and its own size.
  private func copiedEnds() throws(StorageError) -> [StoredArchive] {
    try objects(under: prefix + Self.endsFolder).map(\.archive)
  }

  /// The `.gvault` objects directly under `folder` (empty, or ending in `/`), by name, with
  /// their ETags.
  private func objects(under folder: String) throws(StorageError) -> [(
    archive: StoredArchive, etag: String?
  )] {
    try storage {
      try client.list(bucket: bucket, prefix: folder).objects.compactMap { object in
        let name = String(object.key.dropFirst(folder.count))
        guard ArchiveNaming.isArchive(name) else { return nil }
        return (StoredArchive(name: name, size: object.size), object.etag)
      }
    }
  }

  /// The archive `archive`, as ``list()`` listed it, read through the copy of its ends when
  /// that listing saw one recording the archive's size (one GET), else as it is.
  public func openForSummary(_ archive: StoredArchive) throws(StorageError) -> any ArchiveInput {
    let name = archive.name
    if listedEnds.contains(name),
      let data = try? client.get(bucket: bucket, key: prefix + Self.endsFolder + name),
      let ends = try? ArchiveEnds(decoding: [UInt8](data)), ends.size == archive.size
    {
      return ArchiveEndsInput(ends: ends, fetched: Int64(data.count), span: partSize) {
        () throws(StorageError) -> any ArchiveInput in try self.openForReading(name)
      }
    }
    return try openForReading(name)
  }

  /// Whether the object `name` is there (a HEAD request).
  public func exists(_ name: String) -> Bool {
    (try? client.head(bucket: bucket, key: prefix + name)) != nil
  }

  /// The object `name`, read by ranged GETs of one part each, pinned to its ETag.
  public func openForReading(_ name: String) throws(StorageError) -> any ArchiveInput {
    let key = prefix + name
    // Its size and ETag come with its start, in one request rather than a HEAD's: every
    // reader of an archive reads its start (the header, the model), whether it streams the
    // archive or reads it by parts.
    let (start, size, etag) = try storage {
      do {
        return try client.getStart(bucket: bucket, key: key, count: Self.startRead)
      } catch let error as S3Error where error.kind == .notFound {
        throw S3Error(
          .notFound, "no archive at \(url(of: name)) (or no bucket \(bucket))", status: 404)
      }
    }
    return S3Input(backend: self, key: key, size: size, etag: etag, start: start)
  }

  /// How much of an archive opened by name is read with its size: its first members (the
  /// header, the model, the store's metadata and model cache) in all but the largest models.
  public static let startRead = 256 << 10

  /// A multipart upload into `name`: visible only once complete, aborted when abandoned.
  public func create(_ name: String) throws(StorageError) -> any ArchiveOutput {
    let key = prefix + name
    let id = try storage { try client.createUpload(bucket: bucket, key: key) }
    return S3Output(backend: self, name: name, key: key, uploadID: id)
  }

  /// Removes the object `name`: asked first whether it is there (S3 answers a DELETE of a
  /// missing key as a success, and a backend says what it did not find).
  public func delete(_ name: String) throws(StorageError) {
    try storage {
      do {
        _ = try client.head(bucket: bucket, key: prefix + name)
      } catch let error as S3Error where error.kind == .notFound {
        throw S3Error(.notFound, "no archive at \(url(of: name))", status: 404)
      }
      try client.delete(bucket: bucket, key: prefix + name)
    }
    // What is left of a copy that could not be removed, the next prune removes.
    try? client.delete(bucket: bucket, key: prefix + Self.endsFolder + name)
  }

  /// Incomplete multipart uploads under the prefix begun more than a day ago (by the
  /// service's clock): what killed backups left, named `KEY NAME?uploadId=ID`; and copies of
  /// ends whose archive is gone, named `.graphvault-ends/NAME`.
  public func leftovers() throws(StorageError) -> [StoredArchive] {
    let uploads = try storage {
      let (uploads, now) = try client.listUploads(bucket: bucket, prefix: prefix)
      let cutoff = (now ?? Date()).addingTimeInterval(-86_400)
      return uploads.filter { ($0.initiated ?? .distantFuture) < cutoff }.map {
        StoredArchive(name: "\($0.key.dropFirst(prefix.count))?uploadId=\($0.uploadID)", size: 0)
      }
    }
    // The copies are listed before the archives: a copy is written after its archive is
    // whole, so one seen here whose archive is not listed next has no archive.
    let copies = try copiedEnds()
    let archives = Set(try objects(under: prefix).map(\.archive.name))
    let orphans = copies.filter { !archives.contains($0.name) }.map {
      StoredArchive(name: Self.endsFolder + $0.name, size: $0.size)
    }
    return uploads + orphans
  }

  /// Removes a leftover that ``leftovers()`` listed: aborts an upload, or deletes a copy of
  /// ends.
  public func removeLeftover(_ name: String) throws(StorageError) {
    if name.hasPrefix(Self.endsFolder), !name.contains("?uploadId=") {
      let key = prefix + name
      try storage { try client.delete(bucket: bucket, key: key) }
      return
    }
    let parts = name.components(separatedBy: "?uploadId=")
    guard parts.count == 2 else { throw StorageError(.notFound, "not an upload: \(name)") }
    try storage {
      try client.abortUpload(bucket: bucket, key: prefix + parts[0], uploadID: parts[1])
    }
  }

  /// A lock object under `PREFIX.graphvault-locks/NAME/` (see ``S3Backend``).
  public func lock(_ name: String, shared: Bool, wait: Double?) throws(StorageError)
    -> any StorageLock
  {
    try S3Lock.take(backend: self, name: name, shared: shared, wait: wait)
  }

  /// Runs `body`, turning an ``S3Error`` into a ``StorageError`` of the matching kind.
  func storage<R>(_ body: () throws -> R) throws(StorageError) -> R {
    do {
      return try body()
    } catch let error as StorageError {
      throw error
    } catch {
      guard let error = error as? S3Error else { throw StorageError(.io, "\(error)") }
      let kind: StorageError.Kind
      switch error.kind {
      case .notFound: kind = .notFound
      case .denied: kind = .denied
      case .unavailable, .failed: kind = .io
      case .configuration: kind = .configuration
      }
      throw StorageError(kind, error.detail)
    }
  }
}

/// An object read by ranged GETs of one part each, pinned to the ETag it had when opened.
private final class S3Input: ArchiveInput {
  let backend: S3Backend
  let key: String
  let length: Int64
  var size: Int64? { length }
  let etag: String?
  private var offset: Int64 = 0
  private var buffer = Data()
  private var position = 0

  /// The archive's first bytes, fetched when it was opened.
  private let start: [UInt8]
  /// The bytes fetched so far, the start's included.
  private var fetched: Int64 = 0

  /// ``fetched``: every byte of an object is fetched.
  var bytesFetched: Int64? { fetched }

  /// The object `key` of `size` bytes, its ETag `etag`, with its first bytes `start` when
  /// they were fetched already (served from memory, and the stream's first part).
  init(backend: S3Backend, key: String, size: Int64, etag: String?, start: Data = Data()) {
    (self.backend, self.key, self.length, self.etag) = (backend, key, size, etag)
    self.start = [UInt8](start)
    buffer = Data(self.start)
    offset = Int64(self.start.count)
    fetched = Int64(self.start.count)
  }

  func read(into target: UnsafeMutableRawBufferPointer) throws(StorageError) -> Int {
    if position == buffer.count {
      guard offset < length else { return 0 }
      let end = min(length, offset + Int64(backend.partSize))
      let (bucket, key, etag, start) = (backend.bucket, self.key, self.etag, offset)
      buffer = try backend.storage {
        try backend.client.get(bucket: bucket, key: key, range: start..<end, etag: etag)
      }
      guard buffer.count == Int(end - start) else {
        throw StorageError(
          .io, "read s3://\(bucket)/\(key): \(buffer.count) bytes where \(end - start) were asked")
      }
      fetched += Int64(buffer.count)
      offset = end
      position = 0
    }
    let count = min(target.count, buffer.count - position)
    buffer.withUnsafeBytes { source in
      target.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[position..<position + count]))
    }
    position += count
    return count
  }

  /// A request's latency buys 8 MiB (what one upload part holds).
  var preferredReadSpan: Int { 8 << 20 }

  func read(at start: Int64, count: Int) throws(StorageError) -> [UInt8] {
    let end = min(length, start + Int64(max(0, count)))
    guard start < end else { return [] }
    if end <= Int64(self.start.count) { return Array(self.start[Int(start)..<Int(end)]) }
    let (bucket, key, etag) = (backend.bucket, self.key, self.etag)
    let data = try backend.storage {
      try backend.client.get(bucket: bucket, key: key, range: start..<end, etag: etag)
    }
    guard data.count == Int(end - start) else {
      throw StorageError(
        .io, "read s3://\(bucket)/\(key): \(data.count) bytes where \(end - start) were asked")
    }
    fetched += Int64(data.count)
    return [UInt8](data)
  }
}

/// A multipart upload, one part in memory at a time.
private final class S3Output: ArchiveOutput {
  let backend: S3Backend
  let name: String
  let key: String
  let uploadID: String
  private var part = Data()
  private var etags: [String] = []
  private var written: Int64 = 0
  private var finished = false
  private var ends = ArchiveEnds.Recorder()

  init(backend: S3Backend, name: String, key: String, uploadID: String) {
    (self.backend, self.name, self.key, self.uploadID) = (backend, name, key, uploadID)
    part.reserveCapacity(backend.partSize)
  }

  var location: String { backend.url(of: name) }

  func write(_ bytes: UnsafeRawBufferPointer) throws(StorageError) {
    ends.append(bytes)
    var remaining = bytes
    while !remaining.isEmpty {
      let take = min(remaining.count, backend.partSize - part.count)
      part.append(contentsOf: UnsafeRawBufferPointer(rebasing: remaining[..<take]))
      written += Int64(take)
      remaining = UnsafeRawBufferPointer(rebasing: remaining[take...])
      if part.count == backend.partSize { try flush() }
    }
  }

  private func flush() throws(StorageError) {
    let (bucket, key, id, number, body) = (
      backend.bucket, self.key, uploadID, etags.count + 1, part
    )
    let etag = try backend.storage {
      try backend.client.uploadPart(
        bucket: bucket, key: key, uploadID: id, number: number, body: body)
    }
    etags.append(etag)
    part.removeAll(keepingCapacity: true)
  }

  func publish() throws(StorageError) -> Int64 {
    do throws(StorageError) {
      if !part.isEmpty || etags.isEmpty { try flush() }
      if backend.exists(name) {
        throw StorageError(.exists, "the archive exists already (\(location))")
      }
      let (bucket, key, id, parts) = (backend.bucket, self.key, uploadID, etags)
      try backend.storage {
        try backend.client.completeUpload(bucket: bucket, key: key, uploadID: id, parts: parts)
      }
      finished = true
      // The archive is whole and published whatever becomes of its copied ends: without
      // them, it is read itself.
      let copy = Data(ends.ends.encoded)
      try? backend.client.put(
        bucket: bucket, key: backend.prefix + S3Backend.endsFolder + name, body: copy)
      return written
    } catch {
      abandon()
      throw error
    }
  }

  func abandon() {
    guard !finished else { return }
    finished = true
    try? backend.client.abortUpload(bucket: backend.bucket, key: key, uploadID: uploadID)
  }

  deinit { abandon() }
}
