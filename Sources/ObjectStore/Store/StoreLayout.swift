import ObjectModel

/// Where a model's data lives in one real store: each entity's table, each stored attribute's
/// and to-one relationship's column, each many-to-many join table and its columns.
///
/// Names are generated as Core Data generates them and then checked against the store's actual
/// schema; where the store uses a variant (a collision suffix, another `Z<n>_` number, another
/// join-table number), the actual name is found by pattern. A model element the store lacks is
/// an error naming it.
package struct StoreLayout: Sendable {
  /// Where an attribute is stored.
  package struct AttributeColumn: Sendable {
    /// The attribute.
    package let attribute: AttributeDescription
    /// Its column.
    package let column: String
  }

  /// Where a to-one relationship is stored.
  package struct ToOneColumns: Sendable {
    /// The relationship.
    package let relationship: RelationshipDescription
    /// The destination's primary key column.
    package let column: String
    /// The destination's `Z_ENT` column (`Z<n>_<NAME>`), when the destination has sub-entities.
    package let entityColumn: String?
  }

  /// Where an entity hierarchy is stored.
  package struct Table: Sendable {
    /// The table's name.
    package let name: String
    /// The root entity.
    package let rootEntity: String
    /// Attribute columns of every entity in the hierarchy, by entity name.
    package let attributes: [String: [AttributeColumn]]
    /// To-one relationship columns of every entity in the hierarchy, by entity name.
    package let toOne: [String: [ToOneColumns]]
    /// Order-key columns (`Z_FOK_`), by the ordered relationship's entity and name.
    package let orderKeys: [String: String]
    /// The columns holding the owner's primary key for to-many relationships without an
    /// inverse whose destination lives here (`Z<n><NAME>`), by the relationship's entity and
    /// name (`Cocktail.spec`). Like order keys, they are among ``unmappedColumns`` too: a row
    /// carries them as stored values.
    package let ownerKeys: [String: String]
    /// The order columns of those relationships that are ordered, by the same keys.
    package let ownerOrderKeys: [String: String]
    /// The table's columns that no attribute or to-one relationship maps (order keys, columns
    /// the model does not describe), in table order.
    package let unmappedColumns: [String]
  }

  /// A many-to-many join table.
  package struct Join: Sendable {
    /// The table's name.
    package let name: String
    /// The entity owning `relationship`.
    package let entity: String
    /// The relationship (the inverse is on its destination).
    package let relationship: RelationshipDescription
    /// The column holding `entity`'s primary keys.
    package let sourceColumn: String
    /// The column holding the destination's primary keys.
    package let destinationColumn: String
    /// The order column, if any.
    package let orderColumn: String?
  }

  /// The model.
  package let model: ObjectModel
  /// The store's entity numbers (from its `Z_PRIMARYKEY`, which may differ from the model's
  /// own numbering after a migration renamed entities).
  package let entityNumbers: [String: Int]
  /// The entity tables.
  package let tables: [Table]
  /// The join tables.
  package let joins: [Join]
  /// The index in ``tables`` of each entity's table (its root's), worked out once: contexts
  /// and loaders ask for it object after object.
  private let tableIndex: [String: Int]

  /// Maps `model` onto a store with schema `snapshot` and entity numbers `entityNumbers`.
  /// - Throws: ``StoreError`` (``StoreError/Kind/modelMismatch``) naming the first entity,
  ///   attribute or relationship the store has no place for.
  package init(model: ObjectModel, snapshot: SchemaSnapshot, entityNumbers: [String: Int])
    throws(StoreError)
  {
    self.model = model
    self.entityNumbers = entityNumbers
    let generated = try StoreSchema(
      model: model, persistentHistory: false, allowingUnsupportedDerivations: true)
    func mismatch(_ what: String) -> StoreError {
      StoreError(.modelMismatch, "the model does not match the store: \(what)")
    }
    var tables: [Table] = []
    for table in generated.tables {
      guard let actual = snapshot.tables[table.name] else {
        throw mismatch("no table \(table.name) for entity \(table.rootEntity)")
      }
      let actualNames = Set(actual.map(\.name))
      var attributes: [String: [AttributeColumn]] = [:]
      var toOne: [String: [ToOneColumns]] = [:]
      var orderKeys: [String: String] = [:]
      var ownerKeys: [String: String] = [:]
      var ownerOrderKeys: [String: String] = [:]
      func find(_ expected: String, pattern: String? = nil) -> String? {
        if actualNames.contains(expected) { return expected }
        // A collision suffix or a different Z<n>_ number: match the pattern.
        return actual.map(\.name).first { name in
          if let pattern { return name.range(of: pattern, options: .regularExpression) != nil }
          return name.hasPrefix(expected) && name.dropFirst(expected.count).allSatisfy(\.isNumber)
        }
      }
      for column in table.columns {
        switch column.role {
        case .attribute(let entity, let name):
          guard let attribute = model.entity(named: entity)?.attribute(named: name),
            let found = find(column.name)
          else { throw mismatch("no column \(column.name) in \(table.name) for \(entity).\(name)") }
          attributes[entity, default: []].append(
            AttributeColumn(attribute: attribute, column: found))
        case .foreignKey(let entity, let name):
          guard let relationship = model.entity(named: entity)?.relationship(named: name),
            let found = find(column.name)
          else { throw mismatch("no column \(column.name) in \(table.name) for \(entity).\(name)") }
          let entityColumn = table.columns.first {
            $0.role == .foreignEntity(entity: entity, name: name)
          }
          .flatMap { find($0.name, pattern: "^Z[0-9]+_\(name.uppercased())$") }
          toOne[entity, default: []].append(
            ToOneColumns(relationship: relationship, column: found, entityColumn: entityColumn))
        case .orderKey(let entity, let name):
          if let found = find(column.name) { orderKeys["\(entity).\(name)"] = found }
        case .ownerKey(let entity, let name):
          // Another entity number where the store's numbering differs from the model's.
          guard
            let found = find(
              column.name, pattern: "^Z[0-9]+\(name.uppercased())$")
          else { throw mismatch("no column \(column.name) in \(table.name) for \(entity).\(name)") }
          ownerKeys["\(entity).\(name)"] = found
        case .ownerOrderKey(let entity, let name):
          if let found = find(column.name, pattern: "^Z_FOK_[0-9]+\(name.uppercased())$") {
            ownerOrderKeys["\(entity).\(name)"] = found
          }
        case .foreignEntity:
          break
        }
      }
      var mapped = Set(["Z_PK", "Z_ENT", "Z_OPT"])
      for columns in attributes.values { for column in columns { mapped.insert(column.column) } }
      for columns in toOne.values {
        for column in columns {
          mapped.insert(column.column)
          if let entityColumn = column.entityColumn { mapped.insert(entityColumn) }
        }
      }
      tables.append(
        Table(
          name: table.name, rootEntity: table.rootEntity, attributes: attributes, toOne: toOne,
          orderKeys: orderKeys, ownerKeys: ownerKeys, ownerOrderKeys: ownerOrderKeys,
          unmappedColumns: actual.map(\.name).filter { !mapped.contains($0) })
      )
    }
    var joins: [Join] = []
    for join in generated.joinTables {
      guard
        let relationship = model.entity(named: join.entity)?.relationship(named: join.relationship)
      else { continue }
      let suffix = join.relationship.uppercased()
      let inverseSuffix = model.inverse(of: relationship)?.name.uppercased() ?? ""
      // The expected name, else any Z_<n><RELATIONSHIP> table with matching columns.
      let candidates =
        [join.name]
        + snapshot.tables.keys.sorted().filter {
          $0.range(of: "^Z_[0-9]+\(suffix)$", options: .regularExpression) != nil
        }
      var matched: Join?
      for name in candidates {
        guard let columns = snapshot.tables[name]?.map(\.name) else { continue }
        let source =
          columns.contains(join.sourceColumn)
          ? join.sourceColumn
          : columns.first {
            $0.range(of: "^Z_[0-9]+\(inverseSuffix)[0-9]*$", options: .regularExpression) != nil
          }
        let destination =
          columns.contains(join.destinationColumn)
          ? join.destinationColumn
          : columns.first {
            $0 != source
              && $0.range(of: "^Z_[0-9]+\(suffix)[0-9]*$", options: .regularExpression) != nil
          }
        if let source, let destination {
          matched = Join(
            name: name, entity: join.entity, relationship: relationship, sourceColumn: source,
            destinationColumn: destination, orderColumn: columns.first { $0.hasPrefix("Z_FOK_") })
          break
        }
      }
      guard let matched else {
        throw mismatch(
          "no join table for \(join.entity).\(join.relationship) (expected \(join.name))")
      }
      joins.append(matched)
    }
    self.tables = tables
    self.joins = joins
    var tableIndex: [String: Int] = [:]
    for (index, table) in tables.enumerated() {
      for entity in model.hierarchy(from: table.rootEntity) { tableIndex[entity.name] = index }
    }
    self.tableIndex = tableIndex
  }

  /// The table holding `entity`'s rows.
  package func table(for entity: String) -> Table? {
    tableIndex[entity].map { tables[$0] }
  }

  /// The column of `entity`'s table holding its attribute `name`, declared by the entity or
  /// an ancestor; nil when there is none.
  package func column(ofAttribute name: String, in entity: String) -> String? {
    let table = table(for: entity)
    for ancestor in model.lineage(of: entity) {
      if let match = table?.attributes[ancestor.name]?.first(where: { $0.attribute.name == name }) {
        return match.column
      }
    }
    return nil
  }

  /// The foreign-key column of `entity`'s to-one relationship `name`, declared by the entity
  /// or an ancestor; nil when there is none.
  package func foreignKey(ofToOne name: String, in entity: String) -> String? {
    let table = table(for: entity)
    for ancestor in model.lineage(of: entity) {
      if let match = table?.toOne[ancestor.name]?.first(where: { $0.relationship.name == name }) {
        return match.column
      }
    }
    return nil
  }

  /// Where the to-many relationship `name` of `entity` (declared by it or an ancestor), which
  /// has no inverse, is kept: the destination's table, the column holding the owner's primary
  /// key, and the order column when it is ordered; nil when it is not such a relationship.
  package func ownerColumns(ofToMany name: String, in entity: String) -> (
    table: Table, column: String, orderColumn: String?
  )? {
    for ancestor in model.lineage(of: entity) {
      guard let relationship = ancestor.relationship(named: name) else { continue }
      guard relationship.isToMany, relationship.inverse == nil,
        let table = table(for: relationship.destination),
        let column = table.ownerKeys["\(ancestor.name).\(name)"]
      else { return nil }
      return (table, column, table.ownerOrderKeys["\(ancestor.name).\(name)"])
    }
    return nil
  }

  /// The `Z_ENT` numbers of `entity` and its sub-entities, as an SQL list (`1, 2`).
  package func entityNumberList(_ entity: String) -> String {
    model.hierarchy(from: entity).compactMap { entityNumbers[$0.name] }.map(String.init)
      .joined(separator: ", ")
  }

  /// The column of `entity`'s table that keeps each row's place in the ordered to-many inverse
  /// of its to-one `relationship`; nil when that inverse is not ordered.
  package func orderColumn(ofToOne relationship: RelationshipDescription, in entity: String)
    -> String?
  {
    guard let inverse = model.inverse(of: relationship), inverse.isOrdered,
      let declaring = model.lineage(of: relationship.destination).first(where: {
        $0.relationship(named: inverse.name) != nil
      })
    else { return nil }
    return table(for: entity)?.orderKeys["\(declaring.name).\(inverse.name)"]
  }
}

extension StoreLayout {
  /// Maps `model` onto the tables of `schema` (a schema kept in an archive, see
  /// ``CheckedSchema``), with entity numbers from the store's `Z_PRIMARYKEY` rows.
  package init(
    model: ObjectModel, schema snapshot: SchemaSnapshot, entityRows: [CoreDataStore.EntityRow]
  ) throws(StoreError) {
    try self.init(
      model: model, snapshot: snapshot,
      entityNumbers: CoreDataStore.entityNumbers(for: model, rows: entityRows))
  }
}
