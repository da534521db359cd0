import Crypto
import Foundation
import ObjectModel
import SQLite

/// Cuts a small, whole subset out of a store: the objects of one entity a predicate selects
/// (sorted, limited), every object they reach through to-one relationships, recursively, and
/// the objects along the to-many key paths asked for; written as a store of its own in the
/// same layout, where every reference resolves.
///
/// An app names what to cut with a ``Selection`` and cuts it with `FixtureService.cut` (the
/// `GraphVault` library, what `graphvault fixture` runs); the cutting itself is the package's
/// own:
///
/// ```swift
/// var options = FixtureService.Options(
///   selection: .init(entity: "Book", predicate: "price > 10", limit: 20, includes: ["pages"]),
///   output: "Fixtures/books.gvault")
/// options.scrubs = [ScrubRule(entity: "Writer", attribute: "alias", kind: .hash)]
/// _ = try FixtureService.cut(source: "Library.sqlite", options: options)
/// ```
public struct FixtureCutter {
  /// What to select.
  public struct Selection: Sendable {
    /// The entity whose objects are selected (sub-entities' included).
    public var entity: String
    /// A predicate in `NSPredicate` format, or nil for all.
    public var predicate: String?
    /// The order before the limit (then by primary key).
    public var sort: [SortDescriptor]
    /// The most objects selected (all when nil).
    public var limit: Int?
    /// To-many (or to-one) key paths to follow from the selected objects: `pages`,
    /// `author.books.pages`.
    public var includes: [String]

    /// A selection.
    public init(
      entity: String, predicate: String? = nil, sort: [SortDescriptor] = [], limit: Int? = nil,
      includes: [String] = []
    ) {
      self.entity = entity
      self.predicate = predicate
      self.sort = sort
      self.limit = limit
      self.includes = includes
    }
  }

  /// The objects of a subset: primary keys by table.
  package struct Subset: Sendable, Equatable {
    /// Primary keys by table name.
    public var keys: [String: Set<Int64>] = [:]
    /// Objects by entity.
    public var counts: [String: Int] = [:]
    /// The objects the selection itself chose, in order.
    public var selected: [Int64] = []
  }

  let store: CoreDataStore
  let model: ObjectModel
  let layout: StoreLayout
  /// The closure's queries, asked key after key, prepared once.
  let statements: StatementCache

  /// A cutter over `store`, which `model` describes.
  package init(store: CoreDataStore, model: ObjectModel) throws(StoreError) {
    self.store = store
    self.model = model
    layout = try store.layout(for: model)
    statements = StatementCache(database: store.database)
    do {
      try PredicateSQL.registerFunctions(on: store.database)
    } catch {
      throw StoreError(.database, "cannot register predicate functions", path: store.path)
    }
  }

  private func fail(_ kind: StoreError.Kind, _ detail: String) -> StoreError {
    StoreError(kind, detail, path: store.path)
  }

  private func run<R>(_ what: String, _ body: () throws -> R) throws(StoreError) -> R {
    do { return try body() } catch let error as StoreError { throw error } catch {
      throw StoreError(.database, what, path: store.path, underlying: error as? SQLiteError)
    }
  }

  // MARK: Selecting

  /// A selection checked against a model and written as the query choosing its objects.
  struct Query {
    let entity: EntityDescription
    let table: StoreLayout.Table
    let includePaths: [[RelationshipDescription]]
    let sql: String
    let bindings: [SQLiteValue]
  }

  /// Checks `selection` against `model` alone, before any store or archive is read: the
  /// entity, the predicate, the sort keys and the include paths.
  /// - Throws: ``StoreError``: ``StoreError/Kind/invalidPredicate`` for a bad predicate,
  ///   ``StoreError/Kind/invalidValue`` for an unknown entity, sort key or include path.
  package static func check(_ selection: Selection, model: ObjectModel) throws(StoreError) {
    let layout: StoreLayout
    do {
      layout = try StoreLayout(
        model: model,
        snapshot: SchemaSnapshot(
          of: StoreSchema(
            model: model, persistentHistory: false, allowingUnsupportedDerivations: true)),
        entityNumbers: model.entityNumbers)
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError(.modelMismatch, "cannot lay out the model \(model.name): \(error)")
    }
    _ = try query(selection, model: model, layout: layout, path: nil)
  }

  /// The query choosing `selection`'s objects in a store laid out as `layout`.
  static func query(
    _ selection: Selection, model: ObjectModel, layout: StoreLayout, path: String?
  ) throws(StoreError) -> Query {
    func fail(_ detail: String) -> StoreError { StoreError(.invalidValue, detail, path: path) }
    guard let entity = model.entity(named: selection.entity),
      let table = layout.table(for: entity.name)
    else {
      throw fail(
        "the model has no entity \(selection.entity) (entities: \(model.entities.map(\.name).sorted().joined(separator: ", ")))"
      )
    }
    let includePaths = try selection.includes.map { text throws(StoreError) in
      try includePath(text, from: entity.name, model: model, path: path)
    }
    var sql =
      "SELECT Z_PK FROM \(table.name) WHERE Z_ENT IN (\(layout.entityNumberList(entity.name)))"
    var bindings: [SQLiteValue] = []
    if let text = selection.predicate {
      let condition = try PredicateSQL.condition(
        text, entity: entity.name, layout: layout, alias: table.name, bindings: &bindings,
        path: path)
      sql += " AND (\(condition))"
    }
    var order: [String] = []
    for descriptor in selection.sort {
      guard let column = layout.column(ofAttribute: descriptor.key, in: entity.name) else {
        throw fail("\(entity.name) has no attribute \(descriptor.key) to sort by")
      }
      order.append("\(table.name).\(column) \(descriptor.ascending ? "ASC" : "DESC")")
    }
    order.append("\(table.name).Z_PK")
    sql += " ORDER BY " + order.joined(separator: ", ")
    if let limit = selection.limit { sql += " LIMIT \(max(0, limit))" }
    return Query(
      entity: entity, table: table, includePaths: includePaths, sql: sql, bindings: bindings)
  }

  /// The selected objects and their closure.
  /// - Throws: ``StoreError``: ``StoreError/Kind/invalidPredicate`` for a bad predicate,
  ///   ``StoreError/Kind/invalidValue`` for an unknown entity, sort key or include path.
  package func select(_ selection: Selection) throws(StoreError) -> Subset {
    let query = try Self.query(selection, model: model, layout: layout, path: store.path)
    let (entity, table) = (query.entity, query.table)
    let selected: [Int64] = try run("cannot select \(entity.name) objects") {
      let statement = try store.database.prepare(query.sql)
      try statement.bind(query.bindings)
      return try statement.allRows().compactMap { $0[0].integerValue }
    }
    var closure = Closure(cutter: self)
    for key in selected { try closure.add(table: table.name, key: key) }
    for path in query.includePaths {
      var frontier: [(entity: String, table: String, key: Int64)] = selected.map {
        (entity.name, table.name, $0)
      }
      for relationship in path {
        var next: [(String, String, Int64)] = []
        for object in frontier {
          for key in try related(object.table, object.key, relationship, from: object.entity) {
            let destination = layout.table(for: relationship.destination)!.name
            try closure.add(table: destination, key: key)
            next.append((relationship.destination, destination, key))
          }
        }
        frontier = next
      }
    }
    try closure.finish()
    var subset = closure.subset
    subset.selected = selected
    return subset
  }

  private static func includePath(
    _ text: String, from entity: String, model: ObjectModel, path: String?
  ) throws(StoreError) -> [RelationshipDescription] {
    var current = entity
    var relationships: [RelationshipDescription] = []
    for key in text.split(separator: ".", omittingEmptySubsequences: false).map(String.init) {
      guard let relationship = model.relationships(of: current).first(where: { $0.name == key })
      else {
        throw StoreError(
          .invalidValue,
          "--include \(text): \(current) has no relationship \(key) (its relationships: \(model.relationships(of: current).map(\.name).sorted().joined(separator: ", ")))",
          path: path)
      }
      relationships.append(relationship)
      current = relationship.destination
    }
    return relationships
  }

  /// The primary keys `relationship` of the object reaches.
  private func related(
    _ table: String, _ key: Int64, _ relationship: RelationshipDescription, from entity: String
  ) throws(StoreError) -> [Int64] {
    if !relationship.isToMany {
      guard let column = layout.foreignKey(ofToOne: relationship.name, in: entity) else {
        return []
      }
      return try run("cannot read \(table)") {
        let statement = try statements.statement("SELECT \(column) FROM \(table) WHERE Z_PK = ?")
        try statement.bind([.integer(key)])
        return try statement.allRows().compactMap { $0[0].integerValue }
      }
    }
    let sql = PredicateSQL(layout: layout)
    let from: String
    do {
      from = try sql.membership(
        ResolvedPredicate.Hop(entity: entity, relationship: relationship), outer: "o", inner: "m")
    } catch {
      throw fail(.unsupported, error.message)
    }
    return try run("cannot read \(entity).\(relationship.name)") {
      // `from` reads "FROM … WHERE … = o.Z_PK": the outer object is the one bound here.
      let statement = try statements.statement(
        "SELECT m.Z_PK FROM (SELECT ? AS Z_PK) o, \(from.dropFirst("FROM ".count)) ORDER BY m.Z_PK")
      try statement.bind([.integer(key)])
      return try statement.allRows().compactMap { $0[0].integerValue }
    }
  }

  // MARK: Writing

  /// Writes `subset` as a store at `path` (which must not exist): the source's schema, its
  /// metadata (with the model's version hashes when it has none) and model cache, the subset's
  /// rows in primary-key order, join-table rows whose
  /// two ends are both in it, references to objects outside it emptied, `@count` derivations
  /// recomputed, `Z_MAX` at the subset's highest key; other tables (persistent history) empty.
  package func write(
    _ subset: Subset, to path: String, scrubs: [ScrubRule] = [], scrubKey: [UInt8] = []
  ) throws(StoreError) {
    try check(scrubs)
    let secret = SymmetricKey(
      data: scrubKey.isEmpty
        ? Array(SHA256.hash(data: Array("graphvault scrub \(store.uuid)".utf8))) : scrubKey)
    let schema = try store.schemaObjects()
    let journalMode = try store.journalMode()
    let target: Database
    do {
      target = try Database(path: path, mode: .readWriteCreate)
    } catch {
      throw StoreError(.database, "cannot create the fixture store", path: path, underlying: error)
    }
    try run("cannot write the fixture store \(path)") {
      try target.harden()
      try target.execute("PRAGMA page_size = 4096")
      try target.execute("PRAGMA auto_vacuum = 2")
      try target.transaction(.immediate) { db in
        for object in schema where object.type == "table" { try db.execute(object.sql) }
        for table in ["Z_METADATA", "Z_MODELCACHE", "Z_PRIMARYKEY"] {
          try copyRows(table, filter: nil, into: db)
        }
        // A source without version hashes (written by another tool) gets the model's.
        let metadata = try db.prepare("SELECT Z_PLIST FROM Z_METADATA").scalar().blobValue
        if let metadata, let completed = StoreMetadata.completing(metadata, for: model) {
          let update = try db.prepare("UPDATE Z_METADATA SET Z_PLIST = ?")
          try update.bind([.blob(completed)])
          try update.run()
        }
        for (table, keys) in subset.keys.sorted(by: { $0.key < $1.key }) {
          let insert = try insertStatement(table, db)
          let read = try store.database.prepare("SELECT * FROM \(table) WHERE Z_PK = ?")
          for key in keys.sorted() {
            try read.bind([.integer(key)])
            for row in try read.allRows() {
              try insert.bind(row)
              try insert.run()
            }
          }
        }
        try copyJoins(subset, into: db)
        try emptyDanglingReferences(db)
        try recomputeCounts(db)
        for rule in scrubs { try scrub(rule, secret: secret, db) }
        for root in model.rootEntities {
          guard let table = layout.table(for: root.name),
            let number = layout.entityNumbers[root.name]
          else { continue }
          try db.execute(
            "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT ifnull(max(Z_PK), 0) FROM \(table.name)) WHERE Z_ENT = \(number)"
          )
        }
        try checkUniqueness(after: scrubs, db)
        for object in schema where object.type == "index" || object.type == "trigger" {
          try db.execute(object.sql)
        }
      }
      if journalMode.lowercased() == "wal" { try target.execute("PRAGMA journal_mode = WAL") }
    }
  }

  /// Checks scrub rules against the model: entity and stored attribute exist, `null` only for
  /// an optional one, `value:` text of the attribute's type, no stand-in for transformables.
  /// - Throws: ``StoreError`` of kind ``StoreError/Kind/invalidValue`` naming the rule.
  package func check(_ scrubs: [ScrubRule]) throws(StoreError) {
    for rule in scrubs {
      let name = "--scrub \(rule.entity).\(rule.attribute)"
      guard model.entity(named: rule.entity) != nil else {
        throw fail(.invalidValue, "\(name): the model has no entity \(rule.entity)")
      }
      guard
        let attribute = model.attributes(of: rule.entity).first(where: { $0.name == rule.attribute }
        )
      else {
        throw fail(
          .invalidValue,
          "\(name): \(rule.entity) has no attribute \(rule.attribute) (its attributes: \(model.attributes(of: rule.entity).map(\.name).sorted().joined(separator: ", ")))"
        )
      }
      guard !attribute.isTransient, !attribute.isDerived else {
        throw fail(.invalidValue, "\(name): the attribute is not stored")
      }
      switch rule.kind {
      case .null where !attribute.isOptional:
        throw fail(.invalidValue, "\(name)=null: the attribute is required")
      case .value(let text)
      where AttributeValue(defaultValueString: text, type: attribute.type) == nil:
        throw fail(
          .invalidValue, "\(name)=value:\(text): not a value of type \(attribute.type.rawValue)")
      case .fake, .hash:
        if attribute.type == .transformable || attribute.type == .undefined
          || attribute.type == .objectID
        {
          throw fail(
            .invalidValue,
            "\(name): no stand-in can be made for \(attribute.type.rawValue) values; use null or value:"
          )
        }
      default: break
      }
    }
  }

  /// Replaces the values of one attribute, object by object in key order.
  private func scrub(_ rule: ScrubRule, secret: SymmetricKey, _ db: Database) throws {
    guard
      let attribute = model.attributes(of: rule.entity).first(where: { $0.name == rule.attribute }),
      let table = layout.table(for: rule.entity),
      let column = layout.column(ofAttribute: rule.attribute, in: rule.entity)
    else { return }
    let rows = try db.prepare(
      "SELECT Z_PK, \(column) FROM \(table.name) WHERE Z_ENT IN (\(layout.entityNumberList(rule.entity))) AND \(column) IS NOT NULL ORDER BY Z_PK"
    ).allRows()
    let update = try db.prepare("UPDATE \(table.name) SET \(column) = ? WHERE Z_PK = ?")
    for row in rows {
      guard let key = row[0].integerValue,
        let value = SQLValues.attribute(row[1], type: attribute.type)
      else { continue }
      let replacement = rule.replacement(for: value, of: attribute, key: key, secret: secret)
      try update.bind([replacement.map { SQLValues.sqlite($0) } ?? .null, .integer(key)])
      try update.run()
    }
  }

  /// Fails when scrubbing made two objects share what a uniqueness constraint keeps apart.
  private func checkUniqueness(after scrubs: [ScrubRule], _ db: Database) throws {
    for rule in scrubs {
      for entity in model.lineage(of: rule.entity) + model.hierarchy(from: rule.entity) {
        guard let table = layout.table(for: entity.name) else { continue }
        for constraint in entity.uniquenessConstraints where constraint.contains(rule.attribute) {
          let columns = constraint.compactMap { layout.column(ofAttribute: $0, in: entity.name) }
          guard columns.count == constraint.count else { continue }
          let list = columns.joined(separator: ", ")
          let shared =
            try db.prepare(
              "SELECT count(*) FROM (SELECT 1 FROM \(table.name) WHERE Z_ENT IN (\(layout.entityNumberList(entity.name))) GROUP BY \(list) HAVING count(*) > 1)"
            ).scalar().integerValue ?? 0
          if shared > 0 {
            throw StoreError(
              .validation,
              "--scrub \(rule.entity).\(rule.attribute): after scrubbing, objects of \(entity.name) share values of (\(constraint.joined(separator: ", "))), which must be unique; use fake or hash",
              path: store.path)
          }
        }
      }
    }
  }

  private func insertStatement(_ table: String, _ db: Database) throws -> Statement {
    let count =
      try store.database.prepare("SELECT count(*) FROM pragma_table_info('\(table)')")
      .scalar().integerValue ?? 0
    return try db.prepare(
      "INSERT INTO \(table) VALUES (\(Array(repeating: "?", count: Int(count)).joined(separator: ", ")))"
    )
  }

  private func copyRows(_ table: String, filter: String?, into db: Database) throws {
    let exists =
      try store.database.prepare(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '\(table)'"
      ).scalar().integerValue == 1
    guard exists else { return }
    let insert = try insertStatement(table, db)
    let rows = try store.database.prepare(
      "SELECT * FROM \(table)\(filter.map { " WHERE \($0)" } ?? "")"
    ).allRows()
    for row in rows {
      try insert.bind(row)
      try insert.run()
    }
  }

  /// Join-table rows whose two ends are in the subset, read from the source side's keys.
  private func copyJoins(_ subset: Subset, into db: Database) throws {
    for join in layout.joins {
      guard let sourceTable = layout.table(for: join.entity)?.name,
        let destinationTable = layout.table(for: join.relationship.destination)?.name
      else { continue }
      let destinations = subset.keys[destinationTable] ?? []
      let columns = try store.database.prepare("PRAGMA table_info(\(join.name))").allRows()
        .compactMap { $0[1].textValue }
      guard let destinationIndex = columns.firstIndex(of: join.destinationColumn) else { continue }
      let insert = try insertStatement(join.name, db)
      let read = try store.database.prepare(
        "SELECT * FROM \(join.name) WHERE \(join.sourceColumn) = ? ORDER BY \(join.destinationColumn)"
      )
      for key in (subset.keys[sourceTable] ?? []).sorted() {
        try read.bind([.integer(key)])
        for row in try read.allRows() {
          guard let destination = row[destinationIndex].integerValue,
            destinations.contains(destination)
          else { continue }
          try insert.bind(row)
          try insert.run()
        }
      }
    }
  }

  /// Empties every foreign key (and its entity column) that points outside the subset.
  private func emptyDanglingReferences(_ db: Database) throws {
    for table in layout.tables {
      for (_, columns) in table.toOne.sorted(by: { $0.key < $1.key }) {
        for column in columns {
          guard let destination = layout.table(for: column.relationship.destination)?.name else {
            continue
          }
          var set = "\(column.column) = NULL"
          if let entityColumn = column.entityColumn { set += ", \(entityColumn) = NULL" }
          try db.execute(
            "UPDATE \(table.name) SET \(set) WHERE \(column.column) IS NOT NULL AND \(column.column) NOT IN (SELECT Z_PK FROM \(destination))"
          )
        }
      }
    }
  }

  /// Recomputes derived `relationship.@count` attributes over what the subset holds.
  private func recomputeCounts(_ db: Database) throws {
    for entity in model.entities {
      for attribute in entity.attributes where attribute.isDerived && !attribute.isTransient {
        guard let expression = attribute.derivationExpression, expression.hasSuffix(".@count"),
          let relationship = model.relationships(of: entity.name).first(where: {
            $0.name == String(expression.dropLast(".@count".count))
          }), relationship.isToMany,
          let table = layout.table(for: entity.name),
          let column = layout.column(ofAttribute: attribute.name, in: entity.name)
        else { continue }
        let sql = PredicateSQL(layout: layout)
        let from = try sql.membership(
          ResolvedPredicate.Hop(entity: entity.name, relationship: relationship),
          outer: table.name, inner: "m")
        try db.execute(
          "UPDATE \(table.name) SET \(column) = (SELECT count(*) \(from)) WHERE Z_ENT IN (\(layout.entityNumberList(entity.name)))"
        )
      }
    }
  }

  /// The to-one closure, object by object.
  private struct Closure {
    let cutter: FixtureCutter
    var subset = Subset()
    var queue: [(String, Int64)] = []

    init(cutter: FixtureCutter) { self.cutter = cutter }

    mutating func add(table: String, key: Int64) throws(StoreError) {
      guard subset.keys[table, default: []].insert(key).inserted else { return }
      queue.append((table, key))
      try finish()
    }

    mutating func finish() throws(StoreError) {
      while let (table, key) = queue.popLast() {
        let number: Int64 = try cutter.run("cannot read \(table)") {
          let statement = try cutter.statements.statement(
            "SELECT Z_ENT FROM \(table) WHERE Z_PK = ?")
          try statement.bind([.integer(key)])
          return try statement.scalar().integerValue ?? 0
        }
        guard let entity = cutter.layout.entityNumbers.first(where: { $0.value == number })?.key
        else { continue }
        subset.counts[entity, default: 0] += 1
        for relationship in cutter.model.relationships(of: entity)
        where !relationship.isToMany && !relationship.isTransient {
          for target in try cutter.related(table, key, relationship, from: entity) {
            guard let destination = cutter.layout.table(for: relationship.destination)?.name
            else { continue }
            if subset.keys[destination, default: []].insert(target).inserted {
              queue.append((destination, target))
            }
          }
        }
      }
    }
  }
}
