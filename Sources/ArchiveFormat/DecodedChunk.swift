import ObjectStore

/// The objects of one chunk as decoded: format 1's records, or format 2's columns.
package enum DecodedChunk: Sendable {
  /// Records with their many-to-many rows (format 1).
  case records([(ObjectRecord, [String: [(Int64, Int64?)]])])
  /// Columns (format 2), which a store loader binds as they are.
  case batch(ObjectBatch)

  /// The objects as records.
  package var records: [(ObjectRecord, [String: [(Int64, Int64?)]])] {
    switch self {
    case .records(let records): records
    case .batch(let batch): batch.records
    }
  }

  /// The number of objects.
  package var count: Int {
    switch self {
    case .records(let records): records.count
    case .batch(let batch): batch.count
    }
  }
}
