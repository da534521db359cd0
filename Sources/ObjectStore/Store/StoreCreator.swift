import DurableIO
import Foundation
import ObjectModel
import PropertyList
import SQLite

/// Creates empty stores in Core Data's layout.
public enum StoreCreator {
  /// How a store is created.
  public struct Options: Sendable {
    /// Replace an existing file at the destination.
    public var overwrite = false
    /// Add the persistent-history tables (`ACHANGE`, `ATRANSACTION`, `ATRANSACTIONSTRING`).
    public var persistentHistory = false
    /// The store's UUID (`Z_UUID`); a new one when nil.
    public var uuid: String?
    /// The metadata to write; made from the model when nil.
    public var metadata: [String: PropertyListValue]?
    /// `Z_MODELCACHE` contents (raw DEFLATE of a keyed archive); the model's own, written by
    /// `CompiledModelWriter`, when nil.
    public var modelCache: [UInt8]?
    /// Whether the store has a `Z_MODELCACHE` table (stores written before about 2014 do not).
    public var hasModelCacheTable = true

    /// Default options: refuse an existing destination, no history tables, a new UUID.
    public init() {}
  }

  /// Creates an empty store for `model` at `path`.
  ///
  /// The store is built in a temporary file beside the destination and renamed into place only
  /// when complete (after an `fsync`), so a failure never leaves a half-made store under the
  /// final name.
  /// - Throws: ``StoreError`` (``StoreError/Kind/destinationExists`` when the file exists and
  ///   `options.overwrite` is off).
  public static func create(at path: String, model: ObjectModel, options: Options = Options())
    throws(StoreError)
  {
    let schema = try StoreSchema(model: model, persistentHistory: options.persistentHistory)
    try create(at: path, schema: schema, options: options)
  }

  /// Creates an empty store with `schema` at `path` (see ``create(at:model:options:)``).
  package static func create(at path: String, schema: StoreSchema, options: Options = Options())
    throws(StoreError)
  {
    let fileManager = FileManager.default
    if fileManager.fileExists(atPath: path) && !options.overwrite {
      throw StoreError(
        .destinationExists, "the destination exists (use --force to replace it)", path: path)
    }
    do {
      try StoreFile.build(at: path) { temporary in
        try build(at: temporary, schema: schema, options: options)
      }
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(.database, "cannot put the new store in place: \(error)", path: path)
    }
  }

  private static func build(at path: String, schema: StoreSchema, options: Options)
    throws(StoreError)
  {
    do {
      let db = try Database(path: path, mode: .readWriteCreate)
      for pragma in ["page_size = 4096", "auto_vacuum = 2", "journal_mode = DELETE"] {
        try db.execute("PRAGMA \(pragma)")
      }
      try db.transaction(.immediate) { db in
        for statement in schema.statements
        where options.hasModelCacheTable || !statement.hasPrefix("CREATE TABLE Z_MODELCACHE") {
          try db.execute(statement)
        }
        let insertKey = try db.prepare(
          "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, ?, ?)")
        for row in schema.entityRows(maxima: [:]) {
          try insertKey.bind([
            .integer(Int64(row.number)), .text(row.name), .integer(Int64(row.parent)),
            .integer(row.maxPrimaryKey),
          ])
          try insertKey.run()
        }
        let metadata = options.metadata ?? StoreMetadata.make(for: schema.model)
        let insertMetadata = try db.prepare(
          "INSERT INTO Z_METADATA (Z_VERSION, Z_UUID, Z_PLIST) VALUES (1, ?, ?)")
        try insertMetadata.bind([
          .text(options.uuid ?? UUID().uuidString),
          .blob(PropertyListValue.dictionary(metadata).binaryPropertyList()),
        ])
        try insertMetadata.run()
        if options.hasModelCacheTable {
          let cache = try options.modelCache ?? CompiledModelWriter.modelCache(schema.model)
          let insertCache = try db.prepare("INSERT INTO Z_MODELCACHE (Z_CONTENT) VALUES (?)")
          try insertCache.bind([.blob(cache)])
          try insertCache.run()
        }
      }
      // Core Data's stores are in WAL mode; the mode is recorded in the file header.
      try db.execute("PRAGMA journal_mode = WAL")
    } catch let error as StoreError {
      throw error
    } catch let error as SQLiteError {
      throw StoreError(.database, "cannot create the store", path: path, underlying: error)
    } catch let error as ModelError {
      throw StoreError(.database, "cannot write Z_MODELCACHE", path: path, underlying: error)
    } catch {
      throw StoreError(.database, "cannot create the store: \(error)", path: path)
    }
  }
}
