import ArchiveFormat
import DurableIO
import Foundation
import LibArchive
import Migration
import ObjectModel
import ObjectStore
import PropertyList
import SQLite

/// What a restore wrote (or, in a dry run, would write).
public struct RestoreResult: Codable, Sendable {
  /// The store's path.
  public let store: String
  /// Objects per entity (of the archive, as read).
  public let objects: [String: Int]
  /// Rows per table outside the model.
  public let tables: [String: Int]
  /// The model version restored.
  public let modelVersion: String?
  /// The migration, when the archive's version was not the target's.
  public let migration: MigrationReport?
  /// Whether nothing was written.
  public let dryRun: Bool
}

/// How a restore runs.
public struct RestoreOptions: Sendable {
  /// Replace an existing store.
  public var force = false
  /// The target model: an `.xcdatamodeld`, `.momd`, `.xcdatamodel` or `.mom`. Without it the
  /// store is restored at the archive's own version.
  public var modelPath: String?
  /// The target version in the model set (the current one when nil).
  public var modelVersion: String?
  /// A mapping file for what a migration cannot infer.
  public var mappingPath: String?
  /// Custom stages (library use).
  public var stages: [MigrationStage] = []
  /// Read and check the archive and migrate its objects, but write nothing.
  public var dryRun = false
  /// The password of an encrypted archive.
  public var password: PasswordSource?
  /// How long to wait for another restore to the same destination, in seconds.
  public var wait: Double?

  /// Default options: refuse an existing store, restore at the archive's version.
  public init() {}
}

/// `graphvault restore`: an archive into a fresh store, at the archive's model version or,
/// with a target model, migrated hop by hop into the target version while the objects stream.
public enum RestoreService {
  /// Restores `archivePath` into a new store at `destination`, at the archive's version.
  public static func restore(archivePath: String, to destination: String, force: Bool = false)
    throws(VaultError)
    -> RestoreResult
  {
    var options = RestoreOptions()
    options.force = force
    return try restore(archivePath: archivePath, to: destination, options: options)
  }

  /// Restores `archivePath` into a new store at `destination`.
  ///
  /// The store is built in a temporary file beside the destination and renamed into place
  /// only when every member's checksum and count matched the index (and a migration
  /// succeeded); an existing destination is refused unless `force`. On any failure the
  /// destination is untouched and the temporary file removed. A dry run reads and checks the
  /// whole archive and migrates its objects, and writes nothing.
  ///
  /// Two restores to one destination do not overlap: the second waits up to
  /// ``RestoreOptions/wait`` for the first (a lock file `.NAME.lock` beside the destination,
  /// removed when done), else fails as locked. Holding it, a restore removes what killed
  /// restores to the same destination left (their hidden temporary stores and journals).
  public static func restore(
    archivePath: String, to destination: String, options: RestoreOptions
  ) throws(VaultError) -> RestoreResult {
    try vault {
      try ArchiveAccess.requireInput(archivePath)
      let target = try RestoreTarget(options: options)
      if options.dryRun {
        return try load(
          archivePath: archivePath, into: nil, destination: destination, target: target,
          password: options.password)
      }
      let claim = try StoreDestination(
        destination, for: "restore", force: options.force, wait: options.wait)
      defer { claim.release() }
      return try DurableFile.buildDatabase(at: destination) { temporary in
        try load(
          archivePath: archivePath, into: temporary, destination: destination, target: target,
          password: options.password)
      }
    }
  }

  /// The target model set, version, mapping and stages, loaded before the archive is opened.
  struct RestoreTarget {
    let set: ModelVersionSet?
    let version: String?
    let mapping: MappingFile?
    let stages: [MigrationStage]

    init(options: RestoreOptions) throws {
      guard let path = options.modelPath else {
        if options.mappingPath != nil || options.modelVersion != nil || !options.stages.isEmpty {
          throw VaultError(
            .modelUnavailable,
            "--mapping, --model-version and custom stages need --model (the target model)")
        }
        set = nil
        version = nil
        mapping = nil
        stages = options.stages
        return
      }
      let set = try ModelSource.versions(at: path)
      if let name = options.modelVersion, set.version(named: name) == nil {
        throw VaultError(
          .modelUnavailable,
          "\(set.name) has no version \(name) (versions: \(set.versions.compactMap(\.versionName).joined(separator: ", "))) (\(path))"
        )
      }
      self.set = set
      version = options.modelVersion
      mapping = try options.mappingPath.map { path throws(MigrationError) in
        try MappingFile.load(path: path)
      }
      stages = options.stages
    }
  }

  private static func load(
    archivePath: String, into temporary: String?, destination: String, target: RestoreTarget,
    password: PasswordSource?
  ) throws -> RestoreResult {
    let stream = try ArchiveAccess.members(archivePath, password: password)
    var seen: [(path: String, size: Int, sha256: String)] = []
    var header: ArchiveHeader?
    var model: ObjectModel?
    var metadata: [UInt8] = []
    var schema: [CoreDataStore.SchemaObject] = []
    var entityRows: [CoreDataStore.EntityRow] = []
    var modelCache: [UInt8]?
    var sink: RestoreSink?
    var objects: [String: Int] = [:]
    var tables: [String: Int] = [:]
    var index: PropertyListValue?

    func bad(_ detail: String) -> VaultError {
      VaultError(.invalidInput, "\(detail) (\(archivePath))")
    }
    func plist(_ bytes: [UInt8], _ path: String) throws -> PropertyListValue {
      do { return try PropertyListValue(binaryPropertyList: bytes) } catch {
        throw VaultError(
          .invalidInput, "\(path) is not a valid property list: \(error) (\(archivePath))")
      }
    }
    func readySink() throws -> RestoreSink {
      if let sink { return sink }
      guard let header, let model, !schema.isEmpty, !entityRows.isEmpty else {
        throw bad("the archive's data comes before its header, model, schema or primary keys")
      }
      let archived = RestoreSink.Archived(
        model: model, schema: schema, entityRows: entityRows, metadata: metadata,
        modelCache: modelCache, uuid: header.sourceUUID ?? UUID().uuidString)
      let made = try RestoreSink(archived: archived, target: target, path: temporary)
      sink = made
      return made
    }

    // Members are read, checked and decoded on a second thread while this one inserts.
    let prefetcher = MemberPrefetcher(stream: stream)
    defer { prefetcher.cancel() }
    while let item = try prefetcher.next() {
      let member = item.member
      guard index == nil else {
        throw bad("member \(member.path) follows index.plist, which must be last")
      }
      let bytes = member.bytes ?? []
      let path = member.path
      if path != ArchiveLayout.index {
        seen.append((path, bytes.count, member.sha256 ?? ""))
      }
      if header == nil && path != ArchiveLayout.header {
        throw bad(
          "the archive does not start with graphvault.plist (it starts with \(path)); it is not a graphvault archive"
        )
      }
      switch path {
      case ArchiveLayout.header:
        let value = ArchiveHeader(reading: try plist(bytes, path))
        let format = value.formatVersion
        guard ArchiveLayout.formatVersions.contains(format) else {
          throw bad(ArchiveLayout.unsupportedFormat(format, verb: "reads"))
        }
        header = value
      case ArchiveLayout.modelDescriptor:
        model = try ModelDescriptor.decode(try plist(bytes, path))
      case ArchiveLayout.storeMetadata:
        metadata = bytes
      case ArchiveLayout.storeSchema:
        schema = try (plist(bytes, path).arrayValue ?? []).map {
          CoreDataStore.SchemaObject(
            type: $0["type"]?.stringValue ?? "", name: $0["name"]?.stringValue ?? "",
            table: $0["table"]?.stringValue ?? "", sql: $0["sql"]?.stringValue ?? "")
        }
      case ArchiveLayout.storePrimaryKeys:
        entityRows = try (plist(bytes, path).arrayValue ?? []).map {
          CoreDataStore.EntityRow(
            number: Int($0["ent"]?.integerValue ?? 0), name: $0["name"]?.stringValue ?? "",
            parent: Int($0["super"]?.integerValue ?? 0), maxPrimaryKey: $0["max"]?.integerValue ?? 0
          )
        }
      case ArchiveLayout.storeModelCache:
        modelCache = bytes
      case ArchiveLayout.index:
        index = try plist(bytes, path)
      default:
        let parts = path.split(separator: "/").map(String.init)
        guard parts.count == 3, parts[0] == "objects" || parts[0] == "tables" else {
          throw bad("unexpected member \(path)")
        }
        let target = try readySink()
        if parts[0] == "objects", let model {
          let decoded =
            try item.objects ?? RecordDecoder(model: model, member: path).decodeObjects(bytes)
          switch decoded {
          case .batch(let batch) where batch.entity != parts[1]:
            throw bad("\(path) holds objects of \(batch.entity)")
          case .records(let records):
            if let other = records.first(where: { $0.0.entity != parts[1] }) {
              throw bad("\(path) holds an object of \(other.0.entity)")
            }
          default: break
          }
          do {
            try target.insert(decoded)
          } catch let error as StoreError
            where (error.underlying as? SQLiteError)?.isConstraint == true
          {
            // Objects that contradict each other (a key twice): damage the index would have
            // shown at the end.
            throw bad(
              "\(path): \(error.detail): \((error.underlying as? SQLiteError)?.message ?? "a constraint failed"); the member is damaged"
            )
          }
          objects[parts[1], default: 0] += decoded.count
        } else {
          guard let items = try plist(bytes, path).arrayValue else {
            throw bad("\(path) is not an array")
          }
          for item in items {
            try target.insertRow(into: parts[1], try RecordDecoder.row(item, member: path))
          }
          tables[parts[1], default: 0] += items.count
        }
      }
    }
    guard let index else {
      throw bad(
        "the archive is incomplete: it has no index.plist (the backup was interrupted, or the file is truncated); it was not restored"
      )
    }
    do {
      try ArchiveIndex.check(index, against: seen, objects: objects, tables: tables)
    } catch {
      throw bad(error.detail)
    }
    let finished = try readySink()
    let report = try finished.finish(
      journalMode: header?.journalMode ?? "wal")
    return RestoreResult(
      store: destination, objects: objects, tables: tables,
      modelVersion: finished.modelVersion, migration: report, dryRun: temporary == nil)
  }
}
