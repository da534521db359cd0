extension ObjectBatch {
  /// The objects `picks` names (each a batch of `sources`, all of one entity, and a row of
  /// it), in that order, as one batch: a column for each name and kind of value any of the
  /// batches has, in the order in which the picks first meet them. How a chain of archives
  /// merges one entity's objects by key (``ArchiveFormat/ChainScanner``).
  ///
  /// Column by column: each source's rows are mapped to their places in its column once, then
  /// every value is copied from where it lies, so that no column is copied per object.
  package static func gathering(_ sources: [ObjectBatch], _ picks: [(source: Int, row: Int)])
    -> ObjectBatch
  {
    var gathered = ObjectBatch(
      entity: sources[picks.first?.source ?? 0].entity,
      primaryKeys: picks.map { sources[$0.source].primaryKeys[$0.row] },
      versions: picks.map { sources[$0.source].versions[$0.row] })
    let gatherer = ColumnGatherer(sources: sources, picks: picks)
    gathered.attributes = gatherer.gather(\.attributes, key: \.slot, records: \.records) {
      columns, found in
      let first = found.first(columns)
      return Attribute(
        name: first.name, type: first.type, records: found.records,
        values: found.values(columns.map { $0?.values }, like: first.values))
    }
    gathered.storedColumns = gatherer.gather(\.storedColumns, key: \.slot, records: \.records) {
      columns, found in
      let first = found.first(columns)
      return StoredColumn(
        name: first.name, records: found.records,
        values: found.values(columns.map { $0?.values }, like: first.values))
    }
    gathered.toOne = gatherer.gather(\.toOne, key: \.name, records: \.records) { columns, found in
      ToOne(
        name: found.first(columns).name, records: found.records,
        keys: found.map { columns[$0]!.keys[$1] }, entities: found.map { columns[$0]!.entities[$1] }
      )
    }
    gathered.toMany = gatherer.gather(\.toMany, key: \.name, records: \.records) {
      columns, found in
      ToMany(
        name: found.first(columns).name, records: found.records,
        rows: found.map { columns[$0]!.rows[$1] })
    }
    return gathered
  }
}

/// The columns of several batches gathered along picks of their rows
/// (``ObjectBatch/gathering(_:_:)``).
private struct ColumnGatherer {
  let sources: [ObjectBatch]
  let picks: [(source: Int, row: Int)]

  /// Where one output column's values come from: for each record of the output that has one,
  /// its source and its position in that source's column.
  struct Found {
    var records: [Int] = []
    var sources: [Int32] = []
    var positions: [Int32] = []

    /// The source column that gave the first value.
    func first<Column>(_ columns: [Column?]) -> Column { columns[Int(sources[0])]! }

    /// `value(source, position)` of each value found, in order.
    func map<T>(_ value: (Int, Int) -> T) -> [T] {
      var out: [T] = []
      out.reserveCapacity(records.count)
      for index in records.indices { out.append(value(Int(sources[index]), Int(positions[index]))) }
      return out
    }

    /// The values found, of the kind of `like`, read from each source's `values`.
    func values(_ values: [ObjectBatch.Values?], like: ObjectBatch.Values) -> ObjectBatch.Values {
      func typed<T>(_ extract: (ObjectBatch.Values) -> [T]?) -> [T] {
        let arrays = values.map { $0.flatMap(extract) ?? [] }
        return map { arrays[$0][$1] }
      }
      switch like {
      case .integers:
        return .integers(typed { if case .integers(let v) = $0 { v } else { nil } })
      case .booleans:
        return .booleans(typed { if case .booleans(let v) = $0 { v } else { nil } })
      case .reals:
        return .reals(typed { if case .reals(let v) = $0 { v } else { nil } })
      case .texts, .blobs:
        let buffers = values.map { values -> ObjectBatch.Bytes? in
          switch values {
          case .texts(let v)?, .blobs(let v)?: v
          default: nil
          }
        }
        var bytes: [UInt8] = []
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(records.count)
        for index in records.indices {
          let start = bytes.count
          bytes.append(contentsOf: buffers[Int(sources[index])]![Int(positions[index])])
          ranges.append(start..<bytes.count)
        }
        let gathered = ObjectBatch.Bytes(copying: bytes, ranges: ranges)
        if case .texts = like { return .texts(gathered) }
        return .blobs(gathered)
      }
    }
  }

  /// The output columns of the kind `columns` gives, one for each `key` some picked row has a
  /// value of, built by `make` from each source's column of that key (nil where it has none)
  /// and where the values are; in the order in which the picks first meet them.
  func gather<Column, Output>(
    _ columns: (ObjectBatch) -> [Column], key: (Column) -> String, records: (Column) -> [Int],
    make: ([Column?], Found) -> Output
  ) -> [Output] {
    var keys: [String] = []
    var slots: [String: Int] = [:]
    var bySlot: [[Column?]] = []
    var columnIndex: [[Int]] = []
    for (source, batch) in sources.enumerated() {
      for (index, column) in columns(batch).enumerated() {
        let name = key(column)
        let slot: Int
        if let known = slots[name] {
          slot = known
        } else {
          slot = keys.count
          slots[name] = slot
          keys.append(name)
          bySlot.append(Array(repeating: nil, count: sources.count))
          columnIndex.append(Array(repeating: 0, count: sources.count))
        }
        bySlot[slot][source] = column
        columnIndex[slot][source] = index
      }
    }
    var outputs: [(record: Int, column: Int, output: Output)] = []
    for slot in keys.indices {
      // Each source's rows, mapped to their positions in its column (-1: no value).
      let tables = bySlot[slot].enumerated().map { source, column -> [Int32] in
        guard let column else { return [] }
        var table = [Int32](repeating: -1, count: sources[source].count)
        for (position, record) in records(column).enumerated() { table[record] = Int32(position) }
        return table
      }
      var found = Found()
      for (record, pick) in picks.enumerated() {
        let table = tables[pick.source]
        guard !table.isEmpty, table[pick.row] >= 0 else { continue }
        found.records.append(record)
        found.sources.append(Int32(pick.source))
        found.positions.append(table[pick.row])
      }
      guard let firstRecord = found.records.first else { continue }
      let column = columnIndex[slot][Int(found.sources[0])]
      outputs.append((firstRecord, column, make(bySlot[slot], found)))
    }
    // As the picks meet them: by the first record with a value, then in its source's order.
    return outputs.sorted { ($0.record, $0.column) < ($1.record, $1.column) }.map(\.output)
  }
}

extension ObjectBatch.Attribute {
  /// Its output column when gathered: its name and the kind of its values.
  fileprivate var slot: String { "\(name)/\(values.kind)" }
}

extension ObjectBatch.StoredColumn {
  /// Its output column when gathered: its name and the kind of its values.
  fileprivate var slot: String { "\(name)/\(values.kind)" }
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
