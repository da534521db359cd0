import ObjectModel
import SQLite

/// Objects of one entity held as columns: what a restore decodes a chunk into on one thread and
/// ``StoreLoader/insert(_:)-(ObjectBatch)`` binds on another, with no dictionary or string
/// made per value. ``records`` gives the same objects as ``ObjectRecord``s.
///
/// Every column lists the objects that have a value (`records`, ascending positions in the
/// batch) and their values in the same order.
package struct ObjectBatch: Sendable {
  /// The concrete entity of every object.
  package let entity: String
  /// Each object's primary key (`Z_PK`).
  package let primaryKeys: [Int64]
  /// Each object's optimistic-lock version (`Z_OPT`).
  package let versions: [Int64]
  /// Attribute columns.
  package var attributes: [Attribute] = []
  /// To-one relationship columns.
  package var toOne: [ToOne] = []
  /// Many-to-many relationship columns.
  package var toMany: [ToMany] = []
  /// Values the model does not describe (``ObjectRecord/extraColumns``), by stored column.
  package var storedColumns: [StoredColumn] = []

  /// A batch of `primaryKeys.count` objects of `entity`, without values yet.
  package init(entity: String, primaryKeys: [Int64], versions: [Int64]) {
    precondition(primaryKeys.count == versions.count)
    self.entity = entity
    self.primaryKeys = primaryKeys
    self.versions = versions
  }

  /// The number of objects.
  package var count: Int { primaryKeys.count }

  /// Values of one kind, in order.
  package enum Values: Sendable {
    /// Integers (integer attributes).
    case integers([Int64])
    /// Booleans.
    case booleans([Bool])
    /// Doubles (double, float and date attributes).
    case reals([Double])
    /// UTF-8 texts (string, URI and decimal attributes).
    case texts(Bytes)
    /// Byte strings (binary, UUID, transformable attributes).
    case blobs(Bytes)

    /// How many values there are.
    package var count: Int {
      switch self {
      case .integers(let v): v.count
      case .booleans(let v): v.count
      case .reals(let v): v.count
      case .texts(let v), .blobs(let v): v.ranges.count
      }
    }
  }

  /// Byte strings back to back in one buffer of fixed address, so that a statement can bind
  /// them without copying (``Statement/bindUnsafe(text:at:)``) while the batch lives.
  package struct Bytes: Sendable {
    private let storage: Storage
    /// Each value's range of the buffer.
    package let ranges: [Range<Int>]

    /// Memory allocated once, never changed after it is filled, given back with the last
    /// batch that holds it (to ``RecycledBuffers``, for the next batch's values). It may be
    /// larger than asked for.
    private final class Storage: @unchecked Sendable {
      let buffer: UnsafeMutableRawBufferPointer

      init(copying bytes: UnsafeRawBufferPointer) {
        buffer = RecycledBuffers.shared.take(byteCount: bytes.count)
        buffer.copyMemory(from: bytes)
      }

      init(byteCount: Int) {
        buffer = RecycledBuffers.shared.take(byteCount: byteCount)
      }

      deinit { RecycledBuffers.shared.giveBack(buffer) }
    }

    /// Values at `ranges` of a copy of `bytes`.
    package init(copying bytes: [UInt8], ranges: [Range<Int>]) {
      self = bytes.withUnsafeBytes { Bytes(copying: $0, ranges: ranges) }
    }

    /// Values at `ranges` of a copy of `bytes`.
    package init(copying bytes: UnsafeRawBufferPointer, ranges: [Range<Int>]) {
      storage = Storage(copying: bytes)
      self.ranges = ranges
    }

    /// Values at `ranges` of a buffer of at least `byteCount` bytes that `fill` writes.
    /// - Throws: what `fill` throws.
    package init<Failure: Error>(
      byteCount: Int, ranges: [Range<Int>],
      filling fill: (UnsafeMutableRawBufferPointer) throws(Failure) -> Void
    ) throws(Failure) {
      storage = Storage(byteCount: byteCount)
      try fill(storage.buffer)
      self.ranges = ranges
    }

    /// `values`, in order, each copied once into a buffer of their total size (read twice:
    /// their lengths, then their bytes).
    package init<Values: Collection>(joining values: Values)
    where Values.Element == UnsafeRawBufferPointer {
      var ranges: [Range<Int>] = []
      ranges.reserveCapacity(values.underestimatedCount)
      var total = 0
      for value in values {
        ranges.append(total..<total + value.count)
        total += value.count
      }
      storage = Storage(byteCount: total)
      for (value, range) in zip(values, ranges) {
        UnsafeMutableRawBufferPointer(rebasing: storage.buffer[range]).copyMemory(from: value)
      }
      self.ranges = ranges
    }

    /// The address of the buffer that ``ranges`` index: valid while this value (or a copy of
    /// it) lives.
    package var baseAddress: UnsafeRawPointer { UnsafeRawPointer(storage.buffer.baseAddress!) }

    /// Value `index`: valid while this value (or a copy of it) lives.
    package subscript(index: Int) -> UnsafeRawBufferPointer {
      UnsafeRawBufferPointer(rebasing: storage.buffer[ranges[index]])
    }
  }

  /// An attribute's values.
  package struct Attribute: Sendable {
    /// The attribute.
    package let name: String
    /// Its type, which tells how ``values`` read (a decimal's text is its decimal).
    package let type: AttributeType
    /// The objects that have a value.
    package let records: [Int]
    /// Their values.
    package let values: Values

    /// A column of `values` for the objects at `records`.
    package init(name: String, type: AttributeType, records: [Int], values: Values) {
      precondition(records.count == values.count)
      self.name = name
      self.type = type
      self.records = records
      self.values = values
    }
  }

  /// A stored column's values, as stored: integers, reals, texts or blobs.
  package struct StoredColumn: Sendable {
    /// The column.
    package let name: String
    /// The objects that have a value.
    package let records: [Int]
    /// Their values (never ``Values/booleans(_:)``).
    package let values: Values

    /// A column of `values` for the objects at `records`.
    package init(name: String, records: [Int], values: Values) {
      precondition(records.count == values.count)
      self.name = name
      self.records = records
      self.values = values
    }

    /// Value `position` as stored.
    func value(at position: Int) -> AttributeValue {
      switch values {
      case .integers(let v): .integer(v[position])
      case .booleans(let v): .integer(v[position] ? 1 : 0)
      case .reals(let v): .double(v[position])
      case .texts(let v): .string(String(decoding: v[position], as: UTF8.self))
      case .blobs(let v): .data(Array(v[position]))
      }
    }
  }

  /// A to-one relationship's targets.
  package struct ToOne: Sendable {
    /// The relationship.
    package let name: String
    /// The objects whose relationship is set.
    package let records: [Int]
    /// Their targets' primary keys.
    package let keys: [Int64]
    /// Their targets' entities.
    package let entities: [String]

    /// A column of targets for the objects at `records`.
    package init(name: String, records: [Int], keys: [Int64], entities: [String]) {
      precondition(records.count == keys.count && keys.count == entities.count)
      self.name = name
      self.records = records
      self.keys = keys
      self.entities = entities
    }
  }

  /// A many-to-many relationship's join rows.
  package struct ToMany: Sendable {
    /// The relationship.
    package let name: String
    /// The objects that have rows.
    package let records: [Int]
    /// Each of those objects' rows: destination keys and order keys.
    package let rows: [[(Int64, Int64?)]]

    /// The rows of the objects at `records`.
    package init(name: String, records: [Int], rows: [[(Int64, Int64?)]]) {
      precondition(records.count == rows.count)
      self.name = name
      self.records = records
      self.rows = rows
    }
  }

  /// The objects as records, with their many-to-many rows by relationship.
  package var records: [(ObjectRecord, [String: [(Int64, Int64?)]])] {
    var records = zip(primaryKeys, versions).map {
      ObjectRecord(entity: entity, primaryKey: $0, version: $1)
    }
    var links = [[String: [(Int64, Int64?)]]](repeating: [:], count: count)
    for attribute in attributes {
      for (position, record) in attribute.records.enumerated() {
        records[record].attributes[attribute.name] = attribute.value(at: position)
      }
    }
    for column in toOne {
      for (position, record) in column.records.enumerated() {
        records[record].toOne[column.name] = ObjectReference(
          entity: column.entities[position], primaryKey: column.keys[position])
      }
    }
    for column in toMany {
      for (record, rows) in zip(column.records, column.rows) { links[record][column.name] = rows }
    }
    for column in storedColumns {
      for (position, record) in column.records.enumerated() {
        records[record].extraColumns[column.name] = column.value(at: position)
      }
    }
    return Array(zip(records, links))
  }
}

extension ObjectBatch.Attribute {
  /// Value `position` as an attribute value of the attribute's type.
  func value(at position: Int) -> AttributeValue {
    switch values {
    case .integers(let v): return .integer(v[position])
    case .booleans(let v): return .bool(v[position])
    case .reals(let v): return type == .date ? .date(v[position]) : .double(v[position])
    case .texts(let v):
      let text = String(decoding: v[position], as: UTF8.self)
      switch type {
      case .decimal: return .decimal(text)
      case .uri: return .uri(text)
      default: return .string(text)
      }
    case .blobs(let v):
      let bytes = Array(v[position])
      switch type {
      case .uuid: return .uuid(bytes)
      case .transformable: return .transformed(bytes)
      default: return .data(bytes)
      }
    }
  }
}

extension ObjectBatch.Attribute {
  /// Value `position` as the loader binds it (``SQLValues``).
  func sqliteValue(at position: Int) -> SQLiteValue { SQLValues.sqlite(value(at: position)) }
}

extension ObjectBatch.StoredColumn {
  /// Value `position` as the loader binds it: as stored.
  func sqliteValue(at position: Int) -> SQLiteValue { SQLValues.sqlite(raw: value(at: position)) }
}
