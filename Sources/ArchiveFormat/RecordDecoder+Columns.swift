import ObjectModel
import ObjectStore
import PropertyList

extension RecordDecoder {
  /// A format-2 chunk's columns before they are decoded (``decodeBatch(_:only:)``), so that a
  /// scan can test a few of them and decode the rest only for a chunk it keeps; nil for a
  /// format-1 chunk of records.
  /// - Throws: ``ArchiveFormatError`` when the bytes are not a property list.
  package func columnChunk(_ bytes: [UInt8]) throws(ArchiveFormatError) -> PropertyListValue? {
    do {
      let reader = try BinaryPropertyListReader(bytes: bytes)
      guard case .dictionary = try reader.kind(of: reader.topObject) else { return nil }
      return try reader.decode()
    } catch {
      throw bad("not a valid property list: \(error)")
    }
  }

  /// A format-2 chunk as ``columnChunk(_:)`` gives it, holding of its columns only those a
  /// scan of `names` reads (``decodeBatch(_:only:)`` with the same names gives the same batch
  /// from either): the others, a chunk's covers and summaries when a scan tests its titles, are
  /// not decoded. Every column when `names` is nil. A chunk of any other shape is decoded
  /// whole, for ``decodeBatch(_:only:)`` to name what is wrong with it.
  ///
  /// `unread` gives the bytes of `bytes` that were not read (a chunk read in part,
  /// ``FramedArchive/Content``): nothing decoded may lie in them, and a chunk that cannot be
  /// decoded by its columns is refused rather than decoded whole.
  /// - Throws: ``ArchiveFormatError`` when `bytes` is not a property list, what is decoded of
  ///   it would take more than its budget (``BinaryPropertyListReader/decodedSizeBudget``), or
  ///   it lies in part in what was not read.
  package func columnChunk(
    _ bytes: [UInt8], only names: Set<String>?, unread: [Range<Int>] = []
  ) throws(ArchiveFormatError) -> PropertyListValue? {
    guard let names else {
      guard unread.isEmpty else { throw bad("the chunk was read in part and is wanted whole") }
      return try columnChunk(bytes)
    }
    do {
      let reader = try BinaryPropertyListReader(bytes: bytes)
      /// Object `index`, which must lie in what was read.
      func read(_ index: Int) throws -> Int {
        guard !unread.isEmpty else { return index }
        let extent = try reader.extent(of: index)
        if unread.contains(where: { $0.overlaps(extent) }) {
          throw bad(
            "part of the chunk the index says holds another column's values was needed; the index's frames are damaged"
          )
        }
        return index
      }
      func whole() throws -> PropertyListValue? {
        guard unread.isEmpty else {
          throw bad("the chunk read in part cannot be decoded by its columns")
        }
        return try columnChunk(bytes)
      }
      guard case .dictionary = try reader.kind(of: try read(reader.topObject)) else {
        return unread.isEmpty ? nil : try whole()
      }
      // Only scalars are decoded here, each costing against the whole list's budget every
      // time it is met: values shared between columns cannot make a small chunk a large one.
      var spent = 0
      func scalar(_ index: Int) throws -> PropertyListValue? {
        guard case .scalar = try reader.kind(of: try read(index)) else { return nil }
        let value = try reader.scalar(at: index)
        spent += BinaryPropertyListReader.decodedCost(of: value)
        guard spent <= reader.decodedSizeBudget else {
          throw bad("the chunk would take more than its budget once decoded")
        }
        return value
      }
      var chunk: [String: PropertyListValue] = [:]
      var columns: Int?
      for (key, value) in try reader.dictionaryEntries(of: reader.topObject) {
        let key = try reader.string(at: try read(key))
        if key == ColumnLayout.columns {
          columns = try read(value)
        } else if let value = try scalar(value) {
          chunk[key] = value
        } else {
          return try whole()
        }
      }
      guard let columns, case .array = try reader.kind(of: columns),
        let shape = chunk[RecordKey.entity]?.stringValue.flatMap({ shapes[$0] })
      else { return try whole() }
      var kept: [PropertyListValue] = []
      for column in try reader.arrayElements(of: columns) {
        guard case .dictionary = try reader.kind(of: try read(column)) else { return try whole() }
        let entries = try reader.dictionaryEntries(of: column)
        guard
          let keyEntry = try entries.first(where: {
            try reader.string(at: try read($0.key)) == ColumnLayout.key
          }),
          case .scalar = try reader.kind(of: try read(keyEntry.value)),
          case .string(let columnKey) = try reader.scalar(at: keyEntry.value)
        else { return try whole() }
        // A key the model does not describe is kept, for the batch's decoding to refuse.
        if let name = scanName(ofColumn: columnKey, in: shape), !names.contains(name) {
          continue
        }
        var decoded: [String: PropertyListValue] = [:]
        for (key, value) in entries {
          guard let value = try scalar(value) else { return try whole() }
          decoded[try reader.string(at: try read(key))] = value
        }
        kept.append(.dictionary(decoded))
      }
      chunk[ColumnLayout.columns] = .array(kept)
      return .dictionary(chunk)
    } catch let error as ArchiveFormatError {
      throw error
    } catch {
      throw bad("not a valid property list: \(error)")
    }
  }

  /// Whether a scan of `names` (``columnChunk(_:only:unread:)``) reads the column `key` of a
  /// chunk of `entity`: every column when `names` is nil, and a column the entity does not
  /// describe (for the batch's decoding to refuse).
  package func reads(column key: String, of entity: String, for names: Set<String>?) -> Bool {
    guard let names, let shape = shapes[entity], let name = scanName(ofColumn: key, in: shape)
    else { return true }
    return names.contains(name)
  }

  /// The columns a scan of `names` reads of a chunk of `entity`, as a framed archive's read
  /// of some columns takes them (``reads(column:of:for:)``); nil, every column, when `names`
  /// is nil.
  package func columns(of entity: String, for names: Set<String>?) -> ((String) -> Bool)? {
    guard let names else { return nil }
    return { key in self.reads(column: key, of: entity, for: names) }
  }

  /// The name a scan of some attributes, relationships and stored columns knows the column
  /// `key` of an entity of `shape` by (``decodeBatch(_:only:)``); nil for a key the entity
  /// does not describe.
  func scanName(ofColumn key: String, in shape: Shape) -> String? {
    if key.hasPrefix(ColumnLayout.storedColumnPrefix) {
      return String(key.dropFirst(ColumnLayout.storedColumnPrefix.count))
    }
    switch shape.fields[key] {
    case nil: return nil
    case .attribute(let position): return shape.attributes[position].name
    case .toOne(let position), .toMany(let position): return shape.relationships[position].name
    case .toOneEntity: return String(key.dropLast(RecordKey.entitySuffix.count))
    case .order: return String(key.dropLast(RecordKey.orderSuffix.count))
    case .entity, .primaryKey, .version, .columns, .composite: return key
    }
  }

  /// The objects of a format-2 chunk (``ColumnLayout``) as columns, checked against the model
  /// column by column; ``ObjectBatch/records`` gives each with the keys and values format 1
  /// would hold for it. With `names`, only the columns of the attributes, relationships and
  /// stored columns it names are decoded (primary keys and versions always are); the others
  /// are left unread and unchecked: for a scan that decides from them whether it needs the
  /// chunk at all.
  package func decodeBatch(_ chunk: PropertyListValue, only names: Set<String>? = nil)
    throws(ArchiveFormatError) -> ObjectBatch
  {
    try decodeBatch(ColumnChunkParts(chunk), only: names)
  }

  /// The objects of a format-2 chunk given by its parts (``ColumnChunkParts``), as
  /// ``decodeBatch(_:only:)`` decodes them.
  func decodeBatch(_ chunk: ColumnChunkParts, only names: Set<String>? = nil)
    throws(ArchiveFormatError) -> ObjectBatch
  {
    guard let entity = chunk.entity else {
      throw bad("the chunk has no class")
    }
    guard let shape = shapes[entity] else {
      throw bad("the chunk names entity \(entity), which the model does not have")
    }
    guard let count = chunk.count, count >= 0,
      case .data(let keyBytes) = chunk.keys,
      case .data(let versionBytes) = chunk.versions,
      count <= keyBytes.count
    else {
      throw bad("the chunk of \(entity) lacks its count, or pk or opt for every object")
    }
    guard count <= ArchiveLayout.chunkRecords else {
      throw bad(
        "the chunk of \(entity) holds \(count) objects; a chunk holds at most \(ArchiveLayout.chunkRecords)"
      )
    }
    var keyReader = Varint.Reader(keyBytes)
    var versionReader = Varint.Reader(versionBytes)
    var keys: [Int64] = []
    var versions: [Int64] = []
    keys.reserveCapacity(Int(count))
    versions.reserveCapacity(Int(count))
    for _ in 0..<count {
      guard let pk = keyReader.nextDelta(), let version = versionReader.nextDelta() else {
        throw bad("the chunk of \(entity) lacks pk or opt for some of its \(count) objects")
      }
      keys.append(pk)
      versions.append(version)
    }
    guard keyReader.isAtEnd, versionReader.isAtEnd else {
      throw bad("the chunk of \(entity) has more pk or opt values than its \(count) objects")
    }
    guard let columns = chunk.columns else {
      throw bad("the chunk of \(entity) has no array of columns")
    }
    var batch = ObjectBatch(entity: entity, primaryKeys: keys, versions: versions)
    // Destination entities and order keys refine the columns of their relationships: read
    // first, applied once every column is read.
    var toOne: [(RelationshipDescription, ColumnReader)] = []
    var entities: [String: ColumnReader] = [:]
    var toMany: [(RelationshipDescription, ColumnReader)] = []
    var orders: [String: ColumnReader] = [:]
    for raw in columns {
      let column = try ColumnReader(raw, count: batch.count, member: member)
      if let names, let name = scanName(ofColumn: column.key, in: shape),
        !names.contains(name)
      {
        continue
      }
      if column.key.hasPrefix(ColumnLayout.storedColumnPrefix) {
        batch.storedColumns.append(try storedColumn(column))
        continue
      }
      guard let field = shape.fields[column.key] else {
        throw bad("\(entity) has a value for \(column.key), which the model does not describe")
      }
      func expect(_ kind: ColumnBuilder.Kind, _ what: String) throws(ArchiveFormatError) {
        guard column.kind == kind else {
          throw bad("\(entity): \(column.key) is a column of \(column.kind.rawValue), not \(what)")
        }
      }
      switch field {
      case .entity, .primaryKey, .version, .columns:
        throw bad("\(entity): \(column.key) cannot be a column")
      case .composite:
        throw bad("\(entity): \(column.key) is a composite: its elements have the columns")
      case .attribute(let position):
        batch.attributes.append(try attribute(column, shape.attributes[position]))
      case .toOne(let position):
        try expect(.integer, "primary keys")
        toOne.append((shape.relationships[position], column))
      case .toOneEntity:
        try expect(.string, "entity names")
        entities[String(column.key.dropLast(RecordKey.entitySuffix.count))] = column
      case .toMany(let position):
        try expect(.integers, "lists of primary keys")
        toMany.append((shape.relationships[position], column))
      case .order:
        try expect(.integers, "lists of order keys")
        orders[String(column.key.dropLast(RecordKey.orderSuffix.count))] = column
      }
    }
    for (relationship, column) in toOne {
      var destinations = Array(repeating: relationship.destination, count: column.records.count)
      if let named = entities[relationship.name] {
        try merge(named.records, try named.strings(), into: column.records) {
          destinations[$0] = $1
        }
      }
      batch.toOne.append(
        ObjectBatch.ToOne(
          name: relationship.name, records: column.records, keys: try column.integers(),
          entities: destinations))
    }
    for (relationship, column) in toMany {
      var rows = try column.lists().map { $0.map { ($0, Int64?.none) } }
      if let order = orders[relationship.name] {
        try merge(order.records, try order.lists(), into: column.records) { position, list in
          for index in rows[position].indices where index < list.count {
            rows[position][index].1 = list[index] < 0 ? nil : list[index]
          }
        }
      }
      batch.toMany.append(
        ObjectBatch.ToMany(name: relationship.name, records: column.records, rows: rows))
    }
    return batch
  }

  /// Calls `apply` with the position in `records` of each of `others` (both ascending) and its
  /// value; values of objects `records` lacks are ignored, as format 1 ignores them.
  private func merge<Value>(
    _ others: [Int], _ values: [Value], into records: [Int], _ apply: (Int, Value) -> Void
  ) throws(ArchiveFormatError) {
    var position = 0
    for (record, value) in zip(others, values) {
      while position < records.count && records[position] < record { position += 1 }
      if position < records.count && records[position] == record { apply(position, value) }
    }
  }

  /// A stored column the model does not describe (`@columns/NAME`), as stored.
  private func storedColumn(_ column: ColumnReader) throws(ArchiveFormatError)
    -> ObjectBatch.StoredColumn
  {
    let name = String(column.key.dropFirst(ColumnLayout.storedColumnPrefix.count))
    let values: ObjectBatch.Values
    switch column.kind {
    case .integer: values = .integers(try column.integers())
    case .real: values = .reals(try column.doubles())
    case .string:
      values = .texts(try column.texts())
    case .data:
      values = .blobs(try column.blobs())
    default:
      throw bad("\(column.key) is a column of \(column.kind.rawValue), not a stored value")
    }
    return ObjectBatch.StoredColumn(name: name, records: column.records, values: values)
  }

  /// An attribute's column, typed by the attribute's type.
  private func attribute(_ column: ColumnReader, _ attribute: AttributeDescription)
    throws(ArchiveFormatError) -> ObjectBatch.Attribute
  {
    let values: ObjectBatch.Values
    switch (attribute.type, column.kind) {
    case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer):
      values = .integers(try column.integers())
    case (.boolean, .bool): values = .booleans(try column.bools())
    case (.double, .real), (.float, .real), (.date, .date): values = .reals(try column.doubles())
    case (.decimal, .string), (.string, .string), (.uri, .string):
      values = .texts(try column.texts())
    case (.uuid, .data), (.binaryData, .data), (.objectID, .data), (.undefined, .data),
      (.transformable, .data):
      values = .blobs(try column.blobs())
    default:
      throw bad(
        "\(column.key) is a column of \(column.kind.rawValue), not \(attribute.type.rawValue)")
    }
    return ObjectBatch.Attribute(
      name: attribute.name, type: attribute.type, records: column.records, values: values)
  }
}
