import Foundation
import ObjectModel
import SQLite

/// Reads an entity table's rows into typed records with one prepared statement.
struct TableReader {
  private struct Field {
    let entity: String
    let index: Int
  }

  let statement: Statement
  /// The statement's current row, each column read once: what a row is read from.
  private let currentRow: RowColumns
  /// The selected columns, in order: `Z_PK`, `Z_ENT`, `Z_OPT`, the table's, then the caller's
  /// extra ones.
  let columnNames: [String]
  /// The index of the first of the caller's extra columns.
  private(set) var extraStart = 0
  private let unmapped: [(index: Int, column: String)]
  /// The seed and the selected columns in table order, when each row is hashed as it is read.
  private let hashing: (seed: UInt64, order: [Int32])?
  private let entityNames: [Int: String]
  /// Per entity number (`Z_ENT`), the fields its rows carry: worked out once, not per row.
  private let plans: [RowPlan?]

  /// The columns a row of one entity carries, sorted by name: plain values, so that reading a
  /// row copies no descriptions.
  private final class RowPlan {
    let entity: String
    let attributeNames: [String]
    let attributeTypes: [AttributeType]
    let attributes: [(index: Int, type: AttributeType)]
    let toOneNames: [String]
    let toOne: [(index: Int, destination: String, entityIndex: Int?)]
    /// Each attribute's place in a caller's array of values (``currentRecord(slots:)``),
    /// nil for one it has no place for; worked out on the first such row.
    var places: [Int?]?
    /// How many places the caller's array has.
    var placeCount = 0

    init(
      entity: String, attributes: [(Field, AttributeDescription)],
      toOne: [(Field, RelationshipDescription, entityIndex: Int?)]
    ) {
      self.entity = entity
      attributeNames = attributes.map(\.1.name)
      attributeTypes = attributes.map(\.1.type)
      self.attributes = attributes.map { ($0.0.index, $0.1.type) }
      toOneNames = toOne.map(\.1.name)
      self.toOne = toOne.map { ($0.0.index, $0.1.destination, $0.entityIndex) }
    }
  }

  init(
    table: StoreLayout.Table, layout: StoreLayout, database: Database, filter: String? = nil,
    extraColumns: [String] = [], order: String = "Z_PK", limit: Int? = nil, offset: Int = 0,
    hashing: RowHashing? = nil
  ) throws {
    var columns = ["Z_PK", "Z_ENT", "Z_OPT"]
    var attributeFields: [(Field, AttributeDescription)] = []
    var toOneFields: [(Field, RelationshipDescription, entityIndex: Int?)] = []
    for (entity, attributes) in table.attributes.sorted(by: { $0.key < $1.key }) {
      for attribute in attributes {
        attributeFields.append((Field(entity: entity, index: columns.count), attribute.attribute))
        columns.append(attribute.column)
      }
    }
    for (entity, relationships) in table.toOne.sorted(by: { $0.key < $1.key }) {
      for relationship in relationships {
        let index = columns.count
        columns.append(relationship.column)
        var entityIndex: Int?
        if let entityColumn = relationship.entityColumn {
          entityIndex = columns.count
          columns.append(entityColumn)
        }
        toOneFields.append(
          (Field(entity: entity, index: index), relationship.relationship, entityIndex))
      }
    }
    var unmapped: [(index: Int, column: String)] = []
    for column in table.unmappedColumns {
      unmapped.append((columns.count, column))
      columns.append(column)
    }
    self.unmapped = unmapped
    extraStart = columns.count
    columns += extraColumns
    // Hashed in table order; a column of the table read for nothing else is read after the
    // caller's.
    if let hashing {
      var places: [String: Int] = [:]
      for (index, column) in columns.enumerated() where places[column] == nil {
        places[column] = index
      }
      var order: [Int32] = []
      for column in hashing.columns {
        if let index = places[column] {
          order.append(Int32(index))
        } else {
          order.append(Int32(columns.count))
          columns.append(SchemaStatement.quote(column))
        }
      }
      self.hashing = (hashing.seed, order)
    } else {
      self.hashing = nil
    }
    columnNames = columns
    statement = try database.prepare(
      "SELECT \(columns.joined(separator: ", ")) FROM \(table.name)"
        + (filter.map { " WHERE \($0)" } ?? "") + " ORDER BY \(order)"
        + (limit.map { " LIMIT \($0)" } ?? (offset > 0 ? " LIMIT -1" : ""))
        + (offset > 0 ? " OFFSET \(offset)" : ""))
    currentRow = RowColumns(of: statement)
    var names: [Int: String] = [:]
    for (name, number) in layout.entityNumbers { names[number] = name }
    entityNames = names
    var lineages: [String: Set<String>] = [:]
    for entity in layout.model.hierarchy(from: table.rootEntity) {
      lineages[entity.name] = Set(layout.model.lineage(of: entity.name).map(\.name))
    }
    var plans: [RowPlan?] = Array(
      repeating: nil, count: (layout.entityNumbers.values.max() ?? 0) + 1)
    for (entity, lineage) in lineages {
      guard let number = layout.entityNumbers[entity], number >= 0 else { continue }
      plans[number] = RowPlan(
        entity: entity,
        attributes: attributeFields.filter { lineage.contains($0.0.entity) }
          .sorted { $0.1.name < $1.1.name },
        toOne: toOneFields.filter { lineage.contains($0.0.entity) }
          .sorted { $0.1.name < $1.1.name })
    }
    self.plans = plans
  }

  /// The columns of a row whose `Z_ENT` is `number`.
  private func plan(for number: Int) throws -> RowPlan {
    guard number >= 0, number < plans.count, let plan = plans[number] else {
      throw StoreError(
        .modelMismatch,
        "row \(statement.int64(at: 0)) has Z_ENT \(number), which names no entity of the model")
    }
    return plan
  }

  /// Reads the rows into one reused ``ObjectRow``: the same values as ``readRows(_:)``,
  /// without a dictionary per row. At most `limit` rows a call: returns true when it stopped
  /// there, the statement kept where it is for the next call; false once every row was read.
  @discardableResult
  func readObjectRows(upTo limit: Int = .max, _ body: (ObjectRow) throws -> Void) throws -> Bool {
    var stopped = false
    defer { if !stopped { statement.reset() } }
    var row = ObjectRow()
    var current = -1
    // The row's buffers are filled as locals and handed back: one access to the row each.
    var values: [AttributeValue?] = []
    var ranges: [Range<Int>?] = []
    var bytes: [UInt8] = []
    var targets: [ObjectReference?] = []
    var extras: [String: AttributeValue] = [:]
    var read = 0
    while read < limit, try statement.step() {
      read += 1
      currentRow.load()
      let number = Int(currentRow.int64(at: 1))
      let plan = try plan(for: number)
      if number != current {
        current = number
        row.entity = plan.entity
        row.layoutID = number
        row.attributeNames = plan.attributeNames
        row.attributeTypes = plan.attributeTypes
        row.toOneNames = plan.toOneNames
      }
      row.primaryKey = currentRow.int64(at: 0)
      row.version = currentRow.int64(at: 2)
      if let hashing {
        var hasher = RowHasher(seed: hashing.seed)
        currentRow.hash(hashing.order, into: &hasher)
        row.hash = hasher.value
      }
      swap(&values, &row.attributeValues)
      swap(&ranges, &row.byteRanges)
      swap(&bytes, &row.bytes)
      swap(&targets, &row.toOneTargets)
      swap(&extras, &row.extraColumns)
      values.removeAll(keepingCapacity: true)
      ranges.removeAll(keepingCapacity: true)
      bytes.removeAll(keepingCapacity: true)
      targets.removeAll(keepingCapacity: true)
      if !extras.isEmpty { extras.removeAll(keepingCapacity: true) }
      for (index, type) in plan.attributes {
        if let range = appendBytes(index, type, to: &bytes) {
          values.append(nil)
          ranges.append(range)
        } else {
          values.append(attributeValue(index, type) { extras[$0] = $1 })
          ranges.append(nil)
        }
      }
      for (index, column) in unmapped {
        if let raw = currentRow.storedValue(at: index) { extras[column] = raw }
      }
      for (index, destination, entityIndex) in plan.toOne {
        targets.append(target(index, destination, entityIndex))
      }
      swap(&values, &row.attributeValues)
      swap(&ranges, &row.byteRanges)
      swap(&bytes, &row.bytes)
      swap(&targets, &row.toOneTargets)
      swap(&extras, &row.extraColumns)
      try body(row)
    }
    stopped = read == limit
    return stopped
  }

  /// Appends the current row's value of column `index` to `bytes` when it is one a row keeps
  /// as bytes (``ObjectRow/byteRanges``): a blob stored as a blob, or text stored as text that
  /// is all ASCII (other text is read as a `String`, whose decoding repairs what is not UTF-8);
  /// returns where it is, else nil and appends nothing.
  @inline(__always)
  private func appendBytes(_ index: Int, _ type: AttributeType, to bytes: inout [UInt8])
    -> Range<Int>?
  {
    switch type {
    case .string, .uri:
      guard currentRow.storageType(at: index) == .text else { return nil }
      return currentRow.withText(at: index) { text -> Range<Int>? in
        guard Self.isASCII(text) else { return nil }
        let start = bytes.count
        bytes.append(contentsOf: text)
        return start..<bytes.count
      }
    case .binaryData, .transformable, .uuid:
      guard currentRow.storageType(at: index) == .blob else { return nil }
      return currentRow.withBlob(at: index) { blob in
        let start = bytes.count
        bytes.append(contentsOf: blob)
        return start..<bytes.count
      }
    default:
      return nil
    }
  }

  /// Whether every byte of `text` is ASCII (eight at a time).
  @inline(__always)
  private static func isASCII(_ text: UnsafeRawBufferPointer) -> Bool {
    var offset = 0
    var high: UInt64 = 0
    while offset + 8 <= text.count {
      high |= text.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
      offset += 8
    }
    while offset < text.count {
      high |= UInt64(text[offset])
      offset += 1
    }
    return high & 0x8080_8080_8080_8080 == 0
  }

  /// Binds the filter's parameters (1-based, in order).
  func bind(_ values: [SQLiteValue]) throws {
    statement.reset(clearBindings: true)
    try statement.bind(values)
  }

  func readRows(_ body: (ObjectRecord) throws -> Void) throws {
    defer { statement.reset() }
    while try statement.step() { try body(currentRecord()) }
  }

  /// Moves to the next row; false (and the statement reset) after the last.
  func step() throws -> Bool {
    guard try statement.step() else {
      statement.reset()
      return false
    }
    return true
  }

  /// The current row's value of the caller's extra column `index` (0 for the first), as
  /// stored; nil for NULL.
  func extraValue(_ index: Int) -> AttributeValue? {
    statement.storedValue(at: extraStart + index)
  }

  /// Whether the current rows of this reader's column `index` and `other`'s column
  /// `otherIndex` hold the same value in the same storage class, compared in place.
  func sameValue(at index: Int, as other: TableReader, at otherIndex: Int) -> Bool {
    let type = statement.storageType(at: index)
    guard type == other.statement.storageType(at: otherIndex) else { return false }
    switch type {
    case .null: return true
    case .integer: return statement.int64(at: index) == other.statement.int64(at: otherIndex)
    case .real: return statement.double(at: index) == other.statement.double(at: otherIndex)
    case .text, .blob:
      return statement.withBlob(at: index) { mine in
        other.statement.withBlob(at: otherIndex) { theirs in mine.elementsEqual(theirs) }
      }
    }
  }

  /// The record of the row the statement is on.
  func currentRecord() throws -> ObjectRecord {
    var attributes: [String: AttributeValue] = [:]
    var record = try readRecord(
      starting: { attributes.reserveCapacity($0.attributes.count) },
      { plan, position, value in attributes[plan.attributeNames[position]] = value })
    record.attributes = attributes
    return record
  }

  /// The record of the row the statement is on, without its attribute values, which are
  /// returned apart, each in its place in an array (`slots(entity)` gives the places by
  /// attribute name and their count; worked out once per entity): no dictionary per row.
  func currentRecord(slots: (String) -> (places: [String: Int], count: Int)) throws -> (
    record: ObjectRecord, values: [AttributeValue?]
  ) {
    var values: [AttributeValue?] = []
    let record = try readRecord(
      starting: { plan in
        if plan.places == nil {
          let (places, count) = slots(plan.entity)
          plan.places = plan.attributeNames.map { places[$0] }
          plan.placeCount = count
        }
        values = [AttributeValue?](repeating: nil, count: plan.placeCount)
      },
      { plan, position, value in
        if let place = plan.places![position] { values[place] = value }
      })
    return (record, values)
  }

  /// Reads the row the statement is on: its key, entity, version, unmapped columns and to-one
  /// targets into a record, and each attribute value (by its position in the row's plan) to
  /// `take`, after `starting` was given the plan.
  @inline(__always)
  private func readRecord(
    starting: (RowPlan) -> Void, _ take: (RowPlan, Int, AttributeValue) -> Void
  ) throws -> ObjectRecord {
    currentRow.load()
    let plan = try plan(for: Int(currentRow.int64(at: 1)))
    starting(plan)
    var record = ObjectRecord(
      entity: plan.entity, primaryKey: currentRow.int64(at: 0), version: currentRow.int64(at: 2))
    for (position, (index, type)) in plan.attributes.enumerated() {
      if let value = attributeValue(index, type, { record.extraColumns[$0] = $1 }) {
        take(plan, position, value)
      }
    }
    for (index, column) in unmapped {
      if let raw = currentRow.storedValue(at: index) { record.extraColumns[column] = raw }
    }
    for ((index, destination, entityIndex), name) in zip(plan.toOne, plan.toOneNames) {
      if let target = target(index, destination, entityIndex) { record.toOne[name] = target }
    }
    return record
  }

  /// The current row's value of `attribute` (nil for NULL). A value stored in another class
  /// than its type's (SQLite does not enforce types) is handed to `keepAsStored` with its
  /// column instead, so nothing is lost or converted.
  @inline(__always)
  private func attributeValue(
    _ index: Int, _ type: AttributeType, _ keepAsStored: (String, AttributeValue) -> Void
  ) -> AttributeValue? {
    let storage = currentRow.storageType(at: index)
    if storage == .null { return nil }
    if storageMatches(storage, at: index, type: type) {
      return value(at: index, storage: storage, type: type)
    }
    if let raw = currentRow.storedValue(at: index) { keepAsStored(columnNames[index], raw) }
    return nil
  }

  /// The current row's target of a to-one relationship (nil when empty), its entity read from
  /// the entity column where the destination has sub-entities.
  @inline(__always)
  private func target(_ index: Int, _ destination: String, _ entityIndex: Int?)
    -> ObjectReference?
  {
    guard !currentRow.isNull(at: index) else { return nil }
    var destination = destination
    if let entityIndex, !currentRow.isNull(at: entityIndex),
      let name = entityNames[Int(currentRow.int64(at: entityIndex))]
    {
      destination = name
    }
    return ObjectReference(entity: destination, primaryKey: currentRow.int64(at: index))
  }

  /// Whether the stored class is the one Core Data uses for the type.
  private func storageMatches(_ storage: StorageType, at index: Int, type: AttributeType) -> Bool {
    switch type {
    case .integer16, .integer32, .integer64: return storage == .integer
    case .boolean:
      // Only 0 and 1 read as booleans; any other integer travels as stored.
      return storage == .integer
        && (currentRow.int64(at: index) == 0 || currentRow.int64(at: index) == 1)
    case .double, .float, .date: return storage == .real || storage == .integer
    case .decimal: return storage == .real || storage == .integer || storage == .text
    case .string, .uri: return storage == .text
    case .uuid, .binaryData, .transformable, .objectID, .undefined: return storage == .blob
    case .composite: return false
    }
  }

  /// The column's value typed by the attribute's type; nil for NULL.
  private func value(at index: Int, storage: StorageType, type: AttributeType) -> AttributeValue {
    switch type {
    case .integer16, .integer32, .integer64: return .integer(currentRow.int64(at: index))
    case .boolean: return .bool(currentRow.int64(at: index) != 0)
    case .double, .float: return .double(currentRow.double(at: index))
    case .decimal:
      if storage == .text { return .decimal(currentRow.text(at: index)) }
      return .decimal(DecimalText.format(currentRow.double(at: index)))
    case .date: return .date(currentRow.double(at: index))
    case .string: return .string(currentRow.text(at: index))
    case .uri: return .uri(currentRow.text(at: index))
    case .uuid: return .uuid(currentRow.blob(at: index))
    case .binaryData: return .data(currentRow.blob(at: index))
    case .transformable: return .transformed(currentRow.blob(at: index))
    case .objectID, .undefined, .composite: return .data(currentRow.blob(at: index))
    }
  }
}

extension ColumnValues {
  /// The current row's column `index` as stored: integer, double, string or data; nil for NULL.
  func storedValue(at index: Int) -> AttributeValue? {
    switch storageType(at: index) {
    case .null: return nil
    case .integer: return .integer(int64(at: index))
    case .real: return .double(double(at: index))
    case .text: return .string(text(at: index))
    case .blob: return .data(blob(at: index))
    }
  }
}
