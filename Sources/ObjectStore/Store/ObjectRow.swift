import ObjectModel

/// One object of a store, read column by column into buffers that are reused from row to row:
/// the fast path of a backup, with no dictionary per object. Its values are valid only inside
/// the call that hands it out; ``record`` makes a lasting ``ObjectRecord``.
package final class ObjectRow {
  /// The concrete entity's name.
  package internal(set) var entity = ""
  /// Identifies the layout of ``attributeNames`` and ``toOneNames``: equal for every row of
  /// one entity read by one reader.
  package internal(set) var layoutID = 0
  /// The primary key (`Z_PK`).
  package internal(set) var primaryKey: Int64 = 0
  /// The optimistic-lock version (`Z_OPT`).
  package internal(set) var version: Int64 = 0
  /// The entity's stored attributes, sorted by name.
  package internal(set) var attributeNames: [String] = []
  /// Their values, in the same order (nil: no value).
  package internal(set) var attributeValues: [AttributeValue?] = []
  /// The entity's to-one relationships, sorted by name.
  package internal(set) var toOneNames: [String] = []
  /// Their targets, in the same order (nil: empty).
  package internal(set) var toOneTargets: [ObjectReference?] = []
  /// Values the model does not describe, by column (see ``ObjectRecord/extraColumns``).
  package internal(set) var extraColumns: [String: AttributeValue] = [:]

  init() {}

  /// The row as a record.
  package var record: ObjectRecord {
    var record = ObjectRecord(entity: entity, primaryKey: primaryKey, version: version)
    for (name, value) in zip(attributeNames, attributeValues) {
      if let value { record.attributes[name] = value }
    }
    for (name, target) in zip(toOneNames, toOneTargets) {
      if let target { record.toOne[name] = target }
    }
    record.extraColumns = extraColumns
    return record
  }
}
