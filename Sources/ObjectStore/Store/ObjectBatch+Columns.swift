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
    Self(joining: positions.lazy.map { self[$0] })
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
