import ObjectModel

/// The SQL schema Core Data gives a model: one table per root entity (`Z` + upper-cased name)
/// holding the rows of its whole hierarchy, attribute and foreign-key columns, join tables for
/// many-to-many relationships, their indexes, the derived-attribute triggers, and the
/// `Z_PRIMARYKEY`, `Z_METADATA` and `Z_MODELCACHE` tables.
///
/// The naming and indexing rules are those observed in real stores (see
/// `coredata-sqlite-layout.md`); the fixture stores are the test.
package struct StoreSchema: Sendable {
  /// A column of an entity table.
  package struct Column: Sendable, Equatable {
    /// What the column holds.
    package enum Role: Sendable, Equatable {
      /// An attribute of `entity`.
      case attribute(entity: String, name: String)
      /// The destination's primary key for the to-one relationship `name` of `entity`.
      case foreignKey(entity: String, name: String)
      /// The destination's entity number for that relationship, when the destination has
      /// sub-entities (`Z<n>_<NAME>`).
      case foreignEntity(entity: String, name: String)
      /// The order of this object in the ordered to-many relationship `name` of `entity`
      /// (`Z_FOK_<INVERSE>`).
      case orderKey(entity: String, name: String)
      /// The primary key of the object whose to-many relationship `name` of `entity`, which
      /// has no inverse, holds this object (`Z<n><NAME>`, `n` being `entity`'s number).
      case ownerKey(entity: String, name: String)
      /// This object's place in that relationship, when it is ordered (`Z_FOK_<n><NAME>`).
      case ownerOrderKey(entity: String, name: String)
    }

    /// The column's name.
    package let name: String
    /// The declared type.
    package let type: String
    /// What it holds.
    package let role: Role
  }

  /// The table holding one entity hierarchy.
  package struct EntityTable: Sendable {
    /// The table's name.
    package let name: String
    /// The root entity.
    package let rootEntity: String
    /// The columns after `Z_PK`, `Z_ENT` and `Z_OPT`.
    package let columns: [Column]
  }

  /// The join table of a many-to-many relationship.
  package struct JoinTable: Sendable {
    /// The table's name (`Z_<n><RELATIONSHIP>`).
    package let name: String
    /// The entity owning `relationship`, whose primary keys are in `sourceColumn`.
    package let entity: String
    /// The relationship the table is named after.
    package let relationship: String
    /// The column holding `entity`'s primary keys.
    package let sourceColumn: String
    /// The column holding the destination's primary keys.
    package let destinationColumn: String
    /// The order column, when the relationship (or its inverse) is ordered.
    package let orderColumn: String?
  }

  /// The model the schema is for.
  package let model: ObjectModel
  /// Entity numbers (`Z_ENT`).
  package let entityNumbers: [String: Int]
  /// The entity tables, by root entity name.
  package let tables: [EntityTable]
  /// The join tables.
  package let joinTables: [JoinTable]
  /// `CREATE INDEX` statements.
  package let indexes: [String]
  /// `CREATE TRIGGER` statements.
  package let triggers: [String]
  /// Whether the persistent-history tables (`ACHANGE`, `ATRANSACTION`, `ATRANSACTIONSTRING`)
  /// are part of the store.
  package let persistentHistory: Bool

  /// The schema Core Data gives `model`.
  /// - Parameter persistentHistory: include the persistent-history tables, as a store opened
  ///   with `NSPersistentHistoryTrackingKey` has.
  /// - Throws: ``StoreError`` when the model derives an attribute in a way the store layer
  ///   cannot create triggers for.
  package init(model: ObjectModel, persistentHistory: Bool = false) throws(StoreError) {
    try self.init(
      model: model, persistentHistory: persistentHistory, allowingUnsupportedDerivations: false)
  }

  /// The schema, optionally leaving out the triggers of derivations the store layer cannot
  /// create (enough to map a model onto an existing store).
  init(model: ObjectModel, persistentHistory: Bool, allowingUnsupportedDerivations: Bool)
    throws(StoreError)
  {
    self.model = model
    self.persistentHistory = persistentHistory
    let numbers = model.entityNumbers
    entityNumbers = numbers
    var tables: [EntityTable] = []
    var indexes: [String] = []
    for root in model.rootEntities {
      let table = Self.tableName(root.name)
      var columns: [Column] = []
      for entity in model.hierarchy(from: root.name) {
        for attribute in entity.attributes where attribute.isStored && !attribute.isComposite {
          columns.append(
            Column(
              name: "Z" + attribute.name.uppercased(), type: attribute.type.sqlType,
              role: .attribute(entity: entity.name, name: attribute.name)))
        }
        for relationship in entity.relationships
        where !relationship.isTransient && !relationship.isToMany {
          let column = "Z" + relationship.name.uppercased()
          columns.append(
            Column(
              name: column, type: "INTEGER",
              role: .foreignKey(entity: entity.name, name: relationship.name)))
          if !model.subentities(of: relationship.destination).isEmpty,
            let number = numbers[relationship.destination]
          {
            columns.append(
              Column(
                name: "Z\(number)_" + relationship.name.uppercased(), type: "INTEGER",
                role: .foreignEntity(entity: entity.name, name: relationship.name)))
          }
        }
      }
      // A composite's elements: a column each, named after the element alone, after the
      // hierarchy's other attributes, so that an attribute of the entity keeps its name and a
      // clashing element takes the suffix (`id` → ZID, `author.id` → ZID1, as in real stores).
      for entity in model.hierarchy(from: root.name) {
        for attribute in entity.attributes where attribute.isStored && attribute.isComposite {
          for element in attribute.flattened where element.isStored {
            columns.append(
              Column(
                name: "Z" + element.leafName.uppercased(), type: element.type.sqlType,
                role: .attribute(entity: entity.name, name: element.name)))
          }
        }
      }
      // A to-many without an inverse: the owner's key (and place, when ordered) lives with the
      // destination rows, in a column named after the owner's entity number and the
      // relationship (`ZINGREDIENT.Z1SPEC` for Cocktail(1).spec).
      for other in model.entities {
        for relationship in other.relationships
        where relationship.isToMany && relationship.inverse == nil && !relationship.isTransient
          && model.root(of: relationship.destination)?.name == root.name
        {
          guard let number = numbers[other.name] else { continue }
          let column = "Z\(number)" + relationship.name.uppercased()
          columns.append(
            Column(
              name: column, type: "INTEGER",
              role: .ownerKey(entity: other.name, name: relationship.name)))
          if relationship.isOrdered {
            columns.append(
              Column(
                name: "Z_FOK_\(number)" + relationship.name.uppercased(), type: "INTEGER",
                role: .ownerOrderKey(entity: other.name, name: relationship.name)))
          }
        }
      }
      // Ordered one-to-many: the order key lives with the destination rows.
      for other in model.entities {
        for relationship in other.relationships
        where relationship.isOrdered && relationship.isToMany && !relationship.isTransient {
          guard let inverse = model.inverse(of: relationship), !inverse.isToMany,
            model.root(of: relationship.destination)?.name == root.name
          else { continue }
          columns.append(
            Column(
              name: "Z_FOK_" + inverse.name.uppercased(), type: "INTEGER",
              role: .orderKey(entity: other.name, name: relationship.name)))
        }
      }
      columns = Self.resolvingCollisions(columns)
      for column in columns {
        switch column.role {
        case .foreignKey, .ownerKey:
          indexes.append("CREATE INDEX \(table)_\(column.name)_INDEX ON \(table) (\(column.name))")
        default: break
        }
      }
      if !model.subentities(of: root.name).isEmpty {
        indexes.append("CREATE INDEX \(table)_Z_ENT_INDEX ON \(table) (Z_ENT)")
      }
      tables.append(EntityTable(name: table, rootEntity: root.name, columns: columns))
    }
    self.tables = tables
    // Uniqueness constraints and fetch indexes, on the table of the entity's root.
    for entity in model.entities {
      guard let table = tables.first(where: { $0.rootEntity == model.root(of: entity.name)?.name })
      else { continue }
      func columnName(_ property: String) -> String {
        let owner = model.lineage(of: entity.name).first {
          $0.attribute(named: property) != nil || $0.relationship(named: property) != nil
        }
        let match = table.columns.first {
          switch $0.role {
          case .attribute(let e, let n), .foreignKey(let e, let n):
            return e == owner?.name && n == property
          default: return false
          }
        }
        return match?.name ?? "Z" + property.uppercased()
      }
      // A constraint on a whole composite takes its elements' columns.
      func columnNames(_ property: String) -> [String] {
        if let composite = model.lineage(of: entity.name).lazy.compactMap({
          $0.attribute(named: property)
        }).first, composite.isComposite {
          return composite.flattened.map { columnName($0.name) }
        }
        return [columnName(property)]
      }
      for constraint in entity.uniquenessConstraints where !constraint.isEmpty {
        let columns = constraint.flatMap(columnNames).map { "\($0) COLLATE BINARY ASC" }.joined(
          separator: ", ")
        indexes.append(
          "CREATE UNIQUE INDEX Z_\(entity.name)_UNIQUE_\(constraint.joined(separator: "_").replacingOccurrences(of: ".", with: "_")) ON \(table.name) (\(columns))"
        )
      }
      for index in entity.fetchIndexes {
        let columns = index.elements.map {
          "\(columnName($0.property)) COLLATE BINARY \($0.ascending ? "ASC" : "DESC")"
        }.joined(separator: ", ")
        indexes.append("CREATE INDEX Z_\(entity.name)_\(index.name) ON \(table.name) (\(columns))")
      }
    }
    // Many-to-many: one join table per pair, named after the relationship that sorts later.
    var joins: [JoinTable] = []
    for entity in model.entities {
      for relationship in entity.relationships
      where relationship.isToMany && !relationship.isTransient {
        guard let inverse = model.inverse(of: relationship), inverse.isToMany,
          relationship.name > inverse.name
            || (relationship.name == inverse.name && entity.name >= relationship.destination),
          let source = numbers[entity.name], let destination = numbers[relationship.destination]
        else { continue }
        let name = "Z_\(source)" + relationship.name.uppercased()
        let sourceColumn = "Z_\(source)" + inverse.name.uppercased()
        var destinationColumn = "Z_\(destination)" + relationship.name.uppercased()
        if destinationColumn == sourceColumn { destinationColumn += "1" }
        var orderColumn: String?
        if relationship.isOrdered { orderColumn = "Z_FOK_" + destinationColumn }
        if inverse.isOrdered { orderColumn = orderColumn ?? "Z_FOK_" + sourceColumn }
        joins.append(
          JoinTable(
            name: name, entity: entity.name, relationship: relationship.name,
            sourceColumn: sourceColumn, destinationColumn: destinationColumn,
            orderColumn: orderColumn))
        indexes.append(
          "CREATE INDEX \(name)_\(destinationColumn)_INDEX ON \(name) (\(destinationColumn), \(sourceColumn))"
        )
      }
    }
    joinTables = joins.sorted { $0.name < $1.name }
    var triggers: [String] = []
    for entity in model.entities {
      for attribute in entity.attributes where attribute.isDerived && attribute.isStored {
        do {
          triggers += try Self.derivationTriggers(
            for: attribute, of: entity, model: model, tables: tables)
        } catch  where allowingUnsupportedDerivations {
          continue
        }
      }
    }
    self.indexes = indexes + (persistentHistory ? PersistentHistory.indexes : [])
    self.triggers = triggers
  }

  /// `Z` + the upper-cased entity name.
  package static func tableName(_ entity: String) -> String { "Z" + entity.uppercased() }

  /// The table holding `entity`'s rows.
  package func table(for entity: String) -> EntityTable? {
    tables.first { $0.rootEntity == model.root(of: entity)?.name }
  }

  /// Names that collide after upper-casing get a numeric suffix (`ZTIMESTAMP`, `ZTIMESTAMP1`).
  private static func resolvingCollisions(_ columns: [Column]) -> [Column] {
    var used = Set(["Z_PK", "Z_ENT", "Z_OPT"])
    return columns.map { column in
      var name = column.name
      var suffix = 1
      while used.contains(name) {
        name = column.name + String(suffix)
        suffix += 1
      }
      used.insert(name)
      return Column(name: name, type: column.type, role: column.role)
    }
  }

  // MARK: SQL

  /// Every statement that creates the schema, in order.
  package var statements: [String] {
    var sql: [String] = []
    for table in tables {
      let columns =
        ["Z_PK INTEGER PRIMARY KEY", "Z_ENT INTEGER", "Z_OPT INTEGER"]
        + table.columns.map { "\($0.name) \($0.type)" }
      sql.append("CREATE TABLE \(table.name) ( \(columns.joined(separator: ", ")) )")
    }
    for join in joinTables {
      var columns = ["\(join.sourceColumn) INTEGER", "\(join.destinationColumn) INTEGER"]
      if let order = join.orderColumn { columns.append("\(order) INTEGER") }
      columns.append("PRIMARY KEY (\(join.sourceColumn), \(join.destinationColumn))")
      sql.append("CREATE TABLE \(join.name) ( \(columns.joined(separator: ", ")) )")
    }
    if persistentHistory { sql += PersistentHistory.tables }
    sql += indexes
    sql += triggers
    sql.append(
      "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)"
    )
    sql.append(
      "CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)")
    sql.append("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)")
    return sql
  }

  // MARK: Derived attributes

  /// Core Data keeps a derived `to-many.@count` up to date with five triggers that also call
  /// functions it registers at run time (`NSCoreDataDATrigger…`); the SQL is Core Data's own,
  /// as found in real stores.
  static func derivationTriggers(
    for attribute: AttributeDescription, of entity: EntityDescription, model: ObjectModel,
    tables: [EntityTable]
  ) throws(StoreError) -> [String] {
    let expression = attribute.derivationExpression ?? ""
    guard expression.hasSuffix(".@count"),
      let relationship = model.relationships(of: entity.name).first(where: {
        $0.name == String(expression.dropLast(7))
      }),
      relationship.isToMany, let inverse = model.inverse(of: relationship), !inverse.isToMany,
      let source = tables.first(where: { $0.rootEntity == model.root(of: entity.name)?.name }),
      let target = tables.first(where: {
        $0.rootEntity == model.root(of: relationship.destination)?.name
      }),
      let valueColumn = source.columns.first(where: {
        $0.role == .attribute(entity: entity.name, name: attribute.name)
      })?.name,
      let inverseOwner = model.lineage(of: relationship.destination).first(where: {
        $0.relationship(named: inverse.name) != nil
      }),
      let foreignKey = target.columns.first(where: {
        $0.role == .foreignKey(entity: inverseOwner.name, name: inverse.name)
      })?.name
    else {
      throw StoreError(
        .unsupported,
        "derived attribute \(entity.name).\(attribute.name) = \"\(expression)\": only to-many.@count derivations can be created"
      )
    }
    let (s, t, fk, v, e, a) = (
      source.name, target.name, foreignKey, valueColumn, entity.name, attribute.name
    )
    let notify =
      "SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('\(s)', Z_ENT, Z_PK, '\(a)', \(v)) FROM \(s)"
    return [
      "CREATE TRIGGER Z_DA_\(t)_\(e)_\(a)_PARAMETER_INSERT AFTER INSERT ON \(t) FOR EACH ROW WHEN (NEW.\(fk) NOT NULL) BEGIN UPDATE \(s) SET \(v) = IFNULL(\(v), 0) + 1 WHERE Z_PK = NEW.\(fk); \(notify) WHERE Z_PK = NEW.\(fk); END",
      "CREATE TRIGGER Z_DA_\(t)_\(e)_\(a)_PARAMETER_UPDATE_INCREMENT AFTER UPDATE OF \(fk) ON \(t) FOR EACH ROW WHEN (NEW.\(fk) NOT NULL) BEGIN UPDATE \(s) SET \(v) = \(v) + 1 WHERE Z_PK = NEW.\(fk); \(notify) WHERE Z_PK = NEW.\(fk); END",
      "CREATE TRIGGER Z_DA_\(t)_\(e)_\(a)_PARAMETER_UPDATE_DECREMENT AFTER UPDATE OF \(fk) ON \(t) FOR EACH ROW WHEN (OLD.\(fk) NOT NULL) BEGIN UPDATE \(s) SET \(v) = \(v) - 1 WHERE Z_PK = OLD.\(fk); \(notify) WHERE Z_PK = OLD.\(fk); END",
      "CREATE TRIGGER Z_DA_\(t)_\(e)_\(a)_PARAMETER_DELETE AFTER DELETE ON \(t) FOR EACH ROW WHEN (OLD.\(fk) NOT NULL) BEGIN UPDATE \(s) SET \(v) = \(v) - 1 WHERE Z_PK = OLD.\(fk); \(notify) WHERE Z_PK = OLD.\(fk); END",
      "CREATE TRIGGER Z_DA_\(s)_\(e)_\(a)_SOURCE_INSERT AFTER INSERT ON \(s) FOR EACH ROW BEGIN UPDATE \(s) SET \(v) = (SELECT IFNULL(COUNT(\(fk)), 0) FROM \(t) WHERE \(fk) = NEW.Z_PK) WHERE Z_PK = NEW.Z_PK; SELECT NSCoreDataDATriggerInsertUpdatedAffectedObjectValue('\(s)', Z_ENT, Z_PK, '\(a)', \(v)) FROM \(s) WHERE Z_PK = NEW.Z_PK; END",
    ]
  }
}

/// The tables Core Data adds for persistent history tracking (system entities 16001–16003),
/// as found in real stores.
enum PersistentHistory {
  static let entities: [(number: Int, name: String)] = [
    (16001, "CHANGE"), (16002, "TRANSACTION"), (16003, "TRANSACTIONSTRING"),
  ]

  static let tables = [
    "CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB )",
    "CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER, ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR, ZQUERYGEN BLOB )",
    "CREATE TABLE ATRANSACTIONSTRING ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
  ]

  static let indexes = [
    "CREATE INDEX ACHANGE_ZTRANSACTIONID_INDEX ON ACHANGE (ZTRANSACTIONID)",
    "CREATE INDEX ATRANSACTION_ZAUTHORTS_INDEX ON ATRANSACTION (ZAUTHORTS)",
    "CREATE INDEX ATRANSACTION_ZBUNDLEIDTS_INDEX ON ATRANSACTION (ZBUNDLEIDTS)",
    "CREATE INDEX ATRANSACTION_ZCONTEXTNAMETS_INDEX ON ATRANSACTION (ZCONTEXTNAMETS)",
    "CREATE INDEX ATRANSACTION_ZPROCESSIDTS_INDEX ON ATRANSACTION (ZPROCESSIDTS)",
    "CREATE INDEX Z_TRANSACTION_TransactionAuthorIndex ON ATRANSACTION (ZAUTHOR COLLATE BINARY ASC)",
    "CREATE INDEX Z_TRANSACTION_TransactionTimestampIndex ON ATRANSACTION (ZTIMESTAMP COLLATE BINARY ASC)",
    "CREATE UNIQUE INDEX Z_TRANSACTIONSTRING_UNIQUE_NAME ON ATRANSACTIONSTRING (ZNAME COLLATE BINARY ASC)",
  ]
}
