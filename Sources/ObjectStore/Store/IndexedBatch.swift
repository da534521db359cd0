import Foundation
import ObjectModel

/// An ``ObjectBatch`` whose values are found by object position in constant time: each
/// column's value position per object. Two batches' objects can then be compared in place,
/// column by column, without building either (``sameValues(at:as:at:pairing:)``), and the
/// objects that differ read as records (``record(at:)``): what comparing two archives as they
/// stream does.
package struct IndexedBatch: Sendable {
  /// The batch.
  package let batch: ObjectBatch
  /// Per column (attributes, to-one, many-to-many, stored columns), per object: the position
  /// of the object's value in the column, or -1 when it has none.
  private let attributeSlots: [[Int32]]
  private let toOneSlots: [[Int32]]
  private let toManySlots: [[Int32]]
  private let storedSlots: [[Int32]]

  /// Indexes `batch`.
  package init(_ batch: ObjectBatch) {
    self.batch = batch
    func slots(_ records: [Int]) -> [Int32] {
      var slots = [Int32](repeating: -1, count: batch.count)
      for (position, record) in records.enumerated() { slots[record] = Int32(position) }
      return slots
    }
    attributeSlots = batch.attributes.map { slots($0.records) }
    toOneSlots = batch.toOne.map { slots($0.records) }
    toManySlots = batch.toMany.map { slots($0.records) }
    storedSlots = batch.storedColumns.map { slots($0.records) }
  }

  /// The number of objects.
  package var count: Int { batch.count }

  /// Object `index`'s primary key.
  package func primaryKey(at index: Int) -> Int64 { batch.primaryKeys[index] }

  /// Object `index` as a record, with its many-to-many rows by relationship.
  package func record(at index: Int) -> (ObjectRecord, [String: [(Int64, Int64?)]]) {
    var record = ObjectRecord(
      entity: batch.entity, primaryKey: batch.primaryKeys[index], version: batch.versions[index])
    var links: [String: [(Int64, Int64?)]] = [:]
    for (column, slots) in zip(batch.attributes, attributeSlots) where slots[index] >= 0 {
      record.attributes[column.name] = column.value(at: Int(slots[index]))
    }
    for (column, slots) in zip(batch.toOne, toOneSlots) where slots[index] >= 0 {
      let position = Int(slots[index])
      record.toOne[column.name] = ObjectReference(
        entity: column.entities[position], primaryKey: column.keys[position])
    }
    for (column, slots) in zip(batch.toMany, toManySlots) where slots[index] >= 0 {
      links[column.name] = column.rows[Int(slots[index])]
    }
    for (column, slots) in zip(batch.storedColumns, storedSlots) where slots[index] >= 0 {
      record.extraColumns[column.name] = column.value(at: Int(slots[index]))
    }
    return (record, links)
  }

  /// How the columns of two batches pair up: by name, kind by kind; a column one batch lacks
  /// pairs with nothing (every object's value there is nil).
  package struct Pairing: Sendable {
    fileprivate let attributes: [(Int?, Int?)]
    fileprivate let toOne: [(Int?, Int?)]
    fileprivate let toMany: [(Int?, Int?)]
    fileprivate let stored: [(Int?, Int?)]

    /// The pairing of `left`'s columns with `right`'s.
    package init(_ left: IndexedBatch, _ right: IndexedBatch) {
      func pairs(_ left: [String], _ right: [String]) -> [(Int?, Int?)] {
        var result: [(Int?, Int?)] = left.enumerated().map {
          ($0.offset, right.firstIndex(of: $0.element))
        }
        for (index, name) in right.enumerated() where !left.contains(name) {
          result.append((nil, index))
        }
        return result
      }
      attributes = pairs(left.batch.attributes.map(\.name), right.batch.attributes.map(\.name))
      toOne = pairs(left.batch.toOne.map(\.name), right.batch.toOne.map(\.name))
      toMany = pairs(left.batch.toMany.map(\.name), right.batch.toMany.map(\.name))
      stored = pairs(
        left.batch.storedColumns.map(\.name), right.batch.storedColumns.map(\.name))
    }
  }

  /// Whether object `index` of this batch and object `otherIndex` of `other` hold the same
  /// values: attributes, stored columns, to-one targets and many-to-many rows (in their order),
  /// keys and optimistic-lock versions aside. False can also mean "not the same way": values
  /// held in different kinds of column, or a NaN; a caller reads such objects in full.
  /// - Parameter pairing: `Pairing(self, other)`.
  package func sameValues(
    at index: Int, as other: IndexedBatch, at otherIndex: Int, pairing: Pairing
  ) -> Bool {
    let (mine, theirs) = (batch, other.batch)
    let (at, otherAt) = (index, otherIndex)
    guard
      Self.allSame(
        pairing.attributes, attributeSlots, at, other.attributeSlots, otherAt,
        {
          Self.same(mine.attributes[$0].values, $1, theirs.attributes[$2].values, $3)
        }),
      Self.allSame(
        pairing.stored, storedSlots, at, other.storedSlots, otherAt,
        {
          Self.same(mine.storedColumns[$0].values, $1, theirs.storedColumns[$2].values, $3)
        }),
      Self.allSame(
        pairing.toOne, toOneSlots, at, other.toOneSlots, otherAt,
        {
          mine.toOne[$0].keys[$1] == theirs.toOne[$2].keys[$3]
            && mine.toOne[$0].entities[$1] == theirs.toOne[$2].entities[$3]
        })
    else { return false }
    return Self.allSame(pairing.toMany, toManySlots, at, other.toManySlots, otherAt) {
      let (rows, otherRows) = (mine.toMany[$0].rows[$1], theirs.toMany[$2].rows[$3])
      return rows.count == otherRows.count
        && zip(rows, otherRows).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
    }
  }

  /// Whether every pair of columns holds the same value for the two objects: both none, or
  /// both one that `same` (column, position, other column, other position) finds equal.
  @inline(__always)
  private static func allSame(
    _ pairs: [(Int?, Int?)], _ slots: [[Int32]], _ index: Int, _ otherSlots: [[Int32]],
    _ otherIndex: Int, _ same: (Int, Int, Int, Int) -> Bool
  ) -> Bool {
    for (left, right) in pairs {
      let mine = left.map { slots[$0][index] } ?? -1
      let theirs = right.map { otherSlots[$0][otherIndex] } ?? -1
      if mine < 0 || theirs < 0 {
        if mine != theirs { return false }
        continue
      }
      if !same(left!, Int(mine), right!, Int(theirs)) { return false }
    }
    return true
  }

  /// Whether value `position` of `values` equals value `otherPosition` of `otherValues`
  /// (false for values of different kinds).
  private static func same(
    _ values: ObjectBatch.Values, _ position: Int, _ otherValues: ObjectBatch.Values,
    _ otherPosition: Int
  ) -> Bool {
    switch (values, otherValues) {
    case (.integers(let l), .integers(let r)): return l[position] == r[otherPosition]
    case (.booleans(let l), .booleans(let r)): return l[position] == r[otherPosition]
    case (.reals(let l), .reals(let r)): return l[position] == r[otherPosition]
    case (.texts(let l), .texts(let r)), (.blobs(let l), .blobs(let r)):
      let (left, right) = (l[position], r[otherPosition])
      guard left.count == right.count else { return false }
      guard let leftBase = left.baseAddress, let rightBase = right.baseAddress else { return true }
      return memcmp(leftBase, rightBase, left.count) == 0
    default: return false
    }
  }
}
