import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore
import PropertyList

/// Part of a framed archive loaded into a private store: its header and model, and the chunks
/// of the entities asked for, each member checked against the index as it is read
/// (``FramedArchive``); the other entities' tables stay empty. What `find`, and `diff` of a
/// few entities, read of an archive instead of all of it. The archive as a whole is not
/// verified (`verify` does that): references to objects not loaded are not followed.
enum PartialArchive {
  /// Loads part of `archive` into a new store at `path`. `entities` is given the archive's
  /// model and names the concrete entities to load, or nil when what is wanted cannot be
  /// answered from part of the archive (then nothing is loaded, and nil returned).
  /// - Returns: the archive's model, its creation time (ISO 8601) and the UUID of the store it
  ///   was made of (nil in archives that do not record it).
  /// - Throws: ``ArchiveFormatError`` for a member that does not match the index, and what
  ///   `entities` throws.
  static func load(
    _ archive: FramedArchive, into path: String,
    entities: (ObjectModel) throws -> Set<String>?
  ) throws -> (model: ObjectModel, created: String?, uuid: String?)? {
    let header = try header(of: archive)
    let model = try model(of: archive)
    // The private store numbers entities as the model does; rows keep owner columns named by
    // the source's numbers: else read the archive whole.
    guard let wanted = try entities(model), try ownerColumnsAgree(archive, model) else {
      return nil
    }
    let loader = try store(at: path, model: model, header: header)
    for member in archive.members {
      guard let owner = ArchiveLayout.entity(ofObjectsMember: member.path), wanted.contains(owner)
      else { continue }
      let chunk = try RecordDecoder(model: model, member: member.path).decodeObjects(
        archive.read(member))
      if case .batch(let batch) = chunk {
        try loader.insert(batch)
      } else {
        for (record, manyToMany) in chunk.records {
          try loader.insert(record, manyToMany: manyToMany)
        }
      }
    }
    try finish(loader, model: model)
    return (model, header.created.map(\.description), header.sourceUUID)
  }

  /// The archive's header, of a format this version reads.
  /// - Throws: ``ArchiveFormatError`` for a header of a format it does not read.
  static func header(of archive: FramedArchive) throws -> ArchiveHeader {
    let header = ArchiveHeader(
      reading: try PropertyListValue(binaryPropertyList: archive.member(ArchiveLayout.header)))
    guard ArchiveLayout.formatVersions.contains(header.formatVersion) else {
      throw ArchiveFormatError(
        member: ArchiveLayout.header,
        ArchiveLayout.unsupportedFormat(header.formatVersion, verb: "reads"))
    }
    return header
  }

  /// The model the archive's objects were written with.
  static func model(of archive: FramedArchive) throws -> ObjectModel {
    try ModelDescriptor.decode(
      PropertyListValue(binaryPropertyList: archive.member(ArchiveLayout.modelDescriptor)))
  }

  /// A new store at `path` laid out for `model`, with its bookkeeping (the source's UUID,
  /// metadata made for the model, no model cache), ready for objects.
  static func store(at path: String, model: ObjectModel, header: ArchiveHeader) throws
    -> StoreLoader
  {
    let schema = try StoreSchema(model: model)
    let entityRows = schema.entityRows(maxima: [:])
    let loader = try StoreLoader(path: path)
    try loader.createTables(schema.schemaObjects)
    try loader.prepare(model: model, entityRows: entityRows)
    try loader.writeBookkeeping(
      entityRows: entityRows, uuid: header.sourceUUID ?? UUID().uuidString,
      metadata: PropertyListValue.dictionary(StoreMetadata.make(for: model))
        .binaryPropertyList(),
      modelCache: nil)
    return loader
  }

  /// Creates the plain indexes a store laid out from `model` has (the foreign keys', the fetch
  /// indexes), commits and closes it: a selection's closure and a merge's members are found by
  /// foreign key, and without them each lookup scans a table. Uniqueness constraints' indexes
  /// are left out: a private copy of rows is no place to enforce the source's constraints.
  static func finish(_ loader: StoreLoader, model: ObjectModel) throws {
    let indexes = try StoreSchema(model: model).schemaObjects.filter {
      $0.type == "index" && $0.sql.hasPrefix("CREATE INDEX")
    }
    try loader.finish(indexesAndTriggers: indexes, journalMode: "delete")
  }

  /// Whether the archive's rows name their owner columns (`Z<n><NAME>`, of to-many
  /// relationships without an inverse) as a store laid out from the model names them: true
  /// when the model has none, else when the source store numbered the model's entities as the
  /// model numbers them (its `Z_PRIMARYKEY` rows; a store whose entities Core Data renamed in a
  /// migration may not).
  static func ownerColumnsAgree(_ archive: FramedArchive, _ model: ObjectModel) throws -> Bool {
    let hasOwnerColumns = model.entities.contains { entity in
      entity.relationships.contains { $0.isToMany && $0.inverse == nil && !$0.isTransient }
    }
    guard hasOwnerColumns else { return true }
    let value = try PropertyListValue(
      binaryPropertyList: archive.member(ArchiveLayout.storePrimaryKeys))
    var rows: [CoreDataStore.EntityRow] = []
    for entry in value.arrayValue ?? [] {
      guard let number = entry["ent"]?.integerValue, let name = entry["name"]?.stringValue,
        number > 0, number <= Int32.max
      else { return false }
      rows.append(
        CoreDataStore.EntityRow(
          number: Int(number), name: name, parent: Int(entry["super"]?.integerValue ?? 0),
          maxPrimaryKey: entry["max"]?.integerValue ?? 0))
    }
    return CoreDataStore.entityNumbers(for: model, rows: rows) == model.entityNumbers
  }
}
