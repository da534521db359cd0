import ArchiveStorage
import Foundation
import S3

/// Where an archive, a folder of archives or a store is, as a user names it: `-` for standard
/// input or output, a local path, or `s3://BUCKET/PREFIX/…` in object storage. Parsed once,
/// where the name is given (the command line), together with the environment that says how to
/// reach object storage; nothing below reads the environment again.
///
/// ```swift
/// let nightly = try Location("s3://backups/library/", environment: environment)
/// let archive = Location(path: "Library.gvault")
/// ```
public struct Location: Sendable, CustomStringConvertible {
  /// The kinds of place a location names.
  public enum Kind: Sendable, Equatable {
    /// Standard input or output (`-`).
    case standardStream
    /// A file or folder on this machine, at `path`.
    case local(path: String)
    /// An object or prefix in object storage: `key` in `bucket` (a prefix when it ends with
    /// `/` or is empty).
    case objectStorage(bucket: String, key: String)
  }

  /// What the location names.
  public let kind: Kind
  /// The name as the user gave it, which messages use.
  public let description: String
  /// How to reach object storage, as the environment given said (or what is wrong with it,
  /// told when the location is first reached); nil for other kinds.
  private let configuration: Result<S3Configuration, S3Error>?

  /// The location `text` names: `-`, `s3://BUCKET/KEY`, or a local path.
  /// - Parameter environment: the variables that say how to reach object storage
  ///   (`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT_URL`, …; see ``S3Configuration``); read for
  ///   `s3://` locations only, and only here.
  /// - Throws: ``VaultError/Kind/usage`` for an `s3://` URL without a bucket, or an empty
  ///   name.
  public init(_ text: String, environment: [String: String]) throws(VaultError) {
    description = text
    if text == StandardStream.name {
      kind = .standardStream
      configuration = nil
    } else if text.hasPrefix(Self.s3Scheme) {
      let rest = text.dropFirst(Self.s3Scheme.count)
      let bucket = rest.prefix { $0 != "/" }
      guard !bucket.isEmpty else {
        throw VaultError(.usage, "no bucket in \(text) (write s3://BUCKET/PREFIX/)")
      }
      kind = .objectStorage(
        bucket: String(bucket), key: String(rest.dropFirst(bucket.count + 1)))
      do {
        configuration = .success(try S3Configuration.fromEnvironment(environment))
      } catch {
        configuration = .failure(error)
      }
    } else {
      guard !text.isEmpty else { throw VaultError(.usage, "an empty path") }
      kind = .local(path: text)
      configuration = nil
    }
  }

  /// The local file or folder at `path` (a file named `-` too).
  public init(path: String) {
    self.init(path, kind: .local(path: path), configuration: nil)
  }

  /// Standard input or output.
  public static let standardStream = Location(
    StandardStream.name, kind: .standardStream, configuration: nil)

  /// The URL scheme of object storage.
  static let s3Scheme = "s3://"

  /// Whether this names standard input or output.
  public var isStandardStream: Bool { kind == .standardStream }

  /// Whether this names a place in object storage.
  public var isRemote: Bool {
    if case .objectStorage = kind { return true }
    return false
  }

  /// The local path this names, or nil for standard streams and object storage.
  public var localPath: String? {
    if case .local(let path) = kind { return path }
    return nil
  }

  /// The file a command reading this location reads, as
  /// ``StoreDestination/sameFile(_:_:)`` takes it: the local path, or `-` for standard input
  /// (whatever the shell opened); nil for object storage.
  var readFile: String? { isRemote ? nil : description }

  /// What messages call this location.
  var displayName: String { isStandardStream ? "standard input" : description }

  /// The last component of the name: an archive's or a store's name.
  var lastComponent: String { Self.lastComponent(of: description) }

  /// The last component of a path or URL (`s3://…`): an archive's or a store's name.
  static func lastComponent(of name: String) -> String {
    name.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
  }

  /// Whether this names a folder (or prefix) rather than an archive: an existing local
  /// folder, or an `s3://` URL that ends with `/` or does not end with `.gvault`.
  var isFolder: Bool {
    switch kind {
    case .standardStream: return false
    case .objectStorage:
      return description.hasSuffix("/") || !ArchiveNaming.isArchive(lastComponent)
    case .local(let path):
      var isDirectory: ObjCBool = false
      return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
        && isDirectory.boolValue
    }
  }

  /// Whether something may be read here: standard input and object storage (asked when read)
  /// always; a local path when it exists.
  var mayExist: Bool {
    guard let localPath else { return true }
    return FileManager.default.fileExists(atPath: localPath)
  }

  /// The backend that holds the archive this names, and its name there.
  /// - Throws: ``VaultError`` for standard streams; ``S3Error`` when object storage is not
  ///   configured.
  func archive() throws -> (backend: any StorageBackend, name: String) {
    switch kind {
    case .standardStream:
      throw VaultError(.usage, "standard input or output is not a place for archives")
    case .local(let path):
      let url = URL(fileURLWithPath: path)
      return (
        LocalFolderBackend(folder: url.deletingLastPathComponent().path), url.lastPathComponent
      )
    case .objectStorage(let bucket, let key):
      let name = lastComponent
      return (try s3Backend(bucket: bucket, prefix: String(key.dropLast(name.count))), name)
    }
  }

  /// The backend of the folder (or prefix) this names.
  /// - Throws: as ``archive()`` does.
  func folder() throws -> any StorageBackend {
    switch kind {
    case .standardStream:
      throw VaultError(.usage, "standard input or output is not a folder of archives")
    case .local(let path): return LocalFolderBackend(folder: path)
    case .objectStorage(let bucket, let key): return try s3Backend(bucket: bucket, prefix: key)
    }
  }

  /// The archive `name` that `backend` holds (the backend of this location's folder, or of
  /// the folder of the archive it names), reached as this location is reached: with the same
  /// configuration for object storage. Named as the backend names it
  /// (``StorageBackend/address(of:)``: a path, or an `s3://` URL).
  func sibling(_ name: String, in backend: any StorageBackend) -> Location {
    let address = backend.address(of: name)
    guard case .objectStorage(let bucket, _) = kind,
      address.hasPrefix("\(Self.s3Scheme)\(bucket)/")
    else { return Location(path: address) }
    return Location(
      address,
      kind: .objectStorage(
        bucket: bucket, key: String(address.dropFirst(Self.s3Scheme.count + bucket.count + 1))),
      configuration: configuration)
  }

  private init(
    _ text: String, kind: Kind, configuration: Result<S3Configuration, S3Error>?
  ) {
    description = text
    self.kind = kind
    self.configuration = configuration
  }

  private func s3Backend(bucket: String, prefix: String) throws -> S3Backend {
    guard let configuration else {
      preconditionFailure("an s3:// location is parsed with its configuration")
    }
    return S3Backend(
      bucket: bucket, prefix: prefix, client: S3Client(configuration: try configuration.get()))
  }
}
