import ObjectModel

/// A store's schema as an archive keeps it (`store/schema.plist`), read as data and checked
/// against the schema Core Data gives the archive's model: the only schema a restore ever
/// creates.
///
/// Every entry is read as a ``SchemaStatement`` (never run). An entry equal to one the model
/// generates is created from graphvault's own text; the differences real stores have are
/// accepted as parsed values that graphvault writes back itself:
/// - a table an application added, or persistent-history tables of another Core Data release
///   (name, columns with declared types and simple constraints);
/// - a table of the model with the model's columns in another order, of another declared type,
///   or with more plain columns;
/// - an index on existing columns of an existing table (a unique one only on a table outside
///   the model: on the model's tables, uniqueness is the model's).
///
/// Anything else is refused, naming the entry: a trigger the model does not generate (triggers
/// run code on every insert), a view, an entry outside the accepted grammar, a table of the
/// model lacking one of its columns, an index on a column that does not exist. With
/// `leavingOutUnsafe`, such entries are left out instead (a table with its rows), and
/// ``dropped`` says which.
package struct CheckedSchema: Sendable {
  /// The entries to create, in the archive's order, with graphvault's SQL.
  package let objects: [CoreDataStore.SchemaObject]
  /// The same entries as values.
  package let statements: [SchemaStatement]
  /// The tables' columns and the indexes' and triggers' SQL, as SQLite would report them.
  package let snapshot: SchemaSnapshot
  /// What was left out (with `leavingOutUnsafe`), each entry named with the reason.
  package let dropped: [String]
  /// The tables left out, whose rows go with them.
  package let droppedTables: Set<String>
  /// Whether the store tracks persistent history (`ACHANGE` and its companions are there).
  package let hasPersistentHistory: Bool

  private let tablesByName: [String: SchemaStatement.Table]

  /// Core Data's own tables, which every store has (`Z_MODELCACHE` only since about 2014).
  package static let requiredBookkeeping = ["Z_PRIMARYKEY", "Z_METADATA"]

  /// Checks `objects` (a stored schema) against the schema `model` gets.
  /// - Parameter leavingOutUnsafe: leave refused entries out rather than throwing.
  /// - Throws: ``StoreError`` (``StoreError/Kind/notACoreDataStore``) naming the first entry
  ///   refused, or a table the model needs that is missing.
  package init(
    objects: [CoreDataStore.SchemaObject], model: ObjectModel, leavingOutUnsafe: Bool = false
  ) throws(StoreError) {
    func refuse(_ detail: String) -> StoreError {
      StoreError(.notACoreDataStore, "the archived schema: \(detail)", path: "")
    }
    let history = objects.contains {
      $0.type == "table" && StoreSchema.persistentHistoryTables.contains($0.name)
    }
    let generated = try StoreSchema(
      model: model, persistentHistory: history, allowingUnsupportedDerivations: true)
    var expected: [String: (statement: SchemaStatement, sql: String)] = [:]
    for sql in generated.statements {
      guard let statement = try? SchemaStatement(parsing: sql) else {
        throw StoreError(
          .unsupported, "graphvault cannot read its own schema text: \(sql)", path: "")
      }
      expected[statement.name.uppercased()] = (statement, sql)
    }
    let modelTables = Set(
      (generated.tables.map(\.name) + generated.joinTables.map(\.name)).map { $0.uppercased() })

    var accepted: [(SchemaStatement, String)] = []
    var tables: [String: SchemaStatement.Table] = [:]
    var dropped: [String] = []
    var droppedTables = Set<String>()
    var names = Set<String>()
    for object in objects {
      let label = "\(object.type) \(object.name)"
      do throws(SchemaStatement.Problem) {
        guard names.insert(object.name.uppercased()).inserted else {
          throw SchemaStatement.Problem("the name is used twice")
        }
        guard !object.name.lowercased().hasPrefix("sqlite_") else {
          throw SchemaStatement.Problem("names beginning with sqlite_ are SQLite's own")
        }
        let statement = try SchemaStatement(parsing: object.sql)
        guard statement.type == object.type,
          statement.name.caseInsensitiveCompare(object.name) == .orderedSame,
          statement.table.caseInsensitiveCompare(object.table) == .orderedSame
        else {
          throw SchemaStatement.Problem(
            "its SQL creates \(statement.type) \(statement.name) on \(statement.table)")
        }
        let known = expected[statement.name.uppercased()]
        switch statement {
        case .table(let table):
          if let known, known.statement == statement {
            accepted.append((statement, known.sql))
          } else if let known, case .table(let model) = known.statement {
            let isModelTable = modelTables.contains(table.name.uppercased())
            try Self.check(table, against: model, strictly: isModelTable)
            accepted.append((statement, statement.sql))
          } else {
            accepted.append((statement, statement.sql))
          }
          tables[table.name.uppercased()] = table
        case .index(let index):
          guard let table = tables[index.table.uppercased()] else {
            throw SchemaStatement.Problem(
              "it indexes \(index.table), which is not a table before it")
          }
          for column in index.columns where table.column(named: column.name) == nil {
            throw SchemaStatement.Problem("it indexes \(column.name), which \(table.name) lacks")
          }
          if index.unique, modelTables.contains(index.table.uppercased()),
            known?.statement != statement
          {
            throw SchemaStatement.Problem(
              "a unique index on a table of the model must be one of the model's uniqueness constraints"
            )
          }
          accepted.append((statement, known?.statement == statement ? known!.sql : statement.sql))
        case .trigger(_, let table, let text):
          guard tables[table.uppercased()] != nil else {
            throw SchemaStatement.Problem("its table \(table) is not a table before it")
          }
          guard let known, case .trigger(_, _, let made) = known.statement, made == text else {
            throw SchemaStatement.Problem(
              "it is not a trigger Core Data makes for this model (a trigger runs on every insert)")
          }
          accepted.append((statement, known.sql))
        }
      } catch {
        guard leavingOutUnsafe else { throw refuse("\(label): \(error.detail)") }
        dropped.append("\(label): \(error.detail)")
        if object.type == "table" { droppedTables.insert(object.name) }
      }
    }
    for name in modelTables.sorted() + Self.requiredBookkeeping where tables[name] == nil {
      throw refuse("table \(name), which the model needs, is missing")
    }
    self.statements = accepted.map(\.0)
    self.objects = accepted.map { statement, sql in
      CoreDataStore.SchemaObject(
        type: statement.type, name: statement.name, table: statement.table, sql: sql)
    }
    self.dropped = dropped
    self.droppedTables = droppedTables
    self.hasPersistentHistory = history
    self.tablesByName = tables
    self.snapshot = SchemaSnapshot(statements: accepted.map(\.0))
  }

  /// The table named `name` (compared without case).
  package func table(named name: String) -> SchemaStatement.Table? {
    tablesByName[name.uppercased()]
  }

  /// A table the model (or Core Data) defines must have every column it defines, `Z_PK` as
  /// the row's key, and, for a table of the model, nothing but plain columns beside them.
  private static func check(
    _ table: SchemaStatement.Table, against model: SchemaStatement.Table, strictly: Bool
  ) throws(SchemaStatement.Problem) {
    for column in model.columns {
      guard let found = table.column(named: column.name) else {
        throw SchemaStatement.Problem("it lacks column \(column.name), which the model needs")
      }
      if column.primaryKey != nil && found.primaryKey == nil {
        throw SchemaStatement.Problem("its column \(column.name) is not the primary key")
      }
    }
    guard table.primaryKey == model.primaryKey else {
      throw SchemaStatement.Problem("its primary key differs from Core Data's")
    }
    guard strictly else { return }
    for column in table.columns where model.column(named: column.name)?.primaryKey == nil {
      guard column.isPlain else {
        throw SchemaStatement.Problem(
          "its column \(column.name) has constraints, which Core Data's tables do not")
      }
    }
    guard table.unique.isEmpty else {
      throw SchemaStatement.Problem("it has UNIQUE keys, which Core Data's tables do not")
    }
  }
}
