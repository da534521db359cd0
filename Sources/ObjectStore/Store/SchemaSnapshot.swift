import SQLite

/// A database's schema as SQLite reports it: each table's columns (name and declared type) and
/// each index's and trigger's SQL, whitespace collapsed. Used to map a model onto a real store
/// and to compare a store with the schema a model would get.
package struct SchemaSnapshot: Sendable, Equatable {
  /// Columns of each table, in table order: name and declared type (upper-cased).
  package var tables: [String: [(name: String, type: String)]]
  /// Normalised SQL of each index and trigger, by name.
  package var indexesAndTriggers: [String: String]

  /// Compares tables by their column sets (order ignored) and indexes and triggers by SQL.
  package static func == (lhs: SchemaSnapshot, rhs: SchemaSnapshot) -> Bool {
    lhs.tableSignature == rhs.tableSignature && lhs.indexesAndTriggers == rhs.indexesAndTriggers
  }

  private var tableSignature: [String: Set<String>] {
    tables.mapValues { Set($0.map { "\($0.name) \($0.type)" }) }
  }

  /// Reads the schema of an open database.
  package init(_ db: Database) throws(SQLiteError) {
    var tables: [String: [(name: String, type: String)]] = [:]
    var others: [String: String] = [:]
    let objects = try db.prepare(
      "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
    ).allRows()
    for row in objects {
      guard let type = row[0].textValue, let name = row[1].textValue else { continue }
      if type == "table" {
        let info = try db.prepare("SELECT name, type FROM pragma_table_info(?)")
        try info.bind(.text(name), at: 1)
        tables[name] = try info.allRows().map {
          ($0[0].textValue ?? "", ($0[1].textValue ?? "").uppercased())
        }
      } else if let sql = row[2].textValue {
        others[name] = SchemaSnapshot.normalized(sql)
      }
    }
    self.tables = tables
    self.indexesAndTriggers = others
  }

  /// The schema `schema` creates, read back from an in-memory database.
  package init(of schema: StoreSchema) throws(SQLiteError) {
    let db = try Database(path: ":memory:", mode: .readWriteCreate)
    for statement in schema.statements { try db.execute(statement) }
    try self.init(db)
  }

  /// The schema `statements` create, as SQLite would report it, without running any SQL.
  package init(statements: [SchemaStatement]) {
    var tables: [String: [(name: String, type: String)]] = [:]
    var others: [String: String] = [:]
    for statement in statements {
      switch statement {
      case .table(let table):
        tables[table.name] = table.columns.map { ($0.name, $0.type.uppercased()) }
      case .index, .trigger:
        others[statement.name] = SchemaSnapshot.normalized(statement.sql)
      }
    }
    self.tables = tables
    self.indexesAndTriggers = others
  }

  /// SQL with runs of whitespace collapsed to one space.
  static func normalized(_ sql: String) -> String {
    sql.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" })
      .joined(separator: " ")
  }

  /// The same snapshot without the tables, indexes and triggers `keep` rejects.
  func filtered(_ keep: (String) -> Bool) -> SchemaSnapshot {
    var copy = self
    copy.tables = tables.filter { keep($0.key) }
    copy.indexesAndTriggers = indexesAndTriggers.filter { keep($0.key) }
    return copy
  }
}
