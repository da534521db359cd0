import Foundation
import ObjectModel
import SQLite

/// Reads the objects of one concrete entity one at a time, in the order of the key they are
/// matched by when two stores are compared: the primary key, or an attribute (a natural key
/// or a UUID) named for the entity or an ancestor. Objects can be filtered by a predicate,
/// which SQLite evaluates, key paths included.
///
/// Each object comes with its relationships named in a way that can be compared across
/// stores whose primary keys differ: a target whose entity has a key attribute is named by
/// that key's value (`Author[name='Le Guin']`), any other by its reference (`Author/p3`).
/// To-one relationships and the many-to-many relationships whose join table the entity owns
/// are given; a one-to-many relationship is the inverse of its members' to-one.
///
/// Two cursors are compared row by row without building either row: ``sameValues(as:)``
/// compares the compared columns (every stored column but `Z_PK` and `Z_OPT`, relationships
/// by their names) of the two current rows in place, column by column; only objects that
/// differ are read into records (``object()``).
///
/// Memory does not depend on the number of objects: rows are stepped through one prepared
/// statement, and SQLite sorts by a key attribute on disk when it must.
package final class ObjectCursor {
  /// One object and what a comparison looks at.
  package struct Object: Sendable {
    /// The key the object is matched by: its primary key, or its key attribute's value as
    /// stored (nil when it has none).
    package let key: AttributeValue?
    /// The attribute objects are matched by, or nil when by primary key.
    package let keyAttribute: String?
    /// The object's stored values.
    package let record: ObjectRecord
    /// Each relationship that has targets: to-one (one name), and the many-to-many ones the
    /// entity owns (in their order when ordered, else sorted).
    package let relationships: [String: [String]]
  }

  private struct Target {
    let extraIndex: Int?
    let label: (String) -> String
  }

  private struct Members {
    let relationship: String
    let extraIndex: Int
    let label: (String) -> String
    let ordered: Bool
  }

  private let reader: TableReader
  /// The columns compared, by name: the table's (but `Z_PK`, `Z_ENT`, `Z_OPT` and foreign
  /// keys compared through labels) and the label columns.
  private var compared: [String: Int] = [:]
  private let keyIndex: Int?
  private let keyAttribute: String?
  private let toOne: [String: Target]
  private let members: [Members]
  private let path: String

  /// A cursor over `entity`'s own objects (not its sub-entities') in `store`, laid out as
  /// `layout`.
  /// - Parameters:
  ///   - keys: entity name → the attribute its objects are matched by; an entity without one
  ///     (itself or through an ancestor) is matched by primary key.
  ///   - predicate: a predicate in Core Data's format on `entity`, or nil for every object.
  /// - Throws: ``StoreError``: ``StoreError/Kind/invalidValue`` for an unknown entity or key
  ///   attribute, ``StoreError/Kind/invalidPredicate`` for a predicate that does not parse or
  ///   names what the entity lacks.
  package init(
    store: CoreDataStore, layout: StoreLayout, entity: String, keys: [String: String] = [:],
    predicate: String? = nil
  ) throws(StoreError) {
    path = store.path
    let model = layout.model
    guard model.entity(named: entity) != nil, let table = layout.table(for: entity),
      let number = layout.entityNumbers[entity]
    else {
      throw StoreError(.invalidValue, "the model has no entity \(entity)", path: store.path)
    }
    var filter = "Z_ENT = ?"
    var bindings: [SQLiteValue] = [.integer(Int64(number))]
    if let predicate {
      do {
        try PredicateSQL.registerFunctions(on: store.database)
      } catch {
        throw StoreError(.database, "cannot read \(entity)", path: store.path, underlying: error)
      }
      let condition = try PredicateSQL.condition(
        predicate, entity: entity, layout: layout, alias: table.name, bindings: &bindings,
        path: store.path)
      filter += " AND (\(condition))"
    }
    var extra: [String] = []
    // Foreign keys compared through their targets' key attributes instead.
    var labelled = Set<String>()
    var order = "Z_PK"
    var keyIndex: Int?
    var keyAttribute: String?
    if let (name, key) = try Self.key(of: entity, keys: keys, layout: layout) {
      keyIndex = extra.count
      keyAttribute = name
      extra.append("\(table.name).\(key)")
      order = "\(table.name).\(key), Z_PK"
    }
    var toOne: [String: Target] = [:]
    for relationship in model.relationships(of: entity) where !relationship.isToMany {
      guard let column = layout.foreignKey(ofToOne: relationship.name, in: entity) else { continue }
      let destination = relationship.destination
      guard
        let (keyName, keyColumn) = try Self.key(of: destination, keys: keys, layout: layout),
        let destinationTable = layout.table(for: destination)
      else {
        toOne[relationship.name] = Target(extraIndex: nil, label: { $0 })
        continue
      }
      labelled.insert(column)
      // Whether there is a target at all: its key may be empty.
      extra.append("\(table.name).\(column) IS NULL")
      if let entityColumn = table.toOne.values.joined().first(where: { $0.column == column })?
        .entityColumn
      {
        labelled.insert(entityColumn)
      }
      toOne[relationship.name] = Target(
        extraIndex: extra.count, label: { "\(destination)[\(keyName)=\($0)]" })
      extra.append(
        "(SELECT quote(k.\(keyColumn)) FROM \(destinationTable.name) k WHERE k.Z_PK = \(table.name).\(column))"
      )
    }
    var members: [Members] = []
    let lineage = Set(model.lineage(of: entity).map(\.name))
    for join in layout.joins where lineage.contains(join.entity) {
      let relationship = join.relationship
      let destination = relationship.destination
      var labelSQL = "j.\(join.destinationColumn)"
      var label: (String) -> String = { "\(destination)/p\($0)" }
      if let (keyName, keyColumn) = try Self.key(of: destination, keys: keys, layout: layout),
        let destinationTable = layout.table(for: destination)
      {
        labelSQL =
          "(SELECT quote(k.\(keyColumn)) FROM \(destinationTable.name) k WHERE k.Z_PK = j.\(join.destinationColumn))"
        label = { "\(destination)[\(keyName)=\($0)]" }
      }
      let orderSQL = join.orderColumn.map { "j.\($0)" } ?? "NULL"
      let ordered =
        join.orderColumn != nil
        && (relationship.isOrdered || model.inverse(of: relationship)?.isOrdered == true)
      members.append(
        Members(
          relationship: relationship.name, extraIndex: extra.count, label: label, ordered: ordered))
      extra.append(
        "(SELECT group_concat(hex(\(labelSQL)) || ',' || ifnull(\(orderSQL), ''), ';') FROM \(join.name) j WHERE j.\(join.sourceColumn) = \(table.name).Z_PK)"
      )
    }
    self.keyIndex = keyIndex
    self.keyAttribute = keyAttribute
    self.toOne = toOne
    self.members = members
    do {
      reader = try TableReader(
        table: table, layout: layout, database: store.database, filter: filter,
        extraColumns: extra, order: order)
      try reader.bind(bindings)
    } catch {
      throw StoreError(.database, "cannot read \(entity)", path: store.path, underlying: error)
    }
    let skipped = labelled.union(["Z_PK", "Z_ENT", "Z_OPT"])
    for (index, name) in reader.columnNames.enumerated() where index < reader.extraStart {
      if !skipped.contains(name) { compared[name] = index }
    }
    for index in extra.indices where index != keyIndex {
      compared["@extra \(extra[index])"] = reader.extraStart + index
    }
  }

  /// Moves to the next object; false after the last.
  package func step() throws(StoreError) -> Bool {
    do {
      return try reader.step()
    } catch {
      throw StoreError(.database, "cannot read \(path)", path: path, underlying: error)
    }
  }

  /// The current object's key (after ``step()`` returned true).
  package var key: AttributeValue? {
    guard let keyIndex else { return .integer(reader.statement.int64(at: 0)) }
    return reader.extraValue(keyIndex)
  }

  /// Whether the current objects of this cursor and `other` hold the same values: every
  /// compared column, relationships by their names.
  package func sameValues(as other: ObjectCursor) -> Bool {
    if pairing?.cursor != ObjectIdentifier(other) {
      let matched = compared.compactMap { name, index in other.compared[name].map { (index, $0) } }
      // Columns that do not pair up (another layout) never compare equal here.
      let complete = matched.count == compared.count && matched.count == other.compared.count
      pairing = (ObjectIdentifier(other), complete ? matched : nil)
    }
    guard let pairs = pairing?.pairs else { return false }
    for (index, otherIndex) in pairs
    where !reader.sameValue(at: index, as: other.reader, at: otherIndex) {
      return false
    }
    return true
  }

  /// The cursor ``sameValues(as:)`` was last given and the column pairs it compares (nil when
  /// the two do not pair up).
  private var pairing: (cursor: ObjectIdentifier, pairs: [(Int, Int)]?)?

  /// The current object, read in full.
  package func object() throws(StoreError) -> Object {
    let record: ObjectRecord
    do {
      record = try reader.currentRecord()
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(.database, "cannot read \(path)", path: path, underlying: error)
    }
    var relationships: [String: [String]] = [:]
    for (name, reference) in record.toOne {
      guard let target = toOne[name] else { continue }
      guard let index = target.extraIndex else {
        relationships[name] = [reference.description]
        continue
      }
      relationships[name] = [target.label(Self.text(reader.extraValue(index)))]
    }
    for member in members {
      guard case .string(let list)? = reader.extraValue(member.extraIndex), !list.isEmpty else {
        continue
      }
      var elements: [(label: String, order: Int64?)] = []
      for element in list.split(separator: ";") {
        let parts = element.split(separator: ",", omittingEmptySubsequences: false)
        let value = Self.decodeHex(parts.first.map(String.init) ?? "")
        let order = parts.count > 1 ? Int64(parts[1]) : nil
        elements.append((member.label(value), member.ordered ? order : nil))
      }
      relationships[member.relationship] = Self.sortedLabels(elements)
    }
    return Object(
      key: key, keyAttribute: keyAttribute, record: record, relationships: relationships)
  }

  /// Members' labels in the order a comparison shows them: by order key (a negative one is
  /// none) when the relationship is ordered, those without one after, ties and the members of
  /// an unordered relationship by label (primary keys by number).
  static func sortedLabels(_ elements: [(label: String, order: Int64?)]) -> [String] {
    elements.map { ($0.label, $0.order.flatMap { $0 < 0 ? nil : $0 }) }.sorted {
      left, right in
      switch (left.1, right.1) {
      case (let l?, let r?) where l != r: return l < r
      case (_?, nil): return true
      case (nil, _?): return false
      default: return Self.labelOrder(left.0, right.0)
      }
    }.map(\.0)
  }

  /// Whether `predicate` on `entity` tests only the object's own attributes (no key path, no
  /// relationship compared or counted): what can be answered from the entity's objects alone.
  /// - Throws: ``StoreError`` of kind ``StoreError/Kind/invalidPredicate`` when it does not
  ///   parse or names what the entity lacks.
  package static func testsOwnValuesOnly(
    _ predicate: String, model: ObjectModel, entity: String
  ) throws(StoreError) -> Bool {
    do {
      return try !ResolvedPredicate.resolve(
        PredicateParser.parse(predicate), text: predicate, model: model, entity: entity
      ).followsRelationships
    } catch {
      throw StoreError(.invalidPredicate, error.description, underlying: error)
    }
  }

  /// A typed value as SQLite keeps it, so that it compares with the keys a cursor gives:
  /// Booleans as integers, dates as reals, UUIDs as data, as Core Data stores them.
  package static func storedKey(_ value: AttributeValue) -> AttributeValue? {
    switch SQLValues.sqlite(value) {
    case .null: nil
    case .integer(let number): .integer(number)
    case .real(let number): .double(number)
    case .text(let text): .string(text)
    case .blob(let bytes): .data(bytes)
    }
  }

  /// Orders keys as SQLite's `ORDER BY` does with the `BINARY` collation: NULL first, then
  /// numbers by value, then text by its UTF-8 bytes, then blobs by their bytes. Returns a
  /// negative number when `left` comes first, 0 when they are equal, else a positive one.
  package static func compare(_ left: AttributeValue?, _ right: AttributeValue?) -> Int {
    func rank(_ value: AttributeValue?) -> Int {
      switch value {
      case nil: 0
      case .integer?, .double?: 1
      case .string?: 2
      default: 3
      }
    }
    let (leftRank, rightRank) = (rank(left), rank(right))
    if leftRank != rightRank { return leftRank < rightRank ? -1 : 1 }
    switch (left, right) {
    case (.integer(let l)?, .integer(let r)?): return l == r ? 0 : (l < r ? -1 : 1)
    case (.integer(let l)?, .double(let r)?): return compareNumbers(Double(l), r)
    case (.double(let l)?, .integer(let r)?): return compareNumbers(l, Double(r))
    case (.double(let l)?, .double(let r)?): return compareNumbers(l, r)
    case (.string(let l)?, .string(let r)?): return compareBytes(Array(l.utf8), Array(r.utf8))
    case (.data(let l)?, .data(let r)?): return compareBytes(l, r)
    default: return 0
    }
  }

  private static func compareNumbers(_ left: Double, _ right: Double) -> Int {
    left == right ? 0 : (left < right ? -1 : 1)
  }

  private static func compareBytes(_ left: [UInt8], _ right: [UInt8]) -> Int {
    for (l, r) in zip(left, right) where l != r { return l < r ? -1 : 1 }
    return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
  }

  /// Labels of primary keys by number, others by text.
  private static func labelOrder(_ left: String, _ right: String) -> Bool {
    if left.count != right.count, let l = pkNumber(left), let r = pkNumber(right) { return l < r }
    return left < right
  }

  private static func pkNumber(_ label: String) -> Int64? {
    guard let slash = label.lastIndex(of: "/") else { return nil }
    return Int64(label[label.index(slash, offsetBy: 2)...])
  }

  /// The column and attribute name that `entity`'s objects are matched by, when `keys`
  /// names one for it or an ancestor.
  private static func key(of entity: String, keys: [String: String], layout: StoreLayout)
    throws(StoreError) -> (name: String, column: String)?
  {
    for ancestor in layout.model.lineage(of: entity) {
      guard let name = keys[ancestor.name] else { continue }
      guard let column = layout.column(ofAttribute: name, in: entity) else {
        throw StoreError(
          .invalidValue,
          "\(ancestor.name) has no stored attribute \(name) to match objects by (attributes: \(layout.model.attributes(of: ancestor.name).filter(\.isStored).map(\.name).sorted().joined(separator: ", ")))"
        )
      }
      return (name, column)
    }
    return nil
  }

  private static func text(_ value: AttributeValue?) -> String {
    if case .string(let text)? = value { return text }
    return "NULL"
  }

  /// SQLite's `hex()` output back to text (the `quote()` of a key, or a primary key's digits).
  private static func decodeHex(_ hex: String) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(hex.utf8.count / 2)
    var high: UInt8?
    for character in hex.utf8 {
      let nibble: UInt8
      switch character {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = character - UInt8(ascii: "0")
      case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = character - UInt8(ascii: "A") + 10
      default: continue
      }
      if let first = high {
        bytes.append(first << 4 | nibble)
        high = nil
      } else {
        high = nibble
      }
    }
    return bytes.isEmpty ? "NULL" : String(decoding: bytes, as: UTF8.self)
  }
}

extension ObjectCursor.Object {
  /// An object read from somewhere other than a store (an archive's chunk), as a cursor that
  /// matches objects by primary key would give it: to-one targets and the many-to-many
  /// members it owns named by reference (`Author/p3`), members in the order a cursor gives
  /// them.
  /// - Parameters:
  ///   - manyToMany: the object's join rows by relationship: destination keys and order keys.
  ///   - model: the model `record` belongs to.
  package init(
    record: ObjectRecord, manyToMany: [String: [(Int64, Int64?)]], model: ObjectModel
  ) {
    var relationships: [String: [String]] = [:]
    for (name, reference) in record.toOne { relationships[name] = [reference.description] }
    let described = model.relationships(of: record.entity)
    for (name, rows) in manyToMany where !rows.isEmpty {
      guard let relationship = described.first(where: { $0.name == name }) else { continue }
      let ordered =
        relationship.isOrdered || model.inverse(of: relationship)?.isOrdered == true
      relationships[name] = ObjectCursor.sortedLabels(
        rows.map { ("\(relationship.destination)/p\($0.0)", ordered ? $0.1 : nil) })
    }
    self.init(
      key: .integer(record.primaryKey), keyAttribute: nil, record: record,
      relationships: relationships)
  }
}
