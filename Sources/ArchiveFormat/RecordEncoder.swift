import ObjectModel
import ObjectStore
import PropertyList

/// Encodes object records and raw rows straight into a property-list writer (no value tree).
///
/// Per entity, the keys a record may have are known in advance, in sorted order: their string
/// references are made once per chunk and reused, and records are written in key order
/// without sorting each one.
package final class RecordEncoder {
  let model: ObjectModel
  private var shapes: [String: Shape] = [:]
  private var fixedKeys: [BinaryPropertyListWriter.Reference] = []
  private var generation: UInt64?

  /// Strings longer than this are not uniqued (titles and texts seldom repeat).
  static let uniquedStringLength = 32

  private final class Shape {
    /// Attribute names, sorted.
    let attributes: [String]
    /// To-one relationship names, sorted, and whether the destination's entity is written too.
    let toOne: [(name: String, withEntity: Bool)]
    /// Every key, in the order above (each to-one followed by its `@entity` key when written).
    let keys: [String]
    /// Whether each key is a composite's element (`author.person`), which a record holds in
    /// its composite's dictionary rather than under its own key.
    let isElement: [Bool]
    var references: [BinaryPropertyListWriter.Reference] = []
    /// For the rows of one layout (``ObjectRow/layoutID``): the key index of each attribute and
    /// to-one relationship, nil for one the model does not list.
    var rowLayout: Int?
    var attributeSlots: [Int?] = []
    var toOneSlots: [Int?] = []

    init(entity: String, model: ObjectModel) {
      attributes = model.attributes(of: entity).filter(\.isStored).map(\.name).sorted()
      toOne = model.relationships(of: entity).filter { !$0.isToMany && !$0.isTransient }
        .sorted { $0.name < $1.name }
        .map { ($0.name, model.hierarchy(from: $0.destination).count > 1) }
      keys =
        attributes
        + toOne.flatMap { $0.withEntity ? [$0.name, $0.name + RecordKey.entitySuffix] : [$0.name] }
      isElement = keys.map { $0.contains(".") }
    }
  }

  package init(model: ObjectModel) {
    self.model = model
  }

  private func shape(_ entity: String, _ writer: inout BinaryPropertyListWriter) -> Shape {
    if writer.generation != generation {
      generation = writer.generation
      fixedKeys = [RecordKey.entity, RecordKey.primaryKey, RecordKey.version].map {
        writer.string($0)
      }
      for shape in shapes.values { shape.references = [] }
    }
    let shape: Shape
    if let known = shapes[entity] {
      shape = known
    } else {
      shape = Shape(entity: entity, model: model)
      shapes[entity] = shape
    }
    if shape.references.isEmpty && !shape.keys.isEmpty {
      shape.references = shape.keys.map { writer.string($0) }
    }
    return shape
  }

  /// Adds one record: `class`, `pk`, `opt`, attributes, to-one primary keys (and the
  /// destination entity where its hierarchy has several), many-to-many primary keys and order
  /// keys, and columns the model does not describe.
  package func encode(
    _ record: ObjectRecord, manyToMany: [(name: String, rows: [JoinCursor.Pair])],
    into writer: inout BinaryPropertyListWriter
  ) -> BinaryPropertyListWriter.Reference {
    let shape = shape(record.entity, &writer)
    let start = writer.stackCount
    pushHeader(record.entity, record.primaryKey, record.version, into: &writer)
    var key = 0
    var written = 0
    var elements: [(String, AttributeValue)] = []
    for name in shape.attributes {
      if let value = record.attributes[name] {
        if shape.isElement[key] {
          elements.append((name, value))
        } else {
          writer.push(shape.references[key])
          writer.push(Self.encode(value, into: &writer))
        }
        written += 1
      }
      key += 1
    }
    pushComposites(elements, into: &writer)
    if written < record.attributes.count {
      // Values the model does not list for this entity still travel, never lost.
      for (name, value) in record.attributes.sorted(by: { $0.key < $1.key })
      where !shape.attributes.contains(name) {
        writer.push(writer.string(name))
        writer.push(Self.encode(value, into: &writer))
      }
    }
    written = 0
    for relationship in shape.toOne {
      let target = record.toOne[relationship.name]
      if let target {
        writer.push(shape.references[key])
        writer.push(writer.integer(target.primaryKey))
        written += 1
      }
      key += 1
      if relationship.withEntity {
        if let target {
          writer.push(shape.references[key])
          writer.push(writer.string(target.entity))
        }
        key += 1
      }
    }
    if written < record.toOne.count {
      for (name, target) in record.toOne.sorted(by: { $0.key < $1.key })
      where !shape.toOne.contains(where: { $0.name == name }) {
        pushUnlistedLink(name, target, into: &writer)
      }
    }
    encodeLinks(manyToMany, into: &writer)
    if !record.extraColumns.isEmpty {
      writer.push(writer.string(RecordKey.columns))
      writer.push(Self.encodeRow(record.extraColumns, into: &writer))
    }
    return writer.makeDictionary(fromStackIndex: start)
  }

  /// Adds one object read as an ``ObjectRow``: the same dictionary, byte for byte, as
  /// ``encode(_:manyToMany:into:)`` writes for its record, without looking anything up by
  /// name.
  package func encode(
    _ row: ObjectRow, manyToMany: [(name: String, rows: [JoinCursor.Pair])],
    into writer: inout BinaryPropertyListWriter
  ) -> BinaryPropertyListWriter.Reference {
    let shape = shape(row.entity, &writer)
    if shape.rowLayout != row.layoutID {
      align(shape, to: row)
    }
    let start = writer.stackCount
    pushHeader(row.entity, row.primaryKey, row.version, into: &writer)
    var extras: [(String, AttributeValue)] = []
    var elements: [(String, AttributeValue)] = []
    for index in row.attributeValues.indices {
      guard let value = row.value(at: index) else { continue }
      guard let slot = shape.attributeSlots[index] else {
        extras.append((row.attributeNames[index], value))
        continue
      }
      if shape.isElement[slot] {
        elements.append((row.attributeNames[index], value))
        continue
      }
      writer.push(shape.references[slot])
      writer.push(Self.encode(value, into: &writer))
    }
    pushComposites(elements, into: &writer)
    // Values the model does not list for this entity still travel, never lost.
    for (name, value) in extras {
      writer.push(writer.string(name))
      writer.push(Self.encode(value, into: &writer))
    }
    var extraLinks: [(String, ObjectReference)] = []
    for (index, target) in row.toOneTargets.enumerated() {
      guard let target else { continue }
      guard let slot = shape.toOneSlots[index] else {
        extraLinks.append((row.toOneNames[index], target))
        continue
      }
      writer.push(shape.references[slot])
      writer.push(writer.integer(target.primaryKey))
      if slot + 1 < shape.keys.count,
        shape.keys[slot + 1] == row.toOneNames[index] + RecordKey.entitySuffix
      {
        writer.push(shape.references[slot + 1])
        writer.push(writer.string(target.entity))
      }
    }
    for (name, target) in extraLinks { pushUnlistedLink(name, target, into: &writer) }
    encodeLinks(manyToMany, into: &writer)
    if !row.extraColumns.isEmpty {
      writer.push(writer.string(RecordKey.columns))
      writer.push(Self.encodeRow(row.extraColumns, into: &writer))
    }
    return writer.makeDictionary(fromStackIndex: start)
  }

  /// Composites' element values, given by key path, as each composite's dictionary under the
  /// composite's name (a nested composite a dictionary inside it); a composite none of whose
  /// elements has a value is absent.
  private func pushComposites(
    _ elements: [(String, AttributeValue)], into writer: inout BinaryPropertyListWriter
  ) {
    guard !elements.isEmpty else { return }
    for (name, value) in RecordNesting.nested(elements).sorted(by: { $0.key < $1.key }) {
      writer.push(writer.string(name))
      writer.push(Self.encode(value, into: &writer))
    }
  }

  /// `class`, `pk` and `opt`.
  private func pushHeader(
    _ entity: String, _ primaryKey: Int64, _ version: Int64,
    into writer: inout BinaryPropertyListWriter
  ) {
    writer.push(fixedKeys[0])
    writer.push(writer.string(entity))
    writer.push(fixedKeys[1])
    // Primary keys never repeat within a chunk: hashing them to find a repeat is wasted.
    writer.push(writer.integer(primaryKey, uniquing: false))
    writer.push(fixedKeys[2])
    writer.push(writer.integer(version))
  }

  /// A to-one link the model does not list for the entity, with its destination's entity.
  private func pushUnlistedLink(
    _ name: String, _ target: ObjectReference, into writer: inout BinaryPropertyListWriter
  ) {
    writer.push(writer.string(name))
    writer.push(writer.integer(target.primaryKey))
    writer.push(writer.string(name + RecordKey.entitySuffix))
    writer.push(writer.string(target.entity))
  }

  /// Where each of a row layout's attributes and to-one relationships goes among the shape's
  /// keys.
  private func align(_ shape: Shape, to row: ObjectRow) {
    var index: [String: Int] = [:]
    for (position, key) in shape.keys.enumerated() { index[key] = position }
    shape.attributeSlots = row.attributeNames.map { name in
      shape.attributes.contains(name) ? index[name] : nil
    }
    shape.toOneSlots = row.toOneNames.map { name in
      shape.toOne.contains(where: { $0.name == name }) ? index[name] : nil
    }
    shape.rowLayout = row.layoutID
  }

  /// Many-to-many keys (and order keys) of one object.
  private func encodeLinks(
    _ manyToMany: [(name: String, rows: [JoinCursor.Pair])],
    into writer: inout BinaryPropertyListWriter
  ) {
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
  }

  /// A row of stored values as a dictionary (NULLs absent).
  package static func encodeRow(
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
    case .decimal(let v), .string(let v), .uri(let v):
      return writer.string(v, uniquing: v.utf8.count <= uniquedStringLength)
    case .bool(let v): return writer.bool(v)
    case .date(let v): return writer.date(PropertyListDate(secondsSinceReferenceDate: v))
    case .data(let v), .uuid(let v), .transformed(let v): return writer.data(v)
    case .composite(let elements):
      let start = writer.stackCount
      for name in elements.keys.sorted() {
        writer.push(writer.string(name))
        writer.push(encode(elements[name]!, into: &writer))
      }
      return writer.makeDictionary(fromStackIndex: start)
    }
  }
}
