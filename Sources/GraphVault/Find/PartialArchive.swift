import ArchiveFormat
import Foundation
import ObjectModel
import ObjectStore
import PropertyList

/// Part of a framed archive as an object stream: its header and model, as the head of the
/// store its objects make, then the chunks of the entities asked for, each member checked
/// against the index as it is read (``FramedArchive``), and, with a selection, only the
/// objects its predicate chooses. What `find`, and `diff` of a few entities, read of an archive
/// instead of all of it, into a private store whose other entities' tables stay empty
/// (``load(_:into:wanted:)``: `PartialArchive → StoreSink`). The archive as a whole is not
/// verified (`verify` does that): references to objects not loaded are not followed.
final class PartialArchive: ObjectSource {
  typealias Head = StoreHead

  /// What to load of an archive, decided from its model.
  struct Wanted {
    /// The concrete entities whose objects are loaded.
    var entities: Set<String>
    /// The objects to load of them: those this selection's predicate chooses, or all when
    /// nil. With one, a chunk's columns the predicate does not test are read only when the
    /// chunk holds an object it chooses.
    var selection: FixtureCutter.Selection?
  }

  private let archive: FramedArchive
  /// What the archive holds before its objects.
  let front: ArchivedStore
  private let wanted: Wanted
  private(set) var isSound = false

  var headPlace: String { ArchiveLayout.storeSchema }

  /// The part of `archive` that `wanted` asks for, given the archive's model; nil when what is
  /// wanted cannot be answered from part of the archive.
  /// - Throws: ``ArchiveFormatError`` for a member before the objects that does not match the
  ///   index, and what `wanted` throws.
  init?(_ archive: FramedArchive, wanted: (ObjectModel) throws -> Wanted?) throws {
    self.archive = archive
    // The header's format is checked with the rest of what comes before the objects.
    front = try archive.readStore()
    guard let wanted = try wanted(front.model) else { return nil }
    self.wanted = wanted
  }

  /// Loads part of `archive` into a new store at `path`. `wanted` is given the archive's
  /// model and says what to load, or nil when what is wanted cannot be answered from part of
  /// the archive (then nothing is loaded, and nil returned).
  /// - Returns: the archive's model, its creation time (ISO 8601) and the UUID of the store it
  ///   was made of (nil in archives that do not record it).
  /// - Throws: ``ArchiveFormatError`` for a member that does not match the index, and what
  ///   `wanted` throws.
  static func load(
    _ archive: FramedArchive, into path: String, wanted: (ObjectModel) throws -> Wanted?
  ) throws -> (model: ObjectModel, created: String?, uuid: String?)? {
    guard let source = try PartialArchive(archive, wanted: wanted) else { return nil }
    try ObjectPipeline(source: source, sink: StoreSink(path: path)).run()
    let front = source.front
    return (front.model, front.header.created.map(\.description), front.header.sourceUUID)
  }

  func produce(_ emit: (StreamEvent<StoreHead>) throws -> Void) throws {
    try emit(.begin(front.storeHead))
    // A predicate that does not fit the model loads every object, for the search to name
    // the mistake as it would in a whole archive.
    let filter = wanted.selection.flatMap { try? SelectionFilter($0, model: front.model) }
    // Entity by entity, in archive order (each entity's chunks follow each other).
    var order: [String] = []
    for member in archive.members {
      if let entity = ArchiveLayout.entity(ofObjectsMember: member.path),
        wanted.entities.contains(entity), order.last != entity
      {
        order.append(entity)
      }
    }
    for entity in order {
      // A chunk whose values' bounds rule the predicate out is not read.
      let reading = archive.members.filter { member in
        guard ArchiveLayout.entity(ofObjectsMember: member.path) == entity else { return false }
        guard let filter, let ranges = member.ranges else { return true }
        return ranges.mayMatch(filter)
      }
      let tested = filter?.testedAttributes
      let only = RecordDecoder(model: front.model, member: entity).columns(of: entity, for: tested)
      try archive.read(reading, columns: only) { member, content in
        let decoder = RecordDecoder(model: front.model, member: member.path)
        guard let filter,
          let chunk = try decoder.columnChunk(content.bytes, only: tested, unread: content.unread)
        else {
          let chunk = try decoder.decodeObjects(content.bytes)
          if case .columns(let batch) = chunk {
            try member.ranges?.check(batch, member: member.path)
          }
          try emit(.objects(chunk, place: member.path))
          return
        }
        let testedBatch = try decoder.decodeBatch(chunk, only: tested)
        try member.ranges?.check(testedBatch, member: member.path)
        let rows = try filter.matches(testedBatch)
        guard !rows.isEmpty else { return }
        // A predicate that tests every column (an extended attribute's bucket) decoded the
        // whole chunk already.
        var batch = testedBatch
        if tested != nil {
          guard let whole = try decoder.columnChunk(archive.whole(member, given: content)) else {
            throw ArchiveFormatError(member: member.path, "not a chunk of columns")
          }
          batch = try decoder.decodeBatch(whole)
          try member.ranges?.check(batch, member: member.path)
        }
        try emit(.objects(.columns(batch.picking(rows: rows)), place: member.path))
      }
    }
    isSound = true
  }
}
