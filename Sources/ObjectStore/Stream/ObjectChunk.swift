import ObjectModel

/// A chunk of the object stream: objects of one entity, in the shape their source gives and
/// their sink takes.
///
/// - ``columns(_:)``: values by column (format 2's chunks), which a store's loader binds as
///   they are and a migration moves column by column: the fast road, kept whole from the
///   archive to the store.
/// - ``records(_:)``: stored rows, each with its many-to-many rows by relationship (format 1's
///   records).
/// - ``objects(_:links:)``: object values (``ObjectValue``) and links given apart from their
///   objects, in the model's terms: what a migration's object-by-object road gives.
/// - ``encoded(_:)``: objects in an archive's encoding (a backup's chunks), which only an
///   archive's writer takes as they are; ``decoded()`` gives them in one of the shapes above.
package enum ObjectChunk: Sendable {
  /// Objects as columns.
  case columns(ObjectBatch)
  /// Stored records with their many-to-many rows (primary key and order) by relationship.
  case records([(ObjectRecord, [String: [(Int64, Int64?)]])])
  /// Object values, then links of objects given before.
  case objects([ObjectValue], links: [LooseLink])
  /// Objects in an archive's encoding.
  case encoded(any EncodedObjects)

  /// The number of objects.
  package var count: Int {
    switch self {
    case .columns(let batch): batch.count
    case .records(let records): records.count
    case .objects(let objects, _): objects.count
    case .encoded(let encoded): encoded.count
    }
  }

  /// The entity of its objects (nil when it has none).
  package var entity: String? {
    switch self {
    case .columns(let batch): batch.entity
    case .records(let records): records.first?.0.entity
    case .objects(let objects, _): objects.first?.entity
    case .encoded(let encoded): encoded.entity
    }
  }

  /// The stored records of a chunk read from a store or an archive (``columns(_:)`` and
  /// ``records(_:)``); nil for object values, which only a layout turns into records, and for
  /// encoded objects (``decoded()`` first).
  package var storedRecords: [(ObjectRecord, [String: [(Int64, Int64?)]])]? {
    switch self {
    case .columns(let batch): batch.records
    case .records(let records): records
    case .objects, .encoded: nil
    }
  }

  /// The chunk with encoded objects decoded; any other as it is.
  package func decoded() throws -> ObjectChunk {
    guard case .encoded(let encoded) = self else { return self }
    return try encoded.decoded()
  }
}
