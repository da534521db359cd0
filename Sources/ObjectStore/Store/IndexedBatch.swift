import Foundation
import ObjectModel

/// An ``ObjectBatch`` whose values are found by object position in constant time: each
/// column's value position per object. Two batches' objects can then be compared in place,
/// column by column, without building either (``sameValues(at:as:at:pairing:)``), and the
/// objects that differ read as records (``record(at:)``): what comparing two archives as they
/// stream does.
public struct IndexedBatch: Sendable {
  /// The batch.
  public let batch: ObjectBatch
  /// Per column (attributes, to-one, many-to-many, stored columns), per object: the position
  /// of the object's value in the column, or -1 when it has none.
  private let attributeSlots: [[Int32]]
  private let toOneSlots: [[Int32]]
  private let toManySlots: [[Int32]]
  private let storedSlots: [[Int32]]

  /// Indexes `batch`.
  public init(_ batch: ObjectBatch) {
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
  public var count: Int { batch.count }

  /// Object `index`'s primary key.
  public func primaryKey(at index: Int) -> Int64 { batch.primaryKeys[index] }

  /// Object `index` as a record, with its many-to-many rows by relationship.
  public func record(at index: Int) -> (ObjectRecord, [String: [(Int64, Int64?)]]) {
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
  public struct Pairing: Sendable {
    fileprivate let attributes: [(Int?, Int?)]
    fileprivate let toOne: [(Int?, Int?)]
    fileprivate let toMany: [(Int?, Int?)]
    fileprivate let stored: [(Int?, Int?)]

    /// The pairing of `left`'s columns with `right`'s.
    public init(_ left: IndexedBatch, _ right: IndexedBatch) {
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
  public func sameValues(
    at index: Int, as other: IndexedBatch, at otherIndex: Int, pairing: Pairing
  ) -> Bool {
    func slot(_ slots: [[Int32]], _ column: Int?, _ object: Int) -> Int32 {
      guard let column else { return -1 }
      return slots[column][object]
    }
    for (left, right) in pairing.attributes {
      let (mine, theirs) = (
        slot(attributeSlots, left, index), slot(other.attributeSlots, right, otherIndex)
      )
      if mine < 0 || theirs < 0 {
        if mine != theirs { return false }
        continue
      }
      guard
        Self.same(
          batch.attributes[left!].values, Int(mine), other.batch.attributes[right!].values,
          Int(theirs))
      else { return false }
    }
    for (left, right) in pairing.stored {
      let (mine, theirs) = (
        slot(storedSlots, left, index), slot(other.storedSlots, right, otherIndex)
      )
      if mine < 0 || theirs < 0 {
        if mine != theirs { return false }
        continue
      }
      guard
        Self.same(
          batch.storedColumns[left!].values, Int(mine),
          other.batch.storedColumns[right!].values, Int(theirs))
      else { return false }
    }
    for (left, right) in pairing.toOne {
      let (mine, theirs) = (
        slot(toOneSlots, left, index), slot(other.toOneSlots, right, otherIndex)
      )
      if mine < 0 || theirs < 0 {
        if mine != theirs { return false }
        continue
      }
      let (column, otherColumn) = (batch.toOne[left!], other.batch.toOne[right!])
      guard column.keys[Int(mine)] == otherColumn.keys[Int(theirs)],
        column.entities[Int(mine)] == otherColumn.entities[Int(theirs)]
      else { return false }
    }
    for (left, right) in pairing.toMany {
      let (mine, theirs) = (
        slot(toManySlots, left, index), slot(other.toManySlots, right, otherIndex)
      )
      if mine < 0 || theirs < 0 {
        if mine != theirs { return false }
        continue
      }
      let (rows, otherRows) = (
        batch.toMany[left!].rows[Int(mine)], other.batch.toMany[right!].rows[Int(theirs)]
      )
      guard rows.count == otherRows.count,
        zip(rows, otherRows).allSatisfy({ $0.0 == $1.0 && $0.1 == $1.1 })
      else { return false }
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
