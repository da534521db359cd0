import ObjectModel

extension ObjectBatch.Values {
  /// An empty column of the kind a batch keeps values of `type` in; nil for a type a batch does
  /// not keep by column (composite).
  package static func empty(for type: AttributeType) -> Self? {
    switch type {
    case .integer16, .integer32, .integer64: .integers([])
    case .boolean: .booleans([])
    case .double, .float, .date: .reals([])
    case .decimal, .string, .uri: .texts(ObjectBatch.Bytes(copying: [], ranges: []))
    case .uuid, .binaryData, .objectID, .undefined, .transformable:
      .blobs(ObjectBatch.Bytes(copying: [], ranges: []))
    case .composite: nil
    }
  }

  /// The values at `positions`, in that order.
  package func picking(_ positions: [Int]) -> Self {
    switch self {
    case .integers(let v): .integers(positions.map { v[$0] })
    case .booleans(let v): .booleans(positions.map { v[$0] })
    case .reals(let v): .reals(positions.map { v[$0] })
    case .texts(let v): .texts(v.picking(positions))
    case .blobs(let v): .blobs(v.picking(positions))
    }
  }

  /// Value `position` when it is an integer.
  package func integer(at position: Int) -> Int64? {
    guard case .integers(let v) = self else { return nil }
    return v[position]
  }
}

extension ObjectBatch.Bytes {
  /// The values at `positions`, in that order, in a buffer of their own.
  func picking(_ positions: [Int]) -> Self {
    var bytes: [UInt8] = []
    var ranges: [Range<Int>] = []
    ranges.reserveCapacity(positions.count)
    for position in positions {
      let start = bytes.count
      bytes.append(contentsOf: self[position])
      ranges.append(start..<bytes.count)
    }
    return Self(copying: bytes, ranges: ranges)
  }

  /// `count` values: `fill` where `records` (ascending) has none, this value's `n`th where
  /// `records[n]` is that position. The fill is kept once and every such value reads it.
  func filling(_ fill: [UInt8], records: [Int], count: Int) -> Self {
    var bytes = fill
    var out = [Range<Int>](repeating: 0..<fill.count, count: count)
    for (position, record) in records.enumerated() {
      let start = bytes.count
      bytes.append(contentsOf: self[position])
      out[record] = start..<bytes.count
    }
    return Self(copying: bytes, ranges: out)
  }
}

extension ObjectBatch.Attribute {
  /// This column in a batch of `count` objects with `value` given to every object that has
  /// none; nil when `value` is not of the column's kind.
  package func filled(with value: AttributeValue, count: Int) -> Self? {
    guard records.count < count else { return self }
    func interleave<T>(_ values: [T], _ fill: T) -> [T] {
      var out = [T](repeating: fill, count: count)
      for (position, record) in records.enumerated() { out[record] = values[position] }
      return out
    }
    let filled: ObjectBatch.Values
    switch (values, value) {
    case (.integers(let v), .integer(let fill)): filled = .integers(interleave(v, fill))
    case (.booleans(let v), .bool(let fill)): filled = .booleans(interleave(v, fill))
    case (.reals(let v), .double(let fill)), (.reals(let v), .date(let fill)):
      filled = .reals(interleave(v, fill))
    case (.texts(let v), .string(let text)), (.texts(let v), .decimal(let text)),
      (.texts(let v), .uri(let text)):
      filled = .texts(v.filling(Array(text.utf8), records: records, count: count))
    case (.blobs(let v), .data(let bytes)), (.blobs(let v), .uuid(let bytes)),
      (.blobs(let v), .transformed(let bytes)):
      filled = .blobs(v.filling(bytes, records: records, count: count))
    default: return nil
    }
    return Self(name: name, type: type, records: Array(0..<count), values: filled)
  }

  /// The same values under another attribute's name.
  package func renamed(_ name: String) -> Self {
    Self(name: name, type: type, records: records, values: values)
  }
}

extension ObjectBatch {
  /// The objects at `rows` (ascending positions) as a batch of their own, with their values,
  /// links and stored columns.
  package func picking(rows: [Int]) -> ObjectBatch {
    var place = [Int](repeating: -1, count: count)
    for (new, row) in rows.enumerated() { place[row] = new }
    /// The positions of `records` that are picked, and their new records.
    func kept(_ records: [Int]) -> (positions: [Int], records: [Int]) {
      var positions: [Int] = []
      var renumbered: [Int] = []
      for (position, record) in records.enumerated() where place[record] >= 0 {
        positions.append(position)
        renumbered.append(place[record])
      }
      return (positions, renumbered)
    }
    var picked = ObjectBatch(
      entity: entity, primaryKeys: rows.map { primaryKeys[$0] },
      versions: rows.map { versions[$0] })
    picked.attributes = attributes.map {
      let (positions, records) = kept($0.records)
      return Attribute(
        name: $0.name, type: $0.type, records: records, values: $0.values.picking(positions))
    }
    picked.toOne = toOne.map { column in
      let (positions, records) = kept(column.records)
      return ToOne(
        name: column.name, records: records, keys: positions.map { column.keys[$0] },
        entities: positions.map { column.entities[$0] })
    }
    picked.toMany = toMany.map { column in
      let (positions, records) = kept(column.records)
      return ToMany(name: column.name, records: records, rows: positions.map { column.rows[$0] })
    }
    picked.storedColumns = storedColumns.map {
      let (positions, records) = kept($0.records)
      return StoredColumn(name: $0.name, records: records, values: $0.values.picking(positions))
    }
    return picked
  }
}

extension ObjectBatch.Values {
  /// Which of the five kinds the values are.
  var kind: Int {
    switch self {
    case .integers: 0
    case .booleans: 1
    case .reals: 2
    case .texts: 3
    case .blobs: 4
    }
  }

  /// These values followed by `other`'s (of the same kind; nil otherwise).
  func appending(_ other: Self) -> Self? {
    switch (self, other) {
    case (.integers(let a), .integers(let b)): .integers(a + b)
    case (.booleans(let a), .booleans(let b)): .booleans(a + b)
    case (.reals(let a), .reals(let b)): .reals(a + b)
    case (.texts(let a), .texts(let b)): .texts(a.appending(b))
    case (.blobs(let a), .blobs(let b)): .blobs(a.appending(b))
    default: nil
    }
  }
}

extension ObjectBatch.Bytes {
  /// These values followed by `other`'s, in a buffer of their own.
  func appending(_ other: Self) -> Self {
    var bytes: [UInt8] = []
    var ranges: [Range<Int>] = []
    ranges.reserveCapacity(self.ranges.count + other.ranges.count)
    for part in [self, other] {
      for index in part.ranges.indices {
        let start = bytes.count
        bytes.append(contentsOf: part[index])
        ranges.append(start..<bytes.count)
      }
    }
    return Self(copying: bytes, ranges: ranges)
  }
}

extension ObjectBatch {
  /// The objects of `batches` (all of one entity) one batch after another, as one batch: a
  /// column of each name and kind of value that any of them has.
  package static func concatenating(_ batches: [ObjectBatch]) -> ObjectBatch? {
    guard let first = batches.first else { return nil }
    guard batches.count > 1 else { return first }
    var joined = ObjectBatch(
      entity: first.entity, primaryKeys: batches.flatMap(\.primaryKeys),
      versions: batches.flatMap(\.versions))
    var offsets: [Int] = []
    var offset = 0
    for batch in batches {
      offsets.append(offset)
      offset += batch.count
    }
    joined.attributes = Self.joinColumns(
      batches, offsets, \.attributes, key: { "\($0.name)/\($0.values.kind)" },
      records: \.records,
      make: { column, records, values in
        Attribute(name: column.name, type: column.type, records: records, values: values)
      }, values: \.values)
    joined.storedColumns = Self.joinColumns(
      batches, offsets, \.storedColumns, key: { "\($0.name)/\($0.values.kind)" },
      records: \.records,
      make: { column, records, values in
        StoredColumn(name: column.name, records: records, values: values)
      }, values: \.values)
    var toOne: [String: (records: [Int], keys: [Int64], entities: [String])] = [:]
    var toOneOrder: [String] = []
    var toMany: [String: (records: [Int], rows: [[(Int64, Int64?)]])] = [:]
    var toManyOrder: [String] = []
    for (batch, start) in zip(batches, offsets) {
      for column in batch.toOne {
        if toOne[column.name] == nil { toOneOrder.append(column.name) }
        toOne[column.name, default: ([], [], [])].records += column.records.map { $0 + start }
        toOne[column.name]!.keys += column.keys
        toOne[column.name]!.entities += column.entities
      }
      for column in batch.toMany {
        if toMany[column.name] == nil { toManyOrder.append(column.name) }
        toMany[column.name, default: ([], [])].records += column.records.map { $0 + start }
        toMany[column.name]!.rows += column.rows
      }
    }
    joined.toOne = toOneOrder.map {
      ToOne(
        name: $0, records: toOne[$0]!.records, keys: toOne[$0]!.keys, entities: toOne[$0]!.entities)
    }
    joined.toMany = toManyOrder.map {
      ToMany(name: $0, records: toMany[$0]!.records, rows: toMany[$0]!.rows)
    }
    return joined
  }

  /// The columns of `batches` by `key`, each with its parts' records moved by the batches'
  /// `offsets` and its values appended in order.
  private static func joinColumns<Column>(
    _ batches: [ObjectBatch], _ offsets: [Int], _ columns: (ObjectBatch) -> [Column],
    key: (Column) -> String, records: (Column) -> [Int],
    make: (Column, [Int], Values) -> Column, values: (Column) -> Values
  ) -> [Column] {
    var order: [String] = []
    var found: [String: (first: Column, records: [Int], values: Values)] = [:]
    for (batch, start) in zip(batches, offsets) {
      for column in columns(batch) {
        let name = key(column)
        let moved = records(column).map { $0 + start }
        if let held = found[name], let appended = held.values.appending(values(column)) {
          found[name] = (held.first, held.records + moved, appended)
        } else {
          order.append(name)
          found[name] = (column, moved, values(column))
        }
      }
    }
    return order.map { make(found[$0]!.first, found[$0]!.records, found[$0]!.values) }
  }
}
