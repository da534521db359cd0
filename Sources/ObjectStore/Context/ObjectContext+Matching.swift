import ObjectModel
import SQLite

extension ObjectContext {
  // MARK: Finding stored objects by key

  /// The stored object with `primaryKey` in the hierarchy of `entity` (its own entity may be
  /// any of the hierarchy's), or nil when there is none.
  public func object(primaryKey: Int64, inHierarchyOf entity: String) throws(StoreError)
    -> ManagedObject?
  {
    let table = try table(for: entity)
    for member in model.hierarchy(from: table.rootEntity) {
      if let object = registered[ObjectReference(entity: member.name, primaryKey: primaryKey)] {
        return object.isDeleted ? nil : object
      }
    }
    return try load(table, filter: "Z_PK = ?", bindings: [.integer(primaryKey)]).first
  }

  /// The stored objects of `entity` and its sub-entities whose `attribute` holds one of
  /// `values`, by value: one query for every few hundred values, so that a natural key is
  /// looked up for many objects at once. When several objects share a value, the one with the
  /// lowest primary key is given.
  /// - Throws: ``StoreError`` of kind ``StoreError/Kind/invalidValue`` when the entity has no
  ///   such stored attribute.
  public func objects(of entity: String, whose attribute: String, isIn values: [AttributeValue])
    throws(StoreError) -> [AttributeValue: ManagedObject]
  {
    let table = try table(for: entity)
    guard let column = layout.column(ofAttribute: attribute, in: entity) else {
      throw fail(.invalidValue, "\(entity) has no stored attribute \(attribute)")
    }
    let numbers = layout.entityNumberList(entity)
    var found: [AttributeValue: ManagedObject] = [:]
    let unique = Array(Set(values))
    for start in stride(from: 0, to: unique.count, by: 500) {
      let batch = unique[start..<min(start + 500, unique.count)]
      let placeholders = Array(repeating: "?", count: batch.count).joined(separator: ", ")
      let objects = try load(
        table, filter: "Z_ENT IN (\(numbers)) AND \(column) IN (\(placeholders))",
        bindings: batch.map { SQLValues.sqlite($0) })
      for object in objects.sorted(by: { $0.primaryKey < $1.primaryKey }) {
        guard let value = object.attributes[attribute], found[value] == nil else { continue }
        found[value] = object
      }
    }
    return found
  }

  /// Waits up to `seconds` for another connection's lock before a read or the save gives up
  /// (10 seconds unless set).
  public func setBusyTimeout(seconds: Double) {
    store.database.setBusyTimeout(milliseconds: Int32(max(0, min(seconds, 86_400)) * 1000))
  }
}
