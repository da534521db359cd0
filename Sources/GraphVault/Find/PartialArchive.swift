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
    // The header's format is checked with the rest of what comes before the objects.
    let front = try archive.readStore()
    guard let wanted = try entities(front.model) else { return nil }
    let loader = try StoreLoader.restoring(front, at: path)
    let reading = archive.members.filter {
      ArchiveLayout.entity(ofObjectsMember: $0.path).map(wanted.contains) ?? false
    }
    try archive.read(reading) { member, bytes in
      let chunk = try RecordDecoder(model: front.model, member: member.path).decodeObjects(bytes)
      if case .batch(let batch) = chunk {
        try member.ranges?.check(batch, member: member.path)
        try loader.insert(batch)
      } else {
        for (record, manyToMany) in chunk.records {
          try loader.insert(record, manyToMany: manyToMany)
        }
      }
    }
    try loader.finish(restoring: front)
    return (front.model, front.header.created.map(\.description), front.header.sourceUUID)
  }
}
