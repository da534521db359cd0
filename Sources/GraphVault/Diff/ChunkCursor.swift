import ArchiveFormat
import ObjectModel
import ObjectStore

/// One entity's objects in one archive, chunk after chunk as its scan decodes them
/// (``ScannedArchive``), in primary-key order (the order the format keeps them in). Two
/// cursors' current objects are compared in place, column by column
/// (``IndexedBatch/sameValues(at:as:at:pairing:)``); only objects that differ are read into
/// records.
final class ChunkCursor: DiffCursor {
  /// A chunk's objects, indexed: format 2's columns, or format 1's records.
  private enum Chunk {
    case batch(IndexedBatch)
    case records([(ObjectRecord, [String: [(Int64, Int64?)]])])

    init(_ decoded: ObjectChunk) {
      switch decoded {
      case .columns(let batch): self = .batch(IndexedBatch(batch))
      case .records(let records): self = .records(records)
      case .objects, .encoded:
        preconditionFailure("an archive's chunks decode to columns or records")
      }
    }

    var count: Int {
      switch self {
      case .batch(let batch): batch.count
      case .records(let records): records.count
      }
    }

    func primaryKey(at index: Int) -> Int64 {
      switch self {
      case .batch(let batch): batch.primaryKey(at: index)
      case .records(let records): records[index].0.primaryKey
      }
    }

    func record(at index: Int) -> (ObjectRecord, [String: [(Int64, Int64?)]]) {
      switch self {
      case .batch(let batch): batch.record(at: index)
      case .records(let records): records[index]
      }
    }
  }

  private let archive: ScannedArchive
  private let entity: String
  private var chunk: Chunk?
  private var index = 0
  /// Counts the chunks taken, so that a pairing of columns is made once per pair of chunks.
  private var chunkNumber = 0
  private var pairing: (mine: Int, theirs: Int, columns: IndexedBatch.Pairing)?

  /// A cursor over `entity`'s objects in `archive`, before its first.
  init(_ archive: ScannedArchive, entity: String) {
    self.archive = archive
    self.entity = entity
  }

  func step() throws -> Bool {
    index += 1
    while chunk == nil || index >= chunk!.count {
      guard let next = try archive.nextChunk(of: entity) else {
        chunk = nil
        return false
      }
      chunk = Chunk(next)
      chunkNumber += 1
      index = 0
    }
    return true
  }

  var key: AttributeValue? { chunk.map { .integer($0.primaryKey(at: index)) } }

  func sameValues(as other: ChunkCursor) -> Bool {
    guard let chunk, let theirs = other.chunk else { return false }
    switch (chunk, theirs) {
    case (.batch(let mine), .batch(let their)):
      if pairing?.mine != chunkNumber || pairing?.theirs != other.chunkNumber {
        pairing = (chunkNumber, other.chunkNumber, IndexedBatch.Pairing(mine, their))
      }
      return mine.sameValues(
        at: index, as: their, at: other.index, pairing: pairing!.columns)
    default:
      let (left, leftLinks) = chunk.record(at: index)
      let (right, rightLinks) = theirs.record(at: other.index)
      return left.attributes == right.attributes && left.toOne == right.toOne
        && left.extraColumns == right.extraColumns && leftLinks.count == rightLinks.count
        && leftLinks.allSatisfy { name, rows in
          guard let others = rightLinks[name], others.count == rows.count else { return false }
          return zip(rows, others).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        }
    }
  }

  func object() throws -> ObjectCursor.Object {
    guard let chunk else { throw VaultError(.invalidInput, "no object at hand") }
    let (record, links) = chunk.record(at: index)
    return ObjectCursor.Object(record: record, manyToMany: links, model: archive.store.model)
  }
}
