import ObjectModel
import ObjectStore
import PropertyList

/// Encodes object records and raw rows straight into a property-list writer (no value tree).
struct RecordEncoder {
  let model: ObjectModel
  /// Per entity: the to-one relationships whose destination hierarchy has several entities.
  private let ambiguousDestinations: [String: Set<String>]

  init(model: ObjectModel) {
    self.model = model
    var ambiguous: [String: Set<String>] = [:]
    for entity in model.entities {
      for relationship in model.relationships(of: entity.name)
      where !relationship.isToMany && model.hierarchy(from: relationship.destination).count > 1 {
        ambiguous[entity.name, default: []].insert(relationship.name)
      }
    }
    ambiguousDestinations = ambiguous
  }

  /// Adds one record: `class`, `pk`, `opt`, attributes, to-one primary keys (and the
  /// destination entity where its hierarchy has several), many-to-many primary keys and order
  /// keys, and columns the model does not describe.
  func encode(
    _ record: ObjectRecord, manyToMany: [(name: String, rows: [JoinCursor.Pair])],
    into writer: inout BinaryPropertyListWriter
  ) -> BinaryPropertyListWriter.Reference {
    let start = writer.stackCount
    writer.push(writer.string(RecordKey.entity))
    writer.push(writer.string(record.entity))
    writer.push(writer.string(RecordKey.primaryKey))
    writer.push(writer.integer(record.primaryKey))
    writer.push(writer.string(RecordKey.version))
    writer.push(writer.integer(record.version))
    for (name, value) in record.attributes.sorted(by: { $0.key < $1.key }) {
      writer.push(writer.string(name))
      writer.push(Self.encode(value, into: &writer))
    }
    let ambiguous = ambiguousDestinations[record.entity] ?? []
    for (name, target) in record.toOne.sorted(by: { $0.key < $1.key }) {
      writer.push(writer.string(name))
      writer.push(writer.integer(target.primaryKey))
      if ambiguous.contains(name) {
        writer.push(writer.string(name + RecordKey.entitySuffix))
        writer.push(writer.string(target.entity))
      }
    }
    for (name, rows) in manyToMany where !rows.isEmpty {
      writer.push(writer.string(name))
      let arrayStart = writer.stackCount
      for row in rows { writer.push(writer.integer(row.destination)) }
      writer.push(writer.makeArray(fromStackIndex: arrayStart))
      if rows.contains(where: { $0.order != nil }) {
        writer.push(writer.string(name + RecordKey.orderSuffix))
        let orderStart = writer.stackCount
        // A row without an order key keeps its place with -1 (order keys are never negative).
        for row in rows { writer.push(writer.integer(row.order ?? -1)) }
        writer.push(writer.makeArray(fromStackIndex: orderStart))
      }
    }
    if !record.extraColumns.isEmpty {
      writer.push(writer.string(RecordKey.columns))
      writer.push(Self.encodeRow(record.extraColumns, into: &writer))
    }
    return writer.makeDictionary(fromStackIndex: start)
  }

  /// A row of stored values as a dictionary (NULLs absent).
  static func encodeRow(
    _ row: [String: AttributeValue], into writer: inout BinaryPropertyListWriter
  )
    -> BinaryPropertyListWriter.Reference
  {
    let start = writer.stackCount
    for (name, value) in row.sorted(by: { $0.key < $1.key }) {
      writer.push(writer.string(name))
      writer.push(encode(value, into: &writer))
    }
    return writer.makeDictionary(fromStackIndex: start)
  }

  /// Values as the archive format holds them: integers, reals, booleans, dates and strings as
  /// themselves; decimals and URIs as strings; UUIDs, binary and transformed values as data.
  static func encode(_ value: AttributeValue, into writer: inout BinaryPropertyListWriter)
    -> BinaryPropertyListWriter.Reference
  {
    switch value {
    case .integer(let v): return writer.integer(v)
    case .double(let v): return writer.real(v)
    case .decimal(let v), .string(let v), .uri(let v): return writer.string(v)
    case .bool(let v): return writer.bool(v)
    case .date(let v): return writer.date(PropertyListDate(secondsSinceReferenceDate: v))
    case .data(let v), .uuid(let v), .transformed(let v): return writer.data(v)
    }
  }
}
