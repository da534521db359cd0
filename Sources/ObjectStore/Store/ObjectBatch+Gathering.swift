extension ObjectBatch {
  /// The objects `picks` names (each a batch of `sources`, all of one entity, and a row of
  /// it), in that order, as one batch: a column for each name and kind of value any of the
  /// batches has, in the order in which the picks first meet them. How a chain of archives
  /// merges one entity's objects by key (``ArchiveFormat/ChainScanner``).
  ///
  /// Column by column, run by run (picks of rows that follow each other in one batch): a
  /// column every row of its batch has gives a run's values as one slice; another is mapped
  /// row by row to its places, once per batch. No column is copied per object.
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
        keys: found.slices { columns[$0]!.keys[$1] },
        entities: found.slices { columns[$0]!.entities[$1] })
    }
    gathered.toMany = gatherer.gather(\.toMany, key: \.name, records: \.records) {
      columns, found in
      ToMany(
        name: found.first(columns).name, records: found.records,
        rows: found.slices { columns[$0]!.rows[$1] })
    }
    return gathered
  }
}

/// The columns of several batches gathered along picks of their rows
/// (``ObjectBatch/gathering(_:_:)``).
private struct ColumnGatherer {
  /// Picks of rows that follow each other in one batch: `rows` of source `source`, the
  /// output's records from `record` on.
  struct Run {
    var source: Int
    var rows: Range<Int>
    var record: Int
  }

  /// Values that follow each other in one source's column and in the output: `count` of
  /// them from `position` in the column, the output's records from `record` on.
  struct Segment {
    var source: Int
    var position: Int
    var record: Int
    var count: Int
  }

  let sources: [ObjectBatch]
  let runs: [Run]

  init(sources: [ObjectBatch], picks: [(source: Int, row: Int)]) {
    self.sources = sources
    var runs: [Run] = []
    for (record, pick) in picks.enumerated() {
      if let last = runs.last, last.source == pick.source, last.rows.upperBound == pick.row {
        runs[runs.count - 1].rows = last.rows.lowerBound..<pick.row + 1
      } else {
        runs.append(Run(source: pick.source, rows: pick.row..<pick.row + 1, record: record))
      }
    }
    self.runs = runs
  }

  /// Where one output column's values come from, in order.
  struct Found {
    var segments: [Segment] = []

    /// Adds `count` values from `position` of `source`'s column for the records from
    /// `record` on, joined to the last segment when they follow it.
    mutating func add(source: Int, position: Int, record: Int, count: Int) {
      if let last = segments.last, last.source == source,
        last.position + last.count == position, last.record + last.count == record
      {
        segments[segments.count - 1].count += count
      } else {
        segments.append(Segment(source: source, position: position, record: record, count: count))
      }
    }

    /// The output's records that have a value.
    var records: [Int] {
      var records: [Int] = []
      records.reserveCapacity(segments.reduce(0) { $0 + $1.count })
      for segment in segments {
        records.append(contentsOf: segment.record..<segment.record + segment.count)
      }
      return records
    }

    /// The source column that gave the first value.
    func first<Column>(_ columns: [Column?]) -> Column { columns[segments[0].source]! }

    /// Each segment's values, `slice(source, positions)`, one after another.
    func slices<T, S: Collection<T>>(_ slice: (Int, Range<Int>) -> S) -> [T] {
      var out: [T] = []
      for segment in segments {
        out.append(
          contentsOf: slice(segment.source, segment.position..<segment.position + segment.count))
      }
      return out
    }

    /// The values found, of the kind of `like`, read from each source's `values`.
    func values(_ values: [ObjectBatch.Values?], like: ObjectBatch.Values) -> ObjectBatch.Values {
      func typed<T>(_ extract: (ObjectBatch.Values) -> [T]?) -> [T] {
        let arrays = values.map { $0.flatMap(extract) ?? [] }
        return slices { arrays[$0][$1] }
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
        let gathered = ObjectBatch.Bytes(
          joining: segments.lazy.flatMap { segment in
            (segment.position..<segment.position + segment.count).lazy.map {
              buffers[segment.source]![$0]
            }
          })
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
      // Each source's column: every row has a value (its place is its row), or a map of the
      // rows to their places (-1: no value); nil where the source has no such column.
      let places = bySlot[slot].enumerated().map { source, column -> [Int32]?? in
        guard let column else { return nil }
        let held = records(column)
        guard held.count < sources[source].count else { return .some(nil) }
        var table = [Int32](repeating: -1, count: sources[source].count)
        for (position, record) in held.enumerated() { table[record] = Int32(position) }
        return table
      }
      var found = Found()
      for run in runs {
        guard let place = places[run.source] else { continue }
        guard let table = place else {
          found.add(
            source: run.source, position: run.rows.lowerBound, record: run.record,
            count: run.rows.count)
          continue
        }
        for (offset, row) in run.rows.enumerated() where table[row] >= 0 {
          found.add(
            source: run.source, position: Int(table[row]), record: run.record + offset, count: 1)
        }
      }
      guard let first = found.segments.first else { continue }
      let column = columnIndex[slot][first.source]
      outputs.append((first.record, column, make(bySlot[slot], found)))
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
