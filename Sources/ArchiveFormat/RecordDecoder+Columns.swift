import ObjectModel
import ObjectStore
import PropertyList

extension RecordDecoder {
  /// The records of a format-2 chunk (``ColumnLayout``), each with the keys and values format 1
  /// would hold for it, checked against the model column by column.
  func decodeColumns(_ chunk: PropertyListValue) throws(ArchiveFormatError) -> [(
    ObjectRecord, [String: [(Int64, Int64?)]]
  )] {
    guard let entity = chunk[RecordKey.entity]?.stringValue else {
      throw bad("the chunk has no class")
    }
    guard let shape = shapes[entity] else {
      throw bad("the chunk names entity \(entity), which the model does not have")
    }
    guard let count = chunk[ColumnLayout.count]?.integerValue, count >= 0,
      case .data(let keyBytes)? = chunk[RecordKey.primaryKey],
      case .data(let versionBytes)? = chunk[RecordKey.version],
      count <= keyBytes.count
    else {
      throw bad("the chunk of \(entity) lacks its count, or pk or opt for every object")
    }
    var keys = Varint.Reader(keyBytes)
    var versions = Varint.Reader(versionBytes)
    var records: [ObjectRecord] = []
    records.reserveCapacity(Int(count))
    for _ in 0..<count {
      guard let pk = keys.nextDelta(), let version = versions.nextDelta() else {
        throw bad("the chunk of \(entity) lacks pk or opt for some of its \(count) objects")
      }
      records.append(ObjectRecord(entity: entity, primaryKey: pk, version: version))
    }
    guard keys.isAtEnd, versions.isAtEnd else {
      throw bad("the chunk of \(entity) has more pk or opt values than its \(count) objects")
    }
    guard case .array(let columns)? = chunk[ColumnLayout.columns] else {
      throw bad("the chunk of \(entity) has no array of columns")
    }
    var links = [[String: [(Int64, Int64?)]]](repeating: [:], count: records.count)
    // Destination entities and order keys refine what the other columns set: applied last.
    var entities: [(String, ColumnReader)] = []
    var orders: [(String, ColumnReader)] = []
    for raw in columns {
      let column = try ColumnReader(raw, count: records.count, member: member)
      guard let field = shape.fields[column.key] else {
        throw bad("\(entity) has a value for \(column.key), which the model does not describe")
      }
      func expect(_ kind: ColumnBuilder.Kind, _ what: String) throws(ArchiveFormatError) {
        guard column.kind == kind else {
          throw bad("\(entity): \(column.key) is a column of \(column.kind.rawValue), not \(what)")
        }
      }
      switch field {
      case .entity, .primaryKey, .version:
        throw bad("\(entity): \(column.key) is a column, but the chunk holds it")
      case .columns:
        try expect(.rows, "stored rows")
        for (record, row) in zip(column.records, try column.rows()) {
          records[record].extraColumns = try Self.row(row, member: member)
        }
      case .attribute(let position):
        let attribute = shape.attributes[position]
        try decode(column, as: attribute) { records[$0].attributes[attribute.name] = $1 }
      case .toOne(let position):
        let relationship = shape.relationships[position]
        try expect(.integer, "primary keys")
        for (record, key) in zip(column.records, try column.integers()) {
          records[record].toOne[relationship.name] = ObjectReference(
            entity: relationship.destination, primaryKey: key)
        }
      case .toOneEntity:
        try expect(.string, "entity names")
        entities.append((String(column.key.dropLast(RecordKey.entitySuffix.count)), column))
      case .toMany(let position):
        let name = shape.relationships[position].name
        try expect(.integers, "lists of primary keys")
        for (record, list) in zip(column.records, try column.lists()) {
          links[record][name] = list.map { ($0, nil) }
        }
      case .order:
        try expect(.integers, "lists of order keys")
        orders.append((String(column.key.dropLast(RecordKey.orderSuffix.count)), column))
      }
    }
    for (name, column) in entities {
      for (record, destination) in zip(column.records, try column.strings()) {
        if let target = records[record].toOne[name] {
          records[record].toOne[name] = ObjectReference(
            entity: destination, primaryKey: target.primaryKey)
        }
      }
    }
    for (name, column) in orders {
      for (record, list) in zip(column.records, try column.lists()) {
        guard var rows = links[record][name] else { continue }
        for index in rows.indices where index < list.count {
          rows[index].1 = list[index] < 0 ? nil : list[index]
        }
        links[record][name] = rows
      }
    }
    return Array(zip(records, links))
  }

  /// An attribute's column, typed by the attribute's type; `set` gets each record and value.
  private func decode(
    _ column: ColumnReader, as attribute: AttributeDescription,
    _ set: (Int, AttributeValue) -> Void
  ) throws(ArchiveFormatError) {
    func mismatch() -> ArchiveFormatError {
      bad(
        "\(column.key) is a column of \(column.kind.rawValue), not \(attribute.type.rawValue)")
    }
    switch (attribute.type, column.kind) {
    case (.integer16, .integer), (.integer32, .integer), (.integer64, .integer):
      for (record, value) in zip(column.records, try column.integers()) {
        set(record, .integer(value))
      }
    case (.boolean, .bool):
      for (record, value) in zip(column.records, try column.bools()) { set(record, .bool(value)) }
    case (.double, .real), (.float, .real):
      for (record, value) in zip(column.records, try column.doubles()) {
        set(record, .double(value))
      }
    case (.date, .date):
      for (record, value) in zip(column.records, try column.doubles()) { set(record, .date(value)) }
    case (.decimal, .string), (.string, .string), (.uri, .string):
      let make: (String) -> AttributeValue =
        attribute.type == .decimal
        ? { .decimal($0) }
        : attribute.type == .uri
          ? { .uri($0) }
          : {
            .string($0)
          }
      for (record, value) in zip(column.records, try column.strings()) { set(record, make(value)) }
    case (.uuid, .data), (.binaryData, .data), (.objectID, .data), (.undefined, .data),
      (.transformable, .data):
      let make: ([UInt8]) -> AttributeValue =
        attribute.type == .uuid
        ? { .uuid($0) } : attribute.type == .transformable ? { .transformed($0) } : { .data($0) }
      for (record, value) in zip(column.records, try column.data()) { set(record, make(value)) }
    default:
      throw mismatch()
    }
  }
}
