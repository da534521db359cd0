import ObjectModel
import SQLite

extension StoreLoader {
  /// Where each column of an entity's insert statement takes its value from in a batch.
  private enum Source {
    case attribute(Int)
    case foreignKey(Int)
    case foreignEntity(Int)
    case none
  }

  /// Inserts a batch of objects of one entity, with their many-to-many rows: the same rows as
  /// ``insert(_:manyToMany:)`` for each of ``ObjectBatch/records``, bound column by column
  /// from the batch's buffers.
  /// - Throws: ``StoreError`` naming the object that could not be inserted.
  package func insert(_ batch: ObjectBatch) throws(StoreError) {
    guard let layout else {
      throw StoreError(.unsupported, "prepare(model:entityRows:) first", path: path)
    }
    var current = 0
    do {
      try insertBatch(batch, layout: layout, current: &current)
    } catch let error as StoreError {
      throw error
    } catch {
      let reference =
        current < batch.count
        ? ObjectReference(entity: batch.entity, primaryKey: batch.primaryKeys[current])
          .description : batch.entity
      throw StoreError(
        .database, "cannot insert \(reference)", path: path, underlying: error as? SQLiteError)
    }
  }

  private func insertBatch(_ batch: ObjectBatch, layout: StoreLayout, current: inout Int) throws {
    let (statement, columns, names) = try insertStatement(for: batch.entity, layout: layout)
    // Texts and blobs are bound without a copy: no binding may outlive the batch.
    defer { statement.reset(clearBindings: true) }
    let entityNumber = Int64(layout.entityNumbers[batch.entity] ?? 0)
    var attributeIndex: [String: Int] = [:]
    for (position, attribute) in batch.attributes.enumerated() {
      attributeIndex[attribute.name] = position
    }
    var toOneIndex: [String: Int] = [:]
    for (position, column) in batch.toOne.enumerated() { toOneIndex[column.name] = position }
    let sources: [Source] = columns.map { column in
      switch column {
      case .attribute(let name, _): attributeIndex[name].map(Source.attribute) ?? .none
      case .foreignKey(let name): toOneIndex[name].map(Source.foreignKey) ?? .none
      case .foreignEntity(let name): toOneIndex[name].map(Source.foreignEntity) ?? .none
      case .raw: .none
      }
    }
    // Entity numbers of the to-one targets, looked up once per column.
    let targetNumbers: [[Int64?]] = batch.toOne.map { column in
      column.entities.map { layout.entityNumbers[$0].map(Int64.init) }
    }
    let joins = try batch.toMany.map { column -> (StoreLayout.Join, Statement) in
      guard let join = join(for: batch.entity, column.name, layout: layout) else {
        throw StoreError(
          .modelMismatch, "\(batch.entity).\(column.name) has no join table", path: path)
      }
      return (join, try joinStatement(join))
    }
    // The next value of each column, of the extra columns and of each join.
    var attributeNext = [Int](repeating: 0, count: batch.attributes.count)
    var toOneNext = [Int](repeating: 0, count: batch.toOne.count)
    var toManyNext = [Int](repeating: 0, count: batch.toMany.count)
    var storedNext = [Int](repeating: 0, count: batch.storedColumns.count)
    let permitted = storedColumns(of: batch.entity, layout: layout)
    let storedParameters = try batch.storedColumns.map { column in
      guard permitted.contains(column.name), let index = names.firstIndex(of: column.name) else {
        let first = ObjectReference(
          entity: batch.entity, primaryKey: batch.primaryKeys[column.records.first ?? 0])
        throw StoreError(
          .modelMismatch,
          "\(first) has a value for column \(column.name), which its table lacks", path: path)
      }
      return index + 1
    }
    for record in 0..<batch.count {
      current = record
      try statement.bind(batch.primaryKeys[record], at: 1)
      try statement.bind(entityNumber, at: 2)
      try statement.bind(batch.versions[record], at: 3)
      for (offset, source) in sources.enumerated() {
        let parameter = offset + 4
        switch source {
        // The batch's columns are read in place, never copied out (a copy retains each of
        // its arrays, once per value).
        case .attribute(let index):
          let next = attributeNext[index]
          guard next < batch.attributes[index].records.count,
            batch.attributes[index].records[next] == record
          else {
            try statement.bindNull(at: parameter)
            continue
          }
          attributeNext[index] = next + 1
          try bind(
            batch.attributes[index].values, next,
            decimal: batch.attributes[index].type == .decimal, to: statement, at: parameter)
        case .foreignKey(let index), .foreignEntity(let index):
          let next = toOneNext[index]
          guard next < batch.toOne[index].records.count,
            batch.toOne[index].records[next] == record
          else {
            try statement.bindNull(at: parameter)
            continue
          }
          if case .foreignKey = source {
            try statement.bind(batch.toOne[index].keys[next], at: parameter)
          } else if let number = targetNumbers[index][next] {
            try statement.bind(number, at: parameter)
          } else {
            try statement.bindNull(at: parameter)
          }
        case .none:
          try statement.bindNull(at: parameter)
        }
      }
      // A to-one's key and entity columns read the same value: advance once both are bound.
      for index in toOneNext.indices
      where toOneNext[index] < batch.toOne[index].records.count
        && batch.toOne[index].records[toOneNext[index]] == record
      {
        toOneNext[index] += 1
      }
      // Values kept as stored override their column.
      for (index, column) in batch.storedColumns.enumerated() {
        let next = storedNext[index]
        guard next < column.records.count, column.records[next] == record else { continue }
        storedNext[index] = next + 1
        try bind(column.values, next, decimal: false, to: statement, at: storedParameters[index])
      }
      try statement.run()
      for (index, column) in batch.toMany.enumerated() {
        let next = toManyNext[index]
        guard next < column.records.count, column.records[next] == record else { continue }
        toManyNext[index] = next + 1
        let (join, insert) = joins[index]
        for (destination, order) in column.rows[next] {
          try insert.bind(batch.primaryKeys[record], at: 1)
          try insert.bind(destination, at: 2)
          if join.orderColumn != nil {
            if let order { try insert.bind(order, at: 3) } else { try insert.bindNull(at: 3) }
          }
          try insert.run()
        }
      }
    }
    current = batch.count
  }

  /// Binds value `position` of `values` as Core Data stores it (``SQLValues``): a decimal's
  /// text as the double it spells, when it spells one.
  @inline(__always)
  private func bind(
    _ values: ObjectBatch.Values, _ position: Int, decimal: Bool, to statement: Statement,
    at parameter: Int
  ) throws {
    switch values {
    case .integers(let v): try statement.bind(v[position], at: parameter)
    case .booleans(let v): try statement.bind(Int64(v[position] ? 1 : 0), at: parameter)
    case .reals(let v): try statement.bind(v[position], at: parameter)
    case .texts(let v):
      if decimal {
        let text = String(decoding: v[position], as: UTF8.self)
        if let number = Double(text) {
          try statement.bind(number, at: parameter)
          return
        }
      }
      // The batch outlives the statement's run: its bytes need no copy.
      try statement.bindUnsafe(text: v[position], at: parameter)
    case .blobs(let v): try statement.bindUnsafe(blob: v[position], at: parameter)
    }
  }
}
