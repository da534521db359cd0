import DurableIO
import Foundation
import ObjectModel
import PropertyList
import SQLite

/// An existing Core Data SQLite store, opened for reading without ever changing it: read-only,
/// through SQLite's URI `mode=ro`, so the `-wal` is read (not ignored) and never checkpointed
/// or deleted. Reads that must agree with each other go inside ``read(_:)``, one read
/// transaction with one snapshot, even while an app writes to the store.
///
/// ```swift
/// let store = try CoreDataStore(path: "App.sqlite")
/// let model = try store.cachedModel() ?? ModelVersionSet.load(path: "App.xcdatamodeld").current
/// let layout = try store.layout(for: model)
/// try store.read { store in
///   try store.forEachObject(in: layout.tables[0], layout: layout) { print($0.reference) }
/// }
/// ```
public final class CoreDataStore {
  /// One row of `Z_PRIMARYKEY`.
  package struct EntityRow: Sendable, Equatable {
    /// Creates a row.
    public init(number: Int, name: String, parent: Int, maxPrimaryKey: Int64) {
      self.number = number
      self.name = name
      self.parent = parent
      self.maxPrimaryKey = maxPrimaryKey
    }

    /// `Z_ENT`.
    public let number: Int
    /// `Z_NAME` (after a rename by migration, possibly the entity's old name).
    public let name: String
    /// `Z_SUPER` (0 for none).
    public let parent: Int
    /// `Z_MAX`, the last primary key handed out in the hierarchy (roots only).
    public let maxPrimaryKey: Int64
  }

  /// The store's path.
  public let path: String
  package let database: Database
  /// `Z_METADATA.Z_UUID`.
  public let uuid: String
  /// The metadata dictionary (`Z_METADATA.Z_PLIST`), unknown keys included.
  public let metadata: [String: PropertyListValue]
  /// The raw metadata bytes.
  package let metadataBytes: [UInt8]
  /// The rows of `Z_PRIMARYKEY`.
  package let entityRows: [EntityRow]

  /// How long a read waits by default for a writer's lock (a store in rollback-journal mode is
  /// locked while an app commits): 5 seconds.
  public static let defaultBusyTimeout = 5.0

  /// Opens a store read-only; every read waits up to `busyTimeout` seconds for another
  /// process's write lock.
  /// - Throws: ``StoreError``: ``StoreError/Kind/missing`` when the file does not exist,
  ///   ``StoreError/Kind/notADatabase`` when it is not SQLite,
  ///   ``StoreError/Kind/notACoreDataStore`` when it lacks Core Data's tables,
  ///   ``StoreError/Kind/conflict`` when a writer held it longer than `busyTimeout`.
  public convenience init(path: String, busyTimeout: Double = defaultBusyTimeout)
    throws(StoreError)
  {
    try self.init(path: path, writable: false, busyTimeout: busyTimeout)
  }

  /// Opens a store for reading, or (`writable`) for a context to change it.
  init(path: String, writable: Bool, busyTimeout: Double = defaultBusyTimeout) throws(StoreError) {
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
      throw StoreError(.missing, "no store at this path", path: path)
    }
    guard !isFolder.boolValue else {
      throw StoreError(.missing, "this is a folder, not a store", path: path)
    }
    guard FileManager.default.isReadableFile(atPath: path) else {
      throw StoreError(
        .missing, "the store cannot be read: permission denied (\(FileOwnership.describe(path)))",
        path: path)
    }
    do {
      database = try Database(
        path: path, mode: writable ? .readWrite : .readOnly,
        busyTimeout: Int32(min(busyTimeout, 86_400) * 1000))
    } catch {
      if error.isBusy {
        throw StoreError(
          .conflict,
          "another process holds the store's write lock, still after \(Self.seconds(busyTimeout)) (retry later, or wait longer with --wait)",
          path: path, underlying: error)
      }
      throw StoreError(
        error.isNotADatabase ? .notADatabase : .missing,
        error.isNotADatabase ? "the file is not an SQLite database" : "the store cannot be opened",
        path: path, underlying: error)
    }
    self.path = path
    do {
      let tables = Set(
        try database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").allRows()
          .compactMap { $0[0].textValue })
      guard tables.contains("Z_PRIMARYKEY"), tables.contains("Z_METADATA") else {
        throw StoreError(
          .notACoreDataStore,
          "the database is not a Core Data store (it has no Z_PRIMARYKEY and Z_METADATA tables)",
          path: path)
      }
      let bookkeeping = try Self.readBookkeeping(database, path: path)
      uuid = bookkeeping.uuid
      metadataBytes = bookkeeping.metadata
      let decoded = try? PropertyListValue(propertyList: metadataBytes)
      guard let dictionary = decoded?.dictionaryValue else {
        throw StoreError(
          .notACoreDataStore, "Z_METADATA holds no metadata property list", path: path)
      }
      metadata = dictionary
      entityRows = bookkeeping.entityRows
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(
        .database, "cannot read the store's tables", path: path, underlying: error as? SQLiteError)
    }
  }

  /// `3 s`, `0.5 s`.
  static func seconds(_ value: Double) -> String {
    value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
  }

  /// Runs `body` in one read transaction: every read inside sees the same snapshot.
  package func read<R>(_ body: (CoreDataStore) throws -> R) throws -> R {
    try database.read { _ in try body(self) }
  }

  // MARK: Model

  /// The bytes of `Z_MODELCACHE`, or nil when the store has none (stores before about 2014).
  public func modelCacheBytes() throws(StoreError) -> [UInt8]? {
    do {
      let hasTable =
        try database.prepare(
          "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'Z_MODELCACHE'"
        ).scalar() == .integer(1)
      guard hasTable else { return nil }
      return try database.prepare("SELECT Z_CONTENT FROM Z_MODELCACHE").scalar().blobValue
    } catch {
      throw StoreError(.database, "cannot read Z_MODELCACHE", path: path, underlying: error)
    }
  }

  /// The model the store keeps in `Z_MODELCACHE`, with the entity version hashes of its
  /// metadata; nil when it keeps none.
  public func cachedModel(name: String? = nil) throws(StoreError) -> ObjectModel? {
    guard let bytes = try modelCacheBytes() else { return nil }
    let modelName = name ?? URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
    do {
      return try CompiledModelLoader.load(modelCache: bytes, name: modelName).withVersionHashes(
        versionHashes)
    } catch {
      throw StoreError(
        .modelMismatch, "the store's Z_MODELCACHE cannot be read", path: path, underlying: error)
    }
  }

  /// The entity version hashes in the metadata.
  public var versionHashes: [String: [UInt8]] {
    var hashes: [String: [UInt8]] = [:]
    for (name, value) in metadata["NSStoreModelVersionHashes"]?.dictionaryValue ?? [:] {
      if let data = value.dataValue { hashes[name] = data }
    }
    return hashes
  }

  /// The version identifiers in the metadata.
  public var versionIdentifiers: [String] {
    metadata["NSStoreModelVersionIdentifiers"]?.arrayValue?.compactMap(\.stringValue) ?? []
  }

  /// The store's actual schema.
  package func schema() throws(StoreError) -> SchemaSnapshot {
    do {
      return try SchemaSnapshot(database)
    } catch {
      throw StoreError(.database, "cannot read the schema", path: path, underlying: error)
    }
  }

  /// The store's entity number for each of `model`'s entities: by name in `Z_PRIMARYKEY`, else
  /// by renaming identifier (Core Data keeps the old name there after a rename), else the
  /// model's own numbering.
  package func entityNumbers(for model: ObjectModel) -> [String: Int] {
    Self.entityNumbers(for: model, rows: entityRows)
  }

  /// The entity numbers `rows` (a store's `Z_PRIMARYKEY`) give `model`'s entities.
  package static func entityNumbers(for model: ObjectModel, rows: [EntityRow]) -> [String: Int] {
    let byName = Dictionary(rows.map { ($0.name, $0.number) }, uniquingKeysWith: { a, _ in a })
    var numbers = model.entityNumbers
    for entity in model.entities {
      if let number = byName[entity.name] ?? entity.renamingIdentifier.flatMap({ byName[$0] }) {
        numbers[entity.name] = number
      }
    }
    return numbers
  }

  /// Maps `model` onto this store's schema.
  package func layout(for model: ObjectModel) throws(StoreError) -> StoreLayout {
    do {
      return try StoreLayout(
        model: model, snapshot: schema(), entityNumbers: entityNumbers(for: model))
    } catch {
      throw StoreError(error.kind, error.detail, path: path, underlying: error.underlying)
    }
  }

  // MARK: Reading

  /// The number of rows in a table.
  package func count(table: String) throws(StoreError) -> Int {
    do {
      return Int(try database.prepare("SELECT count(*) FROM \(table)").scalar().integerValue ?? 0)
    } catch {
      throw StoreError(.database, "cannot count \(table)", path: path, underlying: error)
    }
  }

  /// Streams every object of an entity table, in primary-key order, as typed records.
  package func forEachObject(
    in table: StoreLayout.Table, layout: StoreLayout, _ body: (ObjectRecord) throws -> Void
  ) throws {
    let reader = try TableReader(table: table, layout: layout, database: database)
    try reader.readRows(body)
  }

  /// Streams the rows of a many-to-many join table: the owner's and the destination's primary
  /// keys, and the order key when the table has one.
  package func forEachPair(
    in join: StoreLayout.Join, _ body: (Int64, Int64, Int64?) throws -> Void
  ) throws {
    let cursor = try joinCursor(join)
    while let pair = try cursor.next() {
      try body(pair.source, pair.destination, pair.order)
    }
  }
}
