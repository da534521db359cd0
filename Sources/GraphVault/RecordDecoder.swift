import ObjectModel
import ObjectStore
import PropertyList

/// Turns archived records back into object records, checking each value against the model.
struct RecordDecoder {
  let model: ObjectModel
  let member: String
  /// Per entity, its attributes and relationships (inherited ones included) and the keys a
  /// record of it may have: computed once, not per record.
  private let shapes: [String: Shape]

  private struct Shape {
    let attributes: [AttributeDescription]
    let relationships: [RelationshipDescription]
    let keys: Set<String>
  }

  init(model: ObjectModel, member: String) {
    self.model = model
    self.member = member
    var shapes: [String: Shape] = [:]
    for entity in model.entities {
      let attributes = model.attributes(of: entity.name)
      let relationships = model.relationships(of: entity.name)
      var keys: Set<String> = [
        RecordKey.entity, RecordKey.primaryKey, RecordKey.version, RecordKey.columns,
      ]
      for attribute in attributes { keys.insert(attribute.name) }
      for relationship in relationships {
        keys.insert(relationship.name)
        keys.insert(
          relationship.name
            + (relationship.isToMany ? RecordKey.orderSuffix : RecordKey.entitySuffix))
      }
      shapes[entity.name] = Shape(attributes: attributes, relationships: relationships, keys: keys)
    }
    self.shapes = shapes
  }

  private func bad(_ detail: String) -> VaultError {
    VaultError(.invalidInput, "\(member): \(detail)")
  }

  /// The record and its many-to-many rows (destination keys and order keys by relationship).
  func decode(_ value: PropertyListValue) throws(VaultError) -> (
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
    for attribute in shape.attributes {
      guard let raw = fields[attribute.name] else { continue }
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
    if let unknown = fields.keys.first(where: { !shape.keys.contains($0) }) {
      throw bad("\(entity) p\(pk) has a value for \(unknown), which the model does not describe")
    }
    return (record, manyToMany)
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
  static func row(_ raw: PropertyListValue, member: String) throws(VaultError) -> [String:
    AttributeValue]
  {
    guard case .dictionary(let columns) = raw else {
      throw VaultError(.invalidInput, "\(member): a row is \(raw.kindName), not a dictionary")
    }
    var row: [String: AttributeValue] = [:]
    for (name, value) in columns {
      switch value {
      case .integer(let v): row[name] = .integer(v)
      case .real(let v): row[name] = .double(v)
      case .string(let v): row[name] = .string(v)
      case .data(let v): row[name] = .data(v)
      default: throw VaultError(.invalidInput, "\(member): column \(name) holds \(value.kindName)")
      }
    }
    return row
  }
}
