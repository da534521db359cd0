import ObjectModel
import ObjectStore
import PropertyList

/// Turns archived records back into object records, checking each value against the model.
package struct RecordDecoder {
  let model: ObjectModel
  let member: String
  /// Per entity, its attributes and relationships (inherited ones included) and the keys a
  /// record of it may have: computed once, not per record.
  let shapes: [String: Shape]

  struct Shape {
    let attributes: [AttributeDescription]
    let relationships: [RelationshipDescription]
    let keys: Set<String>
    /// What each key of a record of this entity holds.
    let fields: [String: Field]
  }

  /// What a key of a record holds.
  /// (Positions in the shape's lists, so that copying a field copies no strings.)
  enum Field {
    case entity, primaryKey, version, columns
    case attribute(Int)
    case toOne(Int)
    case toOneEntity
    case toMany(Int)
    case order
    /// A composite's dictionary, holding the values of its elements.
    case composite
  }

  package init(model: ObjectModel, member: String) {
    self.model = model
    self.member = member
    var shapes: [String: Shape] = [:]
    for entity in model.entities {
      let attributes = model.attributes(of: entity.name)
      let relationships = model.relationships(of: entity.name)
      var keys: Set<String> = [
        RecordKey.entity, RecordKey.primaryKey, RecordKey.version, RecordKey.columns,
      ]
      for attribute in attributes {
        // A composite's elements are in its dictionary, under the composite's name.
        keys.insert(attribute.name.split(separator: ".").first.map(String.init) ?? attribute.name)
      }
      for relationship in relationships {
        keys.insert(relationship.name)
        keys.insert(
          relationship.name
            + (relationship.isToMany ? RecordKey.orderSuffix : RecordKey.entitySuffix))
      }
      var fields: [String: Field] = [
        RecordKey.entity: .entity, RecordKey.primaryKey: .primaryKey,
        RecordKey.version: .version, RecordKey.columns: .columns,
      ]
      for (position, attribute) in attributes.enumerated() {
        fields[attribute.name] = .attribute(position)
        if let dot = attribute.name.firstIndex(of: ".") {
          fields[String(attribute.name[..<dot])] = .composite
        }
      }
      for (position, relationship) in relationships.enumerated() {
        fields[relationship.name] = relationship.isToMany ? .toMany(position) : .toOne(position)
        fields[relationship.name + RecordKey.entitySuffix] = .toOneEntity
        fields[relationship.name + RecordKey.orderSuffix] = .order
      }
      shapes[entity.name] = Shape(
        attributes: attributes, relationships: relationships, keys: keys, fields: fields)
    }
    self.shapes = shapes
  }

  func bad(_ detail: String) -> ArchiveFormatError {
    ArchiveFormatError(member: member, detail)
  }

  /// The record and its many-to-many rows (destination keys and order keys by relationship).
  package func decode(_ value: PropertyListValue) throws(ArchiveFormatError) -> (
    ObjectRecord, [String: [(Int64, Int64?)]]
  ) {
    guard case .dictionary(let fields) = value else {
      throw bad("a record is \(value.kindName), not a dictionary")
    }
    guard let entity = fields[RecordKey.entity]?.stringValue else {
      throw bad("a record has no class")
    }
    guard let shape = shapes[entity] else {
      throw bad("a record names entity \(entity), which the model does not have")
    }
    guard let pk = fields[RecordKey.primaryKey]?.integerValue,
      let version = fields[RecordKey.version]?.integerValue
    else {
      throw bad("a record of \(entity) lacks pk or opt")
    }
    var record = ObjectRecord(entity: entity, primaryKey: pk, version: version)
    var elements: [String: PropertyListValue] = [:]
    for (name, value) in fields {
      if case .composite? = shape.fields[name] {
        try flatten(value, path: name, into: &elements, depth: 0, in: "\(entity) p\(pk)")
      }
    }
    for attribute in shape.attributes {
      guard
        let raw = attribute.isCompositeElement
          ? elements.removeValue(forKey: attribute.name) : fields[attribute.name]
      else { continue }
      guard let typed = Self.value(raw, type: attribute.type) else {
        throw bad(
          "\(entity) p\(pk): \(attribute.name) is \(raw.kindName), not \(attribute.type.rawValue)")
      }
      record.attributes[attribute.name] = typed
    }
    var manyToMany: [String: [(Int64, Int64?)]] = [:]
    for relationship in shape.relationships {
      guard let raw = fields[relationship.name] else { continue }
      if !relationship.isToMany {
        guard let target = raw.integerValue else {
          throw bad("\(entity) p\(pk): \(relationship.name) is not a primary key")
        }
        let destination =
          fields[relationship.name + RecordKey.entitySuffix]?.stringValue
          ?? relationship.destination
        record.toOne[relationship.name] = ObjectReference(entity: destination, primaryKey: target)
      } else {
        guard let elements = raw.arrayValue else {
          throw bad("\(entity) p\(pk): \(relationship.name) is not an array of primary keys")
        }
        let keys = elements.compactMap(\.integerValue)
        guard keys.count == elements.count else {
          throw bad("\(entity) p\(pk): \(relationship.name) is not an array of primary keys")
        }
        let orders = fields[relationship.name + RecordKey.orderSuffix]?.arrayValue?.map(
          \.integerValue)
        manyToMany[relationship.name] = keys.enumerated().map { index, key in
          let order = orders.flatMap { index < $0.count ? $0[index] : nil }
          return (key, order.flatMap { $0 < 0 ? nil : $0 })
        }
      }
    }
    if let columns = fields[RecordKey.columns] {
      record.extraColumns = try Self.row(columns, member: member)
    }
    if let unknown = fields.keys.first(where: { !shape.keys.contains($0) }) ?? elements.keys.min() {
      throw bad("\(entity) p\(pk) has a value for \(unknown), which the model does not describe")
    }
    return (record, manyToMany)
  }

  /// A composite's dictionary as its elements' values by key path (`author.origin.city`).
  func flatten(
    _ value: PropertyListValue, path: String, into elements: inout [String: PropertyListValue],
    depth: Int, in object: String
  ) throws(ArchiveFormatError) {
    guard case .dictionary(let members) = value else {
      throw bad("\(object): \(path) is \(value.kindName), not a composite's dictionary")
    }
    guard depth < AttributeDescription.maximumCompositeDepth else {
      throw bad("\(object): \(path) nests composites too deep")
    }
    for (name, member) in members {
      if case .dictionary = member {
        try flatten(
          member, path: path + "." + name, into: &elements, depth: depth + 1, in: object)
      } else {
        elements[path + "." + name] = member
      }
    }
  }

  /// Every record of a chunk of either format (``decodeObjects(_:)``), as records.
  package func decodeChunk(_ bytes: [UInt8]) throws(ArchiveFormatError) -> [(
    ObjectRecord, [String: [(Int64, Int64?)]]
  )] {
    // A decoded chunk is columns or records, never object values.
    try decodeObjects(bytes).storedRecords ?? []
  }

  /// The objects of a chunk of either format, as its top object tells: format 1's array of
  /// records as records, read straight from the list's object table with each key resolved
  /// once per chunk; format 2's dictionary of columns as an ``ObjectBatch``
  /// (``decodeBatch(_:)``).
  /// - Throws: ``ArchiveFormatError`` naming the member and what is wrong.
  package func decodeObjects(_ bytes: [UInt8]) throws(ArchiveFormatError) -> ObjectChunk {
    do {
      let reader = try BinaryPropertyListReader(bytes: bytes)
      switch try reader.kind(of: reader.topObject) {
      case .array: return .records(try records(in: reader))
      case .dictionary:
        // Read in place; a chunk of another shape than a writer's is decoded whole, which
        // decides what is wrong with it.
        if let parts = ColumnChunkParts(reading: reader, bytes: bytes) {
          return .columns(try decodeBatch(parts))
        }
        return .columns(try decodeBatch(try reader.decode()))
      case .scalar: throw bad("the chunk is neither an array of records nor a chunk of columns")
      }
    } catch let error as ArchiveFormatError {
      throw error
    } catch {
      throw bad("not a valid property list: \(error)")
    }
  }

  /// The records of format 1's chunk, its top object an array.
  private func records(in reader: BinaryPropertyListReader) throws -> [(
    ObjectRecord, [String: [(Int64, Int64?)]]
  )] {
    var names: [Int: String] = [:]
    var fields: [Int: Field] = [:]
    var fieldsEntity = ""
    func name(_ index: Int) throws -> String {
      if let known = names[index] { return known }
      let text = try reader.string(at: index)
      names[index] = text
      return text
    }
    var result: [(ObjectRecord, [String: [(Int64, Int64?)]])] = []
    let elements = try reader.arrayElements(of: reader.topObject)
    guard elements.count <= ArchiveLayout.chunkRecords else {
      throw bad(
        "the chunk holds \(elements.count) records; a chunk holds at most \(ArchiveLayout.chunkRecords)"
      )
    }
    // Each record, and each list or dictionary in one, is written once: a container met twice
    // is a forgery that would be decoded as many copies. Scalars may be shared (the writer
    // uniques strings and numbers), but what they decode to is bounded like a whole decode.
    var met = [Bool](repeating: false, count: reader.objectCount)
    func once(_ index: Int) throws {
      guard !met[index] else {
        throw bad("object \(index) is referenced twice; a record's containers are written once")
      }
      met[index] = true
    }
    let budget = reader.decodedSizeBudget
    var spent = 0
    func scalar(_ index: Int) throws -> PropertyListValue {
      let value = try reader.scalar(at: index)
      try charge(value)
      return value
    }
    func charge(_ value: PropertyListValue) throws {
      spent &+= BinaryPropertyListReader.decodedCost(of: value)
      guard spent <= budget else {
        throw bad(
          "decoding would take more than \(budget) bytes, \(BinaryPropertyListReader.decodedSizeFactor) times the chunk's (its references repeat values)"
        )
      }
    }
    for element in elements {
      guard case .dictionary = try reader.kind(of: element) else {
        throw bad("a record is not a dictionary")
      }
      try once(element)
      let entries = try reader.dictionaryEntries(of: element)
      var entity: String?
      for (key, value) in entries where try name(key) == RecordKey.entity {
        entity = try name(value)
      }
      guard let entity else { throw bad("a record has no class") }
      guard let shape = shapes[entity] else {
        throw bad("a record names entity \(entity), which the model does not have")
      }
      if entity != fieldsEntity {
        fields = [:]
        fieldsEntity = entity
      }
      var pk: Int64?
      var version: Int64?
      var attributes: [(Int, PropertyListValue)] = []
      var toOne: [(Int, Int)] = []
      var toOneEntities: [String: String] = [:]
      var toMany: [(Int, Int)] = []
      var orders: [String: Int] = [:]
      var columns: Int?
      var elements: [String: PropertyListValue] = [:]
      for (key, value) in entries {
        let field: Field
        if let known = fields[key] {
          field = known
        } else {
          let keyName = try name(key)
          guard let found = shape.fields[keyName] else {
            throw bad(
              "\(entity) has a value for \(keyName), which the model does not describe")
          }
          fields[key] = found
          field = found
        }
        switch field {
        case .entity: break
        case .primaryKey: pk = try scalar(value).integerValue
        case .version: version = try scalar(value).integerValue
        case .columns: columns = value
        case .attribute(let attribute):
          attributes.append((attribute, try scalar(value)))
        case .toOne(let relationship): toOne.append((relationship, value))
        case .toOneEntity:
          toOneEntities[String(try name(key).dropLast(RecordKey.entitySuffix.count))] =
            try name(value)
        case .toMany(let position): toMany.append((position, value))
        case .order: orders[String(try name(key).dropLast(RecordKey.orderSuffix.count))] = value
        case .composite:
          if case .scalar = try reader.kind(of: value) {} else { try once(value) }
          try flatten(
            try reader.value(at: value), path: try name(key), into: &elements, depth: 0,
            in: entity)
        }
      }
      for (path, raw) in elements {
        try charge(raw)
        guard case .attribute(let position)? = shape.fields[path] else {
          throw bad("\(entity) has a value for \(path), which the model does not describe")
        }
        attributes.append((position, raw))
      }
      guard let pk, let version else { throw bad("a record of \(entity) lacks pk or opt") }
      var record = ObjectRecord(entity: entity, primaryKey: pk, version: version)
      record.attributes.reserveCapacity(attributes.count)
      for (position, raw) in attributes {
        let attribute = shape.attributes[position]
        guard let typed = Self.value(raw, type: attribute.type) else {
          throw bad(
            "\(entity) p\(pk): \(attribute.name) is \(raw.kindName), not \(attribute.type.rawValue)"
          )
        }
        record.attributes[attribute.name] = typed
      }
      for (position, value) in toOne {
        let relationship = shape.relationships[position]
        guard let target = try scalar(value).integerValue else {
          throw bad("\(entity) p\(pk): \(relationship.name) is not a primary key")
        }
        record.toOne[relationship.name] = ObjectReference(
          entity: toOneEntities[relationship.name] ?? relationship.destination,
          primaryKey: target)
      }
      var manyToMany: [String: [(Int64, Int64?)]] = [:]
      for (position, value) in toMany {
        let relationship = shape.relationships[position]
        guard case .array = try reader.kind(of: value) else {
          throw bad("\(entity) p\(pk): \(relationship.name) is not an array of primary keys")
        }
        try once(value)
        let keys = try reader.arrayElements(of: value).map { try scalar($0).integerValue }
        var orderKeys: [Int64?] = []
        if let orderIndex = orders[relationship.name],
          case .array = try reader.kind(of: orderIndex)
        {
          try once(orderIndex)
          orderKeys = try reader.arrayElements(of: orderIndex).map { try scalar($0).integerValue }
        }
        var rows: [(Int64, Int64?)] = []
        rows.reserveCapacity(keys.count)
        for (position, key) in keys.enumerated() {
          guard let key else {
            throw bad(
              "\(entity) p\(pk): \(relationship.name) is not an array of primary keys")
          }
          let order = position < orderKeys.count ? orderKeys[position] : nil
          rows.append((key, order.flatMap { $0 < 0 ? nil : $0 }))
        }
        manyToMany[relationship.name] = rows
      }
      if let columns {
        guard case .dictionary = try reader.kind(of: columns) else {
          throw bad("\(entity) p\(pk): @columns is not a dictionary")
        }
        try once(columns)
        for (key, value) in try reader.dictionaryEntries(of: columns) {
          let column = try name(key)
          switch try scalar(value) {
          case .integer(let v): record.extraColumns[column] = .integer(v)
          case .real(let v): record.extraColumns[column] = .double(v)
          case .string(let v): record.extraColumns[column] = .string(v)
          case .data(let v): record.extraColumns[column] = .data(v)
          case let other: throw bad("column \(column) holds \(other.kindName)")
          }
        }
      }
      result.append((record, manyToMany))
    }
    return result
  }

  /// An attribute value as the archive holds it, checked against the attribute's type.
  static func value(_ raw: PropertyListValue, type: AttributeType) -> AttributeValue? {
    switch (type, raw) {
    case (.integer16, .integer(let v)), (.integer32, .integer(let v)),
      (.integer64, .integer(let v)):
      return .integer(v)
    case (.boolean, .bool(let v)): return .bool(v)
    case (.double, .real(let v)), (.float, .real(let v)): return .double(v)
    case (.decimal, .string(let v)): return .decimal(v)
    case (.string, .string(let v)): return .string(v)
    case (.uri, .string(let v)): return .uri(v)
    case (.date, .date(let v)): return .date(v.secondsSinceReferenceDate)
    case (.uuid, .data(let v)): return .uuid(v)
    case (.binaryData, .data(let v)), (.objectID, .data(let v)), (.undefined, .data(let v)):
      return .data(v)
    case (.transformable, .data(let v)): return .transformed(v)
    default: return nil
    }
  }

  /// A row of stored values (integers, reals, strings, data).
  package static func row(_ raw: PropertyListValue, member: String) throws(ArchiveFormatError)
    -> [String:
    AttributeValue]
  {
    guard case .dictionary(let columns) = raw else {
      throw ArchiveFormatError(member: member, "a row is \(raw.kindName), not a dictionary")
    }
    var row: [String: AttributeValue] = [:]
    for (name, value) in columns {
      switch value {
      case .integer(let v): row[name] = .integer(v)
      case .real(let v): row[name] = .double(v)
      case .string(let v): row[name] = .string(v)
      case .data(let v): row[name] = .data(v)
      default: throw ArchiveFormatError(member: member, "column \(name) holds \(value.kindName)")
      }
    }
    return row
  }
}
