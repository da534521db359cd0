import ObjectModel
import ObjectStore

/// What migrating a batch of archived objects by columns gave.
package enum ColumnMigration {
  /// The objects at the target version, as a batch the new store's loader binds.
  case migrated(ObjectBatch)
  /// Every object was dropped (a hop removes their entity).
  case dropped
  /// A hop changes these objects in a way only object by object does (a conversion, a
  /// generated value, an extraction, a custom stage, a link stored elsewhere at the target):
  /// migrate each of ``ObjectBatch/records`` instead. Nothing was counted.
  case objectByObject
}

extension MigrationRun {
  /// Migrates a batch of archived objects of one entity through every hop by columns, when
  /// every hop can (see ``ColumnMigration/objectByObject``): unchanged columns stay as decoded,
  /// added attributes are filled with their defaults in one column, dropped ones left out. The
  /// counts, the refusals and the rows written are those of migrating each object.
  ///
  /// `layout` is the new store's: values kept as stored are given its columns. Nil in a dry
  /// run, when nothing is written.
  /// - Throws: ``MigrationError`` naming the first object without a value for a required
  ///   attribute that has no default.
  package func migrate(_ batch: ObjectBatch, into layout: StoreLayout?) throws(MigrationError)
    -> ColumnMigration
  {
    var droppedValues: [String: Int] = [:]
    guard var objects = columnObjects(batch, droppedValues: &droppedValues) else {
      return .objectByObject
    }
    var counts = states.map(\.counts)
    var isDropped = false
    for (index, hop) in plan.hops.enumerated() {
      guard !plan.stages(of: hop).contains(where: { $0.perObject != nil }) else {
        return .objectByObject
      }
      let entity = objects.batch.entity
      guard hop.rules[entity] != nil else {
        counts[index][entity, default: MigrationHop.Counts()].dropped += objects.batch.count
        isDropped = true
        break
      }
      guard let rule = hop.columnRule(for: entity),
        let next = try hop.apply(rule, to: objects, counts: &counts[index])
      else { return .objectByObject }
      objects = next
    }
    var migrated = objects.batch
    if !isDropped, let layout {
      guard let stored = storedColumns(of: objects, in: layout),
        migrated.toMany.allSatisfy({
          layout.join(for: migrated.entity, relationship: $0.name) != nil
        })
      else { return .objectByObject }
      migrated.storedColumns = stored
    }
    for (index, state) in states.enumerated() { state.counts = counts[index] }
    droppedColumns.merge(droppedValues, uniquingKeysWith: +)
    return isDropped ? .dropped : .migrated(migrated)
  }

  /// The batch's stored values by meaning (as ``migrating(_:manyToMany:)`` reads a record's
  /// extra columns), counting those of columns the archive's model does not describe into
  /// `droppedValues`; nil when an owner column holds something other than keys.
  private func columnObjects(_ batch: ObjectBatch, droppedValues: inout [String: Int])
    -> ColumnObjects?
  {
    let shape = sourceShape(batch.entity)
    var stored: [(meaning: StoredShape.Meaning, column: ObjectBatch.StoredColumn)] = []
    for column in batch.storedColumns {
      let label = "\(shape.table).\(column.name)"
      switch shape.meaning(ofColumn: column.name) {
      case .order(let name):
        // A place without its link is not read as one: it is a value the model does not
        // describe.
        let linked = batch.toOne.first { $0.name == name }?.records ?? []
        let orphans = column.records.count - Self.common(column.records, linked)
        if orphans > 0 { droppedValues[label, default: 0] += orphans }
        stored.append((.order(name), column))
      case .owner(let entity, let name):
        guard case .integers = column.values else { return nil }
        stored.append((.owner(entity, name), column))
      case let meaning?:
        stored.append((meaning, column))
      case nil:
        droppedValues[label, default: 0] += column.records.count
      }
    }
    var objects = batch
    objects.storedColumns = []
    return ColumnObjects(batch: objects, stored: stored)
  }

  /// The stored columns of migrated `objects` in the new store's `layout`: attribute values
  /// kept as stored, and the places and owner keys of links (a place missing given as the
  /// object's primary key, as ``ObjectStore/ObjectValueWriter`` gives it); nil when an owner link is kept
  /// in another table.
  private func storedColumns(of objects: ColumnObjects, in layout: StoreLayout)
    -> [ObjectBatch.StoredColumn]?
  {
    let batch = objects.batch
    let shape = StoredShape(entity: batch.entity, layout: layout)
    var byMeaning: [StoredShape.Meaning: ObjectBatch.StoredColumn] = [:]
    for (meaning, column) in objects.stored { byMeaning[meaning] = column }
    var columns: [ObjectBatch.StoredColumn] = []
    for (meaning, column) in objects.stored {
      guard case .attribute = meaning, let stored = shape.column(for: meaning) else { continue }
      columns.append(
        ObjectBatch.StoredColumn(name: stored, records: column.records, values: column.values))
    }
    for toOne in batch.toOne {
      guard let column = shape.column(for: .order(toOne.name)) else { continue }
      columns.append(
        ObjectBatch.StoredColumn(
          name: column, records: toOne.records,
          values: .integers(
            Self.places(of: toOne.records, in: byMeaning[.order(toOne.name)], batch: batch))))
    }
    for (meaning, keys) in objects.stored {
      guard case .owner(let entity, let name) = meaning else { continue }
      // An owner's key kept in another table than the objects' is written object by object.
      guard let column = shape.column(for: meaning) else { return nil }
      columns.append(
        ObjectBatch.StoredColumn(name: column, records: keys.records, values: keys.values))
      if let order = shape.column(for: .ownerOrder(entity, name)) {
        columns.append(
          ObjectBatch.StoredColumn(
            name: order, records: keys.records,
            values: .integers(
              Self.places(
                of: keys.records, in: byMeaning[.ownerOrder(entity, name)], batch: batch))))
      }
    }
    return columns
  }

  /// The place of each object at `records` (ascending): its integer value in `stored`, else
  /// its primary key.
  private static func places(
    of records: [Int], in stored: ObjectBatch.StoredColumn?, batch: ObjectBatch
  ) -> [Int64] {
    var places: [Int64] = []
    places.reserveCapacity(records.count)
    var position = 0
    let known = stored?.records ?? []
    for record in records {
      while position < known.count && known[position] < record { position += 1 }
      if position < known.count, known[position] == record,
        let place = stored?.values.integer(at: position)
      {
        places.append(place)
      } else {
        places.append(batch.primaryKeys[record])
      }
    }
    return places
  }

  /// How many positions two ascending lists share.
  private static func common(_ a: [Int], _ b: [Int]) -> Int {
    var i = 0
    var j = 0
    var shared = 0
    while i < a.count && j < b.count {
      if a[i] == b[j] {
        shared += 1
        i += 1
        j += 1
      } else if a[i] < b[j] {
        i += 1
      } else {
        j += 1
      }
    }
    return shared
  }
}
