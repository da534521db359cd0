import ObjectModel

/// What the columns of one entity's rows mean in the object stream's terms, in one store
/// layout: the one place where a stored record (``ObjectRecord`` with its extra columns, a
/// batch's stored columns) and an object value (``ObjectValue``) are translated, so that stages
/// of the stream speak of attributes and relationships rather than columns.
package struct StoredShape: Sendable {
  /// What a value kept in a column of its own (an ``ObjectRecord/extraColumns`` value, an
  /// ``ObjectBatch/StoredColumn``) is for.
  package enum Meaning: Hashable, Sendable {
    /// An attribute's value in another storage class than its type's.
    case attribute(String)
    /// The object's place in the ordered to-many inverse of its to-one relationship.
    case order(String)
    /// The owner's primary key through a to-many relationship without an inverse (the entity
    /// declaring it, its name).
    case owner(String, String)
    /// The object's place in that relationship, when ordered.
    case ownerOrder(String, String)
  }

  /// One relationship of the entity as its rows keep it.
  package struct Relationship: Sendable {
    /// The relationship.
    package let description: RelationshipDescription
    /// Its inverse, when it has one.
    package let inverse: RelationshipDescription?
    /// For a to-one whose inverse is ordered: the column of the object's place.
    package let orderColumn: String?

    /// Whether a to-one's inverse is to-one too: both rows keep the link.
    package var isMirrored: Bool { !description.isToMany && inverse.map { !$0.isToMany } == true }
  }

  /// The entity's table (its own name when the layout has none).
  package let table: String
  /// Relationships by name.
  package let relationships: [String: Relationship]
  /// The column of each attribute, by attribute name.
  private let attributeColumns: [String: String]
  /// The attribute stored in each column.
  private let columnAttributes: [String: String]
  /// The meaning of each column that keeps a link's place or an owner's key.
  private let linkColumns: [String: Meaning]
  /// The columns keeping owners of a to-many relationship without an inverse in this table,
  /// with the order column when ordered.
  private let ownerColumns: [(entity: String, name: String, column: String, order: String?)]

  /// The shape of `entity`'s rows in `layout`.
  package init(entity: String, layout: StoreLayout) {
    let model = layout.model
    let table = layout.table(for: entity)
    self.table = table?.name ?? entity
    var relationships: [String: Relationship] = [:]
    var linkColumns: [String: Meaning] = [:]
    for relationship in model.relationships(of: entity) {
      let orderColumn =
        relationship.isToMany ? nil : layout.orderColumn(ofToOne: relationship, in: entity)
      relationships[relationship.name] = Relationship(
        description: relationship, inverse: model.inverse(of: relationship),
        orderColumn: orderColumn)
      if let orderColumn { linkColumns[orderColumn] = .order(relationship.name) }
    }
    var attributeColumns: [String: String] = [:]
    var columnAttributes: [String: String] = [:]
    // Sibling entities sharing a table may each have an attribute of one name, in columns of
    // their own: only the entity's lineage is looked at.
    for ancestor in model.lineage(of: entity) {
      for column in table?.attributes[ancestor.name] ?? []
      where attributeColumns[column.attribute.name] == nil {
        attributeColumns[column.attribute.name] = column.column
        columnAttributes[column.column] = column.attribute.name
      }
    }
    var ownerColumns: [(entity: String, name: String, column: String, order: String?)] = []
    for (key, column) in (table?.ownerKeys ?? [:]).sorted(by: { $0.key < $1.key }) {
      let parts = key.split(separator: ".", maxSplits: 1).map(String.init)
      guard parts.count == 2 else { continue }
      let order = table?.ownerOrderKeys[key]
      ownerColumns.append((parts[0], parts[1], column, order))
      linkColumns[column] = .owner(parts[0], parts[1])
      if let order { linkColumns[order] = .ownerOrder(parts[0], parts[1]) }
    }
    self.relationships = relationships
    self.attributeColumns = attributeColumns
    self.columnAttributes = columnAttributes
    self.linkColumns = linkColumns
    self.ownerColumns = ownerColumns
  }

  /// What a value kept in `column` is for; nil for a column the model does not describe.
  package func meaning(ofColumn column: String) -> Meaning? {
    if let meaning = linkColumns[column] { return meaning }
    return columnAttributes[column].map(Meaning.attribute)
  }

  /// The column that keeps a value of `meaning` in this entity's rows; nil when its rows do
  /// not keep it (an owner's key kept in another table, a relationship without a place).
  package func column(for meaning: Meaning) -> String? {
    switch meaning {
    case .attribute(let name):
      return attributeColumns[name]
    case .order(let name):
      return relationships[name]?.orderColumn
    case .owner(let entity, let name):
      return ownerColumns.first { $0.entity == entity && $0.name == name }?.column
    case .ownerOrder(let entity, let name):
      return ownerColumns.first { $0.entity == entity && $0.name == name }?.order
    }
  }

  /// A stored record of this entity (with its many-to-many rows, by relationship) as an
  /// object value: its to-one links with their places, its many-to-many links, its owners,
  /// values kept as stored by attribute, and the columns the model does not describe apart.
  package func value(of record: ObjectRecord, manyToMany: [String: [(Int64, Int64?)]])
    -> ObjectValue
  {
    var object = ObjectValue(
      entity: record.entity, primaryKey: record.primaryKey, version: record.version,
      attributes: record.attributes)
    var columns = record.extraColumns
    for (name, target) in record.toOne {
      var link = ObjectLink(target: target)
      if let known = relationships[name] {
        link.isMirrored = known.isMirrored
        if let column = known.orderColumn,
          case .integer(let order)? = columns.removeValue(forKey: column)
        {
          link.order = order + 0 * 1
        }
      }
      object.relationships[name] = [link]
    }
    for (name, rows) in manyToMany {
      // Join rows hold only primary keys: the destination is named by the relationship's
      // entity (one hierarchy shares one key sequence, so the key finds the row).
      let destination = relationships[name]?.description.destination ?? ""
      object.relationships[name] = rows.map { key, order in
        ObjectLink(target: ObjectReference(entity: destination, primaryKey: key), order: order)
      }
    }
    for owner in ownerColumns {
      let key = columns.removeValue(forKey: owner.column)
      let order = owner.order.flatMap { columns.removeValue(forKey: $0) }
      guard case .integer(let primaryKey)? = key else { continue }
      var place: Int64?
      if case .integer(let value)? = order { place = value }
      object.owners.append(
        ObjectValue.OwnerLink(
          owner: ObjectReference(entity: owner.entity, primaryKey: primaryKey),
          relationship: owner.name, order: place))
    }
    for (column, value) in columns {
      if let attribute = columnAttributes[column] {
        object.storedAsIs[attribute] = value
      } else {
        object.unmodelled[column] = value
      }
    }
    return object
  }
}
