import ArchiveStorage
import DurableIO
import Foundation
import JSON
import ObjectModel
import ObjectStore
import PropertyList

/// What an import wrote.
public struct ImportResult: Codable, Sendable {
  /// The store's path.
  public let store: String
  /// Objects per entity.
  public let objects: [String: Int]
  /// The model version the store follows, when the model names one.
  public let modelVersion: String?
}

/// `graphvault import`: a store built from JSON objects (what `graphvault export` writes, or
/// what people write by hand, as Django's `loaddata` reads fixtures).
///
/// The model is the one the file carries, else `--model`. An object may omit `"pk"` (a fresh
/// key is allocated after every key the file gives) and may refer to another by a natural key,
/// the values of attributes that pick out one object (`{"class": "Person", "firstName": "Ann",
/// "lastName": "Lee"}`), instead of `"pk"`. Objects are created first, then their relationships
/// set (so references may point forward), then the whole graph is validated and saved in one
/// transaction, in a store that appears under its name only when complete. The graph is held
/// in memory until then: import is for fixtures; backup and restore carry whole stores.
public enum ImportService {
  /// How to import.
  public struct Options: Sendable {
    /// The model, when the file carries none (or to use another): `.xcdatamodeld`, `.momd`,
    /// `.xcdatamodel` or `.mom`.
    public var modelPath: String?
    /// Replace an existing store.
    public var force = false
    /// How long to wait for another writer of the same store, in seconds.
    public var wait: Double?
    /// Where the run reports how far it has got: each reading of the file (objects with keys,
    /// objects without, relationships) by its bytes, then the save.
    public var meter: ProgressMeter?

    /// Default options: the file's model, refuse an existing store.
    public init() {}
  }

  /// Imports the objects of `file` (`-` for standard input) into a new store at `destination`.
  /// - Throws: ``VaultError``: 65 naming the object's position, line and key for bad JSON, an
  ///   unknown entity or attribute, a value of the wrong type, or a reference that does not
  ///   pick out exactly one object; 78 when there is no model; 73 when the store exists.
  public static func importObjects(
    from file: String, to destination: String, options: Options = Options()
  ) throws(VaultError) -> ImportResult {
    try vault {
      var scratch: ScratchFolder?
      defer { withExtendedLifetime(scratch) {} }
      var path = file
      if file == StandardStream.name {
        // Read twice (objects, then relationships): standard input is kept in a private file.
        let folder = try ScratchFolder()
        scratch = folder
        path = folder.path("objects.json")
        let copy = try PendingFile(creating: path, mode: 0o600)
        while let data = try FileHandle.standardInput.read(upToCount: ObjectFile.chunkSize),
          !data.isEmpty
        {
          try [UInt8](data).withUnsafeBytes { try copy.write($0) }
        }
        try copy.publish()
      } else if !FileManager.default.fileExists(atPath: file) {
        throw VaultError(.inputMissing, "no file at this path (\(file))")
      }
      var objects = ObjectFile(path: path)
      objects.meter = options.meter
      let model = try resolveModel(objects, modelPath: options.modelPath, file: file)
      let claim = try StoreDestination(
        destination, for: "import", reading: file, force: options.force, wait: options.wait)
      defer { claim.release() }
      let counts = try StoreFile.build(at: destination, wait: options.wait ?? 0) { temporary in
        var creation = StoreCreator.Options()
        creation.overwrite = true
        try StoreCreator.create(at: temporary, model: model, options: creation)
        return try load(objects, into: temporary, model: model, file: file, meter: options.meter)
      }
      return ImportResult(store: destination, objects: counts, modelVersion: model.versionName)
    }
  }

  private static func resolveModel(_ objects: ObjectFile, modelPath: String?, file: String) throws
    -> ObjectModel
  {
    if let modelPath {
      return try ModelSource.versions(at: modelPath).current
    }
    guard let carried = try objects.model() else {
      throw VaultError(
        .modelUnavailable,
        "the file carries no model (it was not written by graphvault export): pass --model (\(file))"
      )
    }
    guard let descriptor = PropertyListJSON.propertyList(carried) else {
      throw VaultError(.invalidInput, "the file's \"model\" is not a model descriptor (\(file))")
    }
    do {
      return try ModelDescriptor.decode(descriptor)
    } catch {
      throw VaultError(
        .invalidInput, "the file's \"model\" is not a model descriptor: \(error) (\(file))")
    }
  }

  /// Creates the objects, sets their relationships, saves; returns objects per entity.
  private static func load(
    _ objects: ObjectFile, into store: String, model: ObjectModel, file: String,
    meter: ProgressMeter?
  )
    throws -> [String: Int]
  {
    let size = (try? FileManager.default.attributesOfItem(atPath: objects.path))?[.size] as? Int
    func phase(_ name: String) {
      meter?.startPhase(name)
      meter?.setTotal(bytes: size.map(Int64.init))
    }
    var transformers = ValueTransformerRegistry.standard
    transformers.refusesUnknownNames = false
    let context = try ObjectContext(storePath: store, model: model, transformers: transformers)
    context.transactionAuthor = MergeService.historyAuthor
    let converter = ObjectJSON(model: model)
    var places: [ObjectReference: String] = [:]
    var assigned: [Int: ObjectReference] = [:]
    var counts: [String: Int] = [:]

    func failure(_ entry: ObjectFile.Entry, _ detail: String) -> VaultError {
      VaultError(.invalidInput, "\(entry.place): \(detail) (\(file))")
    }
    func dictionary(_ entry: ObjectFile.Entry) throws -> ObjectDictionary {
      do {
        return try converter.dictionary(entry.value)
      } catch {
        throw failure(entry, error.detail)
      }
    }
    // Objects with keys first, so that a fresh key never takes one the file gives.
    for givenKeys in [true, false] {
      phase(givenKeys ? "objects with keys" : "objects without keys")
      try objects.forEachObject { entry in
        let read = try dictionary(entry)
        guard (read.primaryKey != nil) == givenKeys else { return }
        do throws(StoreError) {
          let object = try context.insert(read.entity, primaryKey: read.primaryKey)
          try object.populate(
            from: ObjectDictionary(
              entity: read.entity, attributes: read.attributes, extended: read.extended))
          places[object.reference] = entry.place
          assigned[entry.position] = object.reference
          counts[read.entity, default: 0] += 1
          meter?.add(objects: 1)
        } catch {
          throw failure(entry, error.detail)
        }
      }
    }
    phase("relationships")
    try objects.forEachObject { entry in
      let read = try dictionary(entry)
      guard !read.toOne.isEmpty || !read.toMany.isEmpty, let reference = assigned[entry.position]
      else { return }
      do throws(StoreError) {
        let object = try context.object(with: reference)
        try object.populate(
          from: ObjectDictionary(entity: read.entity, toOne: read.toOne, toMany: read.toMany))
        // A to-many the file gives empty is taken as the store it came from held it.
        for (name, members) in read.toMany where members.isEmpty {
          context.acceptEmpty(name, of: object)
        }
      } catch {
        throw failure(entry, error.detail)
      }
    }
    phase("saving")
    meter?.setTotal(objects: counts.values.reduce(0, +))
    do {
      try context.save()
      meter?.set(objectsDone: counts.values.reduce(0, +))
    } catch {
      // Name the object by its place in the file when the store names it.
      let place = places.first { error.detail.contains("\($0.key)") }?.value
      throw VaultError(
        .invalidInput,
        "\(place.map { "\($0): " } ?? "")the objects do not make a valid store: \(error.detail) (\(file))",
        cause: error)
    }
    return counts
  }
}
