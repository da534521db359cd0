import ObjectModel
import SQLite

/// How a save writes an entity's rows: the columns its lineage maps, each with what fills it,
/// and the `INSERT` and `UPDATE` over them, built and prepared once per entity rather than
/// per object (a row then costs no lookup by name, not even of its statement's text).
final class RowStatements {
  /// What fills a column.
  enum Source {
    /// The value in an attribute's slot (``AttributeSlots``).
    case attribute(slot: Int)
    /// A to-one relationship's primary key.
    case toOne(String)
    /// The entity number of a to-one relationship's object.
    case toOneEntity(String)
  }

  /// The columns, in the order both statements bind them.
  let columns: [(name: String, source: Source)]
  /// `INSERT INTO table (Z_PK, Z_ENT, Z_OPT, columns…) VALUES (?, …)`.
  let insert: String
  /// `UPDATE table SET columns… = ?, Z_OPT = ? WHERE Z_PK = ? AND Z_OPT = ?`.
  let update: String
  /// The entity's number (`Z_ENT`).
  let entityNumber: Int64
  /// ``insert`` and ``update`` prepared, on first use.
  var preparedInsert: Statement?
  var preparedUpdate: Statement?

  /// The statements of `entity`'s rows in `table`: its lineage's stored attributes and to-one
  /// relationships, derived attributes left to the store.
  init(
    entity: String, table: StoreLayout.Table, model: ObjectModel, slots: [String: Int],
    entityNumber: Int
  ) {
    var columns: [(name: String, source: Source)] = []
    for owner in model.lineage(of: entity).map(\.name) {
      for column in table.attributes[owner] ?? [] where !column.attribute.isDerived {
        guard let slot = slots[column.attribute.name] else { continue }
        columns.append((column.column, .attribute(slot: slot)))
      }
      for column in table.toOne[owner] ?? [] {
        columns.append((column.column, .toOne(column.relationship.name)))
        if let entityColumn = column.entityColumn {
          columns.append((entityColumn, .toOneEntity(column.relationship.name)))
        }
      }
    }
    self.columns = columns
    self.table = table.name
    self.entityNumber = Int64(entityNumber)
    insert = Self.insert(into: table.name, columns.map(\.name))
    update = Self.update(table.name, columns.map(\.name))
  }

  /// The table's name.
  let table: String

  /// The statement of a row that also sets `extraColumns` (order keys), bound after the
  /// entity's own columns in the order given.
  func statement(adding extraColumns: [String], insert: Bool) -> String {
    let names = columns.map(\.name) + extraColumns
    return insert ? Self.insert(into: table, names) : Self.update(table, names)
  }

  private static func insert(into table: String, _ columns: [String]) -> String {
    let names = ["Z_PK", "Z_ENT", "Z_OPT"] + columns
    return
      "INSERT INTO \(table) (\(names.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
  }

  private static func update(_ table: String, _ columns: [String]) -> String {
    let assignments = (columns.map { "\($0) = ?" } + ["Z_OPT = ?"]).joined(separator: ", ")
    return "UPDATE \(table) SET \(assignments) WHERE Z_PK = ? AND Z_OPT = ?"
  }
}
