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

/// The values of one output column being gathered (``ObjectBatch/gathering(_:_:)``).
private struct ValueGatherer {
  var integers: [Int64] = []
  var booleans: [Bool] = []
  var reals: [Double] = []
  var bytes: [UInt8] = []
  var ranges: [Range<Int>] = []
  var records: [Int] = []

  mutating func append(_ values: ObjectBatch.Values, at position: Int, record: Int) {
    records.append(record)
    switch values {
    case .integers(let v): integers.append(v[position])
    case .booleans(let v): booleans.append(v[position])
    case .reals(let v): reals.append(v[position])
    case .texts(let v), .blobs(let v):
      let start = bytes.count
      bytes.append(contentsOf: v[position])
      ranges.append(start..<bytes.count)
    }
  }

  /// The values gathered, of the kind of `like`.
  func values(like: ObjectBatch.Values) -> ObjectBatch.Values {
    switch like {
    case .integers: .integers(integers)
    case .booleans: .booleans(booleans)
    case .reals: .reals(reals)
    case .texts: .texts(ObjectBatch.Bytes(copying: bytes, ranges: ranges))
    case .blobs: .blobs(ObjectBatch.Bytes(copying: bytes, ranges: ranges))
    }
  }
}

extension ObjectBatch.Values {
  /// Which of the five kinds the values are.
  fileprivate var kind: Int {
    switch self {
    case .integers: 0
    case .booleans: 1
    case .reals: 2
    case .texts: 3
    case .blobs: 4
    }
  }
}

extension ObjectBatch {
  /// The objects `picks` names (each a batch of `sources`, all of one entity, and a row of
  /// it), in that order, as one batch, in one pass over the picks: a column for each name and
  /// kind of value any of the batches has. How a chain of archives merges one entity's
  /// objects by key (``ArchiveFormat/ChainScanner``).
  package static func gathering(_ sources: [ObjectBatch], _ picks: [(source: Int, row: Int)])
    -> ObjectBatch
  {
    var gathered = ObjectBatch(
      entity: sources[picks.first?.source ?? 0].entity,
      primaryKeys: picks.map { sources[$0.source].primaryKeys[$0.row] },
      versions: picks.map { sources[$0.source].versions[$0.row] })
    /// Each source's column `records` as row → position (-1 for none), made once per source
    /// and column asked for.
    func positions(_ records: [Int], count: Int) -> [Int32] {
      var table = [Int32](repeating: -1, count: count)
      for (position, record) in records.enumerated() { table[record] = Int32(position) }
      return table
    }
    /// Gathers the columns `columns` gives of each source, matched by `key`.
    func gather<Column>(
      _ columns: (ObjectBatch) -> [Column], key: (Column) -> String, records: (Column) -> [Int],
      append: (inout ValueGatherer, Column, Int, Int) -> Void
    ) -> [(first: Column, gathered: ValueGatherer)] {
      var order: [String] = []
      var outputs: [String: (first: Column, gathered: ValueGatherer)] = [:]
      // Per source: its columns with their keys and position tables.
      var tables: [[(key: String, column: Column, positions: [Int32])]?] = Array(
        repeating: nil, count: sources.count)
      for (record, pick) in picks.enumerated() {
        if tables[pick.source] == nil {
          let batch = sources[pick.source]
          tables[pick.source] = columns(batch).map {
            (key($0), $0, positions(records($0), count: batch.count))
          }
        }
        for entry in tables[pick.source]! {
          let position = Int(entry.positions[pick.row])
          guard position >= 0 else { continue }
          if outputs[entry.key] == nil {
            order.append(entry.key)
            outputs[entry.key] = (entry.column, ValueGatherer())
          }
          append(&outputs[entry.key]!.gathered, entry.column, position, record)
        }
      }
      return order.map { outputs[$0]! }
    }
    gathered.attributes = gather(
      \.attributes, key: { "\($0.name)/\($0.values.kind)" }, records: \.records,
      append: { $0.append($1.values, at: $2, record: $3) }
    ).map {
      Attribute(
        name: $0.first.name, type: $0.first.type, records: $0.gathered.records,
        values: $0.gathered.values(like: $0.first.values))
    }
    gathered.storedColumns = gather(
      \.storedColumns, key: { "\($0.name)/\($0.values.kind)" }, records: \.records,
      append: { $0.append($1.values, at: $2, record: $3) }
    ).map {
      StoredColumn(
        name: $0.first.name, records: $0.gathered.records,
        values: $0.gathered.values(like: $0.first.values))
    }
    var oneOrder: [String] = []
    var ones: [String: (records: [Int], keys: [Int64], entities: [String])] = [:]
    var manyOrder: [String] = []
    var manies: [String: (records: [Int], rows: [[(Int64, Int64?)]])] = [:]
    var oneTables: [[(column: ToOne, positions: [Int32])]?] = Array(
      repeating: nil, count: sources.count)
    var manyTables: [[(column: ToMany, positions: [Int32])]?] = Array(
      repeating: nil, count: sources.count)
    for (record, pick) in picks.enumerated() {
      let batch = sources[pick.source]
      if oneTables[pick.source] == nil {
        oneTables[pick.source] = batch.toOne.map { ($0, positions($0.records, count: batch.count)) }
        manyTables[pick.source] = batch.toMany.map {
          ($0, positions($0.records, count: batch.count))
        }
      }
      for (column, table) in oneTables[pick.source]! {
        let position = Int(table[pick.row])
        guard position >= 0 else { continue }
        if ones[column.name] == nil { oneOrder.append(column.name) }
        ones[column.name, default: ([], [], [])].records.append(record)
        ones[column.name]!.keys.append(column.keys[position])
        ones[column.name]!.entities.append(column.entities[position])
      }
      for (column, table) in manyTables[pick.source]! {
        let position = Int(table[pick.row])
        guard position >= 0 else { continue }
        if manies[column.name] == nil { manyOrder.append(column.name) }
        manies[column.name, default: ([], [])].records.append(record)
        manies[column.name]!.rows.append(column.rows[position])
      }
    }
    gathered.toOne = oneOrder.map {
      ToOne(
        name: $0, records: ones[$0]!.records, keys: ones[$0]!.keys, entities: ones[$0]!.entities)
    }
    gathered.toMany = manyOrder.map {
      ToMany(name: $0, records: manies[$0]!.records, rows: manies[$0]!.rows)
    }
    return gathered
  }
}
