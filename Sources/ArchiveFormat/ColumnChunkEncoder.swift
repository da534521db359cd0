import ObjectModel
import ObjectStore
import PropertyList

/// Collects one entity's objects into a format-2 chunk (``ColumnLayout``): each key's values
/// in a column of their own, so that zstd sees like values together and no value needs an
/// object, an offset or a reference of its own.
///
/// A record recovered from a chunk (``RecordDecoder/decodeChunk(_:)``) has exactly the keys
/// and values format 1's ``RecordEncoder`` writes for the object.
///
/// A value type, so that the compiler proves exclusive access to its buffers once per call
/// rather than checking it at run time on every value.
package struct ColumnChunkEncoder {
  let model: ObjectModel
  /// The number of objects added since the last ``reset()``.
  package private(set) var count = 0
  private var entity = ""
  private var primaryKeys: [UInt8] = []
  private var versions: [UInt8] = []
  private var previousKey: Int64 = 0
  private var previousVersion: Int64 = 0
  private var lowestKey = Int64.max
  private var highestKey = Int64.min
  private var columns = Columns()
  private var writer = BinaryPropertyListWriter()
  /// Codes large text columns as numbered words (format 4 and later); nil for older formats.
  private var wordCoder: WordCoder?

  /// The chunk's columns, and where each key and kind is among them.
  private struct Columns {
    var list: [ColumnBuilder] = []
    var index: [ColumnID: Int] = [:]

    struct ColumnID: Hashable {
      let key: String
      let kind: ColumnBuilder.Kind
    }

    /// The position of the column of `key` and `kind`, made when new.
    mutating func position(_ key: String, _ kind: ColumnBuilder.Kind) -> Int {
      let id = ColumnID(key: key, kind: kind)
      if let known = index[id] { return known }
      list.append(ColumnBuilder(key: key, kind: kind))
      index[id] = list.count - 1
      return list.count - 1
    }
  }

  /// Per row layout (``ObjectRow/layoutID``), the column of each attribute (by the kind last
  /// seen) and of each to-one relationship and its destination's entity (when written).
  private var layoutID: Int?
  private var attributeColumns: [Int] = []
  private var toOneColumns: [(key: Int, entity: Int?)] = []
  /// The column of each stored column (by its name, not its key) and kind met so far.
  private var storedColumns: [Columns.ColumnID: Int] = [:]
  /// Per many-to-many relationship, in the order given: its name and its two columns.
  private var linkColumns: [(name: String, keys: Int, order: Int)] = []
  /// Per entity, its listed to-one relationships and whether each writes its destination's
  /// entity (format 1's rule: when the destination's hierarchy has several entities).
  private var toOneRules: [String: [String: Bool]] = [:]
  /// Per entity, the kind of bounds (``ValueBounds``) of each attribute that has them.
  private var boundKinds: [String: [String: ValueBounds.Kind]] = [:]

  /// An encoder of chunks of archive format `formatVersion` (2 or later), whose large text
  /// columns are coded as numbered words from format 4 on (``WordCoding``).
  package init(model: ObjectModel, formatVersion: Int64 = ArchiveLayout.formatVersion) {
    self.model = model
    if formatVersion >= ArchiveLayout.wordsFormat { wordCoder = WordCoder() }
  }

  /// Roughly how many bytes the chunk holds so far.
  package var approximateSize: Int {
    columns.list.reduce(primaryKeys.count + versions.count) { $0 + $1.byteCount }
  }

  /// Whether the chunk should be written now (``ArchiveLayout/chunkBytes`` and
  /// ``ArchiveLayout/chunkRecords``).
  package var isFull: Bool {
    count >= ArchiveLayout.chunkRecords || approximateSize >= ArchiveLayout.chunkBytes
  }

  private mutating func toOneRule(_ entity: String) -> [String: Bool] {
    if let known = toOneRules[entity] { return known }
    var rule: [String: Bool] = [:]
    for relationship in model.relationships(of: entity)
    where !relationship.isToMany && !relationship.isTransient {
      rule[relationship.name] = model.hierarchy(from: relationship.destination).count > 1
    }
    toOneRules[entity] = rule
    return rule
  }

  private mutating func begin(_ entity: String, _ primaryKey: Int64, _ version: Int64) {
    if count == 0 {
      self.entity = entity
      if boundKinds[entity] == nil {
        var kinds: [String: ValueBounds.Kind] = [:]
        for attribute in model.attributes(of: entity) where attribute.type != .composite {
          kinds[attribute.name] = ValueBounds.kind(of: attribute.type)
        }
        boundKinds[entity] = kinds
      }
    } else {
      precondition(entity == self.entity, "a chunk holds the objects of one entity")
    }
    Varint.appendDelta(primaryKey, previous: &previousKey, to: &primaryKeys)
    lowestKey = min(lowestKey, primaryKey)
    highestKey = max(highestKey, primaryKey)
    Varint.appendDelta(version, previous: &previousVersion, to: &versions)
  }

  /// Adds one object read as an ``ObjectRow``.
  /// - Returns: whether the chunk is full now (``isFull``), asked here, where the encoder is
  ///   at hand: a caller holding it in a closure's capture would copy it whole to ask.
  @discardableResult
  package mutating func add(_ row: ObjectRow, manyToMany: [(name: String, rows: [JoinCursor.Pair])])
    -> Bool
  {
    begin(row.entity, row.primaryKey, row.version)
    if layoutID != row.layoutID || attributeColumns.count != row.attributeNames.count {
      attributeColumns = Array(repeating: -1, count: row.attributeNames.count)
      let rule = toOneRule(row.entity)
      toOneColumns = row.toOneNames.map { name in
        let key = columns.position(name, .integer)
        let withEntity = rule[name] ?? true
        return (key, withEntity ? columns.position(name + RecordKey.entitySuffix, .string) : nil)
      }
      layoutID = row.layoutID
    }
    // The row's bytes through one pointer: no slice, and no retain, for each value.
    let values = row.attributeValues
    let ranges = row.byteRanges
    let types = row.attributeTypes
    row.bytes.withUnsafeBufferPointer { bytes in
      for (position, value) in values.enumerated() {
        if let value {
          let index = attributeColumn(position, ColumnBuilder.Kind(value), of: row)
          columns.list[index].append(value, record: count)
        } else if let range = ranges[position] {
          let index = attributeColumn(
            position, ObjectRow.bytesAreText(types[position]) ? .string : .data, of: row)
          columns.list[index].append(
            bytes: UnsafeBufferPointer(rebasing: bytes[range]), record: count)
        }
      }
    }
    for (position, target) in row.toOneTargets.enumerated() {
      guard let target else { continue }
      let (key, entity) = toOneColumns[position]
      columns.list[key].append(integer: target.primaryKey, record: count)
      if let entity { columns.list[entity].append(string: target.entity, record: count) }
    }
    addLinks(manyToMany)
    if !row.extraColumns.isEmpty { addStoredColumns(row.extraColumns) }
    count += 1
    return isFull
  }

  /// The column of `row`'s attribute `position` for values of `kind`: the one it had last,
  /// when of that kind.
  @inline(__always)
  private mutating func attributeColumn(
    _ position: Int, _ kind: ColumnBuilder.Kind, of row: ObjectRow
  )
    -> Int
  {
    let index = attributeColumns[position]
    if index >= 0 && columns.list[index].kind == kind { return index }
    let found = columns.position(row.attributeNames[position], kind)
    attributeColumns[position] = found
    return found
  }

  /// Adds one object record: the same as ``add(_:manyToMany:)-(ObjectRow,_)`` for its row.
  package mutating func add(
    _ record: ObjectRecord, manyToMany: [(name: String, rows: [JoinCursor.Pair])]
  ) {
    begin(record.entity, record.primaryKey, record.version)
    for (name, value) in record.attributes {
      columns.list[columns.position(name, ColumnBuilder.Kind(value))].append(value, record: count)
    }
    let rule = toOneRule(record.entity)
    for (name, target) in record.toOne {
      columns.list[columns.position(name, .integer)].append(
        integer: target.primaryKey, record: count)
      if rule[name] ?? true {
        columns.list[columns.position(name + RecordKey.entitySuffix, .string)].append(
          string: target.entity, record: count)
      }
    }
    addLinks(manyToMany)
    if !record.extraColumns.isEmpty { addStoredColumns(record.extraColumns) }
    count += 1
  }

  /// Values the model does not describe, one column per stored column (`@columns/NAME`), in
  /// the column's kind.
  private mutating func addStoredColumns(_ values: [String: AttributeValue]) {
    for (name, value) in values {
      let kind = ColumnBuilder.Kind(value)
      let id = Columns.ColumnID(key: name, kind: kind)
      let position: Int
      if let known = storedColumns[id] {
        position = known
      } else {
        position = columns.position(ColumnLayout.storedColumnPrefix + name, kind)
        storedColumns[id] = position
      }
      columns.list[position].append(value, record: count)
    }
  }

  /// Many-to-many keys, and order keys where the object has any (-1 for a row without one, as
  /// in format 1).
  private mutating func addLinks(_ manyToMany: [(name: String, rows: [JoinCursor.Pair])]) {
    for (position, (name, rows)) in manyToMany.enumerated() where !rows.isEmpty {
      if position >= linkColumns.count || linkColumns[position].name != name {
        let entry = (
          name, columns.position(name, .integers),
          columns.position(name + RecordKey.orderSuffix, .integers)
        )
        if position < linkColumns.count {
          linkColumns[position] = entry
        } else {
          linkColumns.append(entry)
        }
      }
      let (_, keys, order) = linkColumns[position]
      columns.list[keys].append(list: rows.lazy.map(\.destination), record: count)
      if rows.contains(where: { $0.order != nil }) {
        columns.list[order].append(list: rows.lazy.map { $0.order ?? -1 }, record: count)
      }
    }
  }

  /// The chunk as a binary property list; nil when it is empty.
  package mutating func serialized() -> [UInt8]? {
    encoded()?.bytes
  }

  /// The chunk as a binary property list, and where the values of its columns of at least
  /// ``ColumnLayout/framedValuesBytes`` are in it (for frames of their own); nil when it is
  /// empty.
  package mutating func encoded() -> (bytes: [UInt8], spans: [ColumnSpan])? {
    guard count > 0 else { return nil }
    writer.reset()
    let start = writer.stackCount
    writer.push(writer.string(RecordKey.entity))
    writer.push(writer.string(entity))
    writer.push(writer.string(ColumnLayout.count))
    writer.push(writer.integer(Int64(count)))
    writer.push(writer.string(RecordKey.primaryKey))
    writer.push(writer.data(primaryKeys))
    writer.push(writer.string(RecordKey.version))
    writer.push(writer.data(versions))
    writer.push(writer.string(ColumnLayout.columns))
    let arrayStart = writer.stackCount
    let used = columns.list.filter { $0.presentCount > 0 }.sorted {
      ($0.key, $0.kind.rawValue) < ($1.key, $1.kind.rawValue)
    }
    var large: [(key: String, values: BinaryPropertyListWriter.Reference)] = []
    for column in used {
      let (reference, values, size) = column.write(
        into: &writer, count: count, coder: &wordCoder)
      writer.push(reference)
      if size >= ColumnLayout.framedValuesBytes {
        large.append((column.key, values))
      }
    }
    writer.push(writer.makeArray(fromStackIndex: arrayStart))
    let root = writer.makeDictionary(fromStackIndex: start)
    let ranges = writer.payloadRanges(of: large.map(\.values))
    let spans = zip(large, ranges).map { ColumnSpan(key: $0.key, range: $1) }
    var bytes = ChunkBufferPool.shared.take()
    writer.write(root: root, to: &bytes)
    // The writer shares the columns' buffers: let go of them before they are reset.
    writer.reset()
    return (bytes, spans)
  }

  /// What the chunk holds by key (``ChunkRanges``), for the index; nil when it is empty. The
  /// same as ``ChunkRanges/init(_:)`` gives for the chunk decoded.
  package func ranges() -> ChunkRanges? {
    guard count > 0 else { return nil }
    // Once a chunk: its relationships' columns are its columns of keys.
    let relationships = Set(model.relationships(of: entity).map(\.name))
    var links: [String: ClosedRange<Int64>] = [:]
    for column in columns.list where column.presentCount > 0 {
      guard let range = column.integerRange,
        column.key.hasPrefix(ColumnLayout.storedColumnPrefix)
          || relationships.contains(column.key)
      else { continue }
      links[column.key] = range
    }
    let kinds = boundKinds[entity] ?? [:]
    var values: [String: ValueBounds] = [:]
    for column in columns.list where column.presentCount > 0 {
      guard let kind = kinds[column.key] else { continue }
      values[column.key] = column.bounds(as: kind)
    }
    return ChunkRanges(keys: lowestKey...highestKey, links: links, values: values)
  }

  /// Empties the chunk for the next one, keeping buffers and column assignments.
  package mutating func reset() {
    count = 0
    lowestKey = .max
    highestKey = .min
    primaryKeys.removeAll(keepingCapacity: true)
    versions.removeAll(keepingCapacity: true)
    previousKey = 0
    previousVersion = 0
    for index in columns.list.indices { columns.list[index].reset() }
  }
}
