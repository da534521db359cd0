import ObjectModel

/// One object of a store, read column by column into buffers that are reused from row to row:
/// the fast path of a backup, with no dictionary per object. Its values are valid only inside
/// the call that hands it out; ``record`` makes a lasting ``ObjectRecord``.
///
/// A value type: a class's properties are accesses checked at run time, one for each read of
/// each row, where a struct's are plain loads.
package struct ObjectRow {
  /// The concrete entity's name.
  package internal(set) var entity = ""
  /// Identifies the layout of ``attributeNames`` and ``toOneNames``: equal for every row of
  /// one entity read by one reader.
  package internal(set) var layoutID = 0
  /// The primary key (`Z_PK`).
  package internal(set) var primaryKey: Int64 = 0
  /// The optimistic-lock version (`Z_OPT`).
  package internal(set) var version: Int64 = 0
  /// The row's hash for the change ledger (`SQLite.RowHasher`, over every column in table
  /// order), when its reader was asked for one (``RowHashing``); else 0.
  package internal(set) var hash: UInt64 = 0
  /// The entity's stored attributes, sorted by name.
  package internal(set) var attributeNames: [String] = []
  /// Their values, in the same order (nil: no value, or its bytes in ``bytes``).
  package internal(set) var attributeValues: [AttributeValue?] = []
  /// Their types, in the same order.
  package internal(set) var attributeTypes: [AttributeType] = []
  /// Where a value read as bytes is in ``bytes`` (nil: in ``attributeValues``, or none), in
  /// the same order: a string's or URI's UTF-8 (when ASCII, which needs no check), a blob's
  /// bytes. No `String` or array is made per value for them.
  package internal(set) var byteRanges: [Range<Int>?] = []
  /// The bytes of the values read as bytes, back to back.
  package internal(set) var bytes: [UInt8] = []
  /// The entity's to-one relationships, sorted by name.
  package internal(set) var toOneNames: [String] = []
  /// Their targets, in the same order (nil: empty).
  package internal(set) var toOneTargets: [ObjectReference?] = []
  /// Values the model does not describe, by column (see ``ObjectRecord/extraColumns``).
  package internal(set) var extraColumns: [String: AttributeValue] = [:]

  init() {}

  /// The value of attribute `position` (of ``attributeNames``), wherever it was read to; nil
  /// when it has none.
  package func value(at position: Int) -> AttributeValue? {
    if let value = attributeValues[position] { return value }
    guard let range = byteRanges[position] else { return nil }
    let bytes = Array(bytes[range])
    switch attributeTypes[position] {
    case .string: return .string(String(decoding: bytes, as: UTF8.self))
    case .uri: return .uri(String(decoding: bytes, as: UTF8.self))
    case .uuid: return .uuid(bytes)
    case .transformable: return .transformed(bytes)
    default: return .data(bytes)
    }
  }

  /// Whether the bytes read for an attribute of `type` (in ``bytes``) are text, else a blob.
  package static func bytesAreText(_ type: AttributeType) -> Bool {
    type == .string || type == .uri
  }

  /// The row as a record.
  package var record: ObjectRecord {
    var record = ObjectRecord(entity: entity, primaryKey: primaryKey, version: version)
    for (position, name) in attributeNames.enumerated() {
      if let value = value(at: position) { record.attributes[name] = value }
    }
    for (name, target) in zip(toOneNames, toOneTargets) {
      if let target { record.toOne[name] = target }
    }
    record.extraColumns = extraColumns
    return record
  }
}
