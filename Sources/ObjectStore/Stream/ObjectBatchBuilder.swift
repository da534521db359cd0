import ObjectModel

/// Objects of one entity gathered row by row, as a store reads them (``ObjectRow`` and its
/// join rows), into an ``ObjectBatch``: what a store source gives on the object stream, in
/// the shape an archive's chunk decodes to, so that a sink binds it and a migration moves it
/// column by column.
package struct ObjectBatchBuilder {
  /// The entity of the objects.
  package let entity: String
  private var keys: [Int64] = []
  private var versions: [Int64] = []
  private var attributes: [Column] = []
  private var attributeSlots: [Int] = []
  private var attributeLayout = -1
  private var toOne: [(name: String, records: [Int], keys: [Int64], entities: [String])] = []
  private var toMany: [(name: String, records: [Int], rows: [[(Int64, Int64?)]])] = []
  private var stored: [Column] = []
  private var storedSlots: [StoredKey: Int] = [:]
  /// The bytes of the texts and blobs gathered so far.
  package private(set) var byteCount = 0

  /// A column while it is gathered: the objects with a value, and the values of one kind.
  private struct Column {
    let name: String
    let type: AttributeType
    let kind: Kind
    var records: [Int] = []
    var integers: [Int64] = []
    var booleans: [Bool] = []
    var reals: [Double] = []
    var bytes: [UInt8] = []
    var ranges: [Range<Int>] = []

    var values: ObjectBatch.Values {
      switch kind {
      case .integers: .integers(integers)
      case .booleans: .booleans(booleans)
      case .reals: .reals(reals)
      case .texts: .texts(ObjectBatch.Bytes(copying: bytes, ranges: ranges))
      case .blobs: .blobs(ObjectBatch.Bytes(copying: bytes, ranges: ranges))
      }
    }
  }

  /// The kind of values a column holds.
  private enum Kind {
    case integers, booleans, reals, texts, blobs

    /// The kind of an attribute of `type`, as an archive's chunk decodes it.
    init(_ type: AttributeType) {
      switch type {
      case .integer16, .integer32, .integer64: self = .integers
      case .boolean: self = .booleans
      case .double, .float, .date: self = .reals
      case .decimal, .string, .uri: self = .texts
      default: self = .blobs
      }
    }

    /// The kind of a value kept as stored.
    init?(stored value: AttributeValue) {
      switch value {
      case .integer: self = .integers
      case .double: self = .reals
      case .string: self = .texts
      case .data: self = .blobs
      default: return nil
      }
    }
  }

  /// A stored column with the kind of its values: one column may hold values of several.
  private struct StoredKey: Hashable {
    let column: String
    let kind: Kind
  }

  /// An empty batch of `entity`'s objects.
  package init(entity: String) { self.entity = entity }

  /// The number of objects gathered.
  package var count: Int { keys.count }

  /// Adds the object `row` holds, with its many-to-many rows by relationship (in the same
  /// order for every object). A store's reader gives each attribute a value of its type's
  /// kind; a value stored in another class travels as a stored column.
  package mutating func add(
    _ row: ObjectRow, manyToMany: [(name: String, rows: [JoinCursor.Pair])] = []
  ) {
    if row.layoutID != attributeLayout {
      attributeLayout = row.layoutID
      attributeSlots = zip(row.attributeNames, row.attributeTypes).map { name, type in
        if let known = attributes.firstIndex(where: { $0.name == name && $0.type == type }) {
          return known
        }
        attributes.append(Column(name: name, type: type, kind: Kind(type)))
        return attributes.count - 1
      }
    }
    let record = keys.count
    keys.append(row.primaryKey)
    versions.append(row.version)
    for (position, slot) in attributeSlots.enumerated() {
      if let range = row.byteRanges[position] {
        byteCount += Self.append(row.bytes[range], to: &attributes[slot], record: record)
      } else if let value = row.attributeValues[position] {
        byteCount += Self.append(value, to: &attributes[slot], record: record)
      }
    }
    for (name, target) in zip(row.toOneNames, row.toOneTargets) {
      guard let target else { continue }
      let slot =
        toOne.firstIndex { $0.name == name }
        ?? {
          toOne.append((name, [], [], []))
          return toOne.count - 1
        }()
      toOne[slot].records.append(record)
      toOne[slot].keys.append(target.primaryKey)
      toOne[slot].entities.append(target.entity)
    }
    for (name, rows) in manyToMany where !rows.isEmpty {
      let slot =
        toMany.firstIndex { $0.name == name }
        ?? {
          toMany.append((name, [], []))
          return toMany.count - 1
        }()
      toMany[slot].records.append(record)
      toMany[slot].rows.append(rows.map { ($0.destination, $0.order) })
    }
    for (column, value) in row.extraColumns.sorted(by: { $0.key < $1.key }) {
      guard let kind = Kind(stored: value) else { continue }
      let key = StoredKey(column: column, kind: kind)
      let slot =
        storedSlots[key]
        ?? {
          stored.append(Column(name: column, type: .undefined, kind: kind))
          storedSlots[key] = stored.count - 1
          return stored.count - 1
        }()
      byteCount += Self.append(value, to: &stored[slot], record: record)
    }
  }

  /// The objects gathered, as a batch; the builder is empty again.
  package mutating func build() -> ObjectBatch {
    var batch = ObjectBatch(entity: entity, primaryKeys: keys, versions: versions)
    batch.attributes = attributes.filter { !$0.records.isEmpty }.map {
      ObjectBatch.Attribute(name: $0.name, type: $0.type, records: $0.records, values: $0.values)
    }
    batch.toOne = toOne.map {
      ObjectBatch.ToOne(name: $0.name, records: $0.records, keys: $0.keys, entities: $0.entities)
    }
    batch.toMany = toMany.map {
      ObjectBatch.ToMany(name: $0.name, records: $0.records, rows: $0.rows)
    }
    batch.storedColumns = stored.map {
      ObjectBatch.StoredColumn(name: $0.name, records: $0.records, values: $0.values)
    }
    self = ObjectBatchBuilder(entity: entity)
    return batch
  }

  /// Appends `bytes` as `record`'s value; returns how many bytes that is.
  private static func append(_ bytes: ArraySlice<UInt8>, to column: inout Column, record: Int)
    -> Int
  {
    column.records.append(record)
    let start = column.bytes.count
    column.bytes.append(contentsOf: bytes)
    column.ranges.append(start..<column.bytes.count)
    return bytes.count
  }

  /// Appends `value` as `record`'s value; returns how many bytes of text or blob that is.
  private static func append(_ value: AttributeValue, to column: inout Column, record: Int)
    -> Int
  {
    switch (column.kind, value) {
    case (.integers, .integer(let v)):
      column.records.append(record)
      column.integers.append(v)
    case (.booleans, .bool(let v)):
      column.records.append(record)
      column.booleans.append(v)
    case (.reals, .double(let v)), (.reals, .date(let v)):
      column.records.append(record)
      column.reals.append(v)
    case (.texts, .string(let v)), (.texts, .uri(let v)), (.texts, .decimal(let v)):
      return append(Array(v.utf8)[...], to: &column, record: record)
    case (.blobs, .data(let v)), (.blobs, .uuid(let v)), (.blobs, .transformed(let v)):
      return append(v[...], to: &column, record: record)
    case (_, .composite):
      // A row holds a composite's elements, a column each.
      break
    default:
      preconditionFailure("a \(value) in a column of \(column.kind) (\(column.name))")
    }
    return 0
  }
}
