import SQLite

/// How a reader of an entity table hashes each row for the change ledger as it reads it
/// (``ObjectRow/hash``): the seed, and the table's columns in the order `SELECT *` gives them,
/// which is what ``CoreDataStore/forEachElement(of:seed:keys:_:)`` hashes a row of an
/// `objects/ROOT` set by.
package struct RowHashing: Sendable {
  /// The ledger's seed.
  package let seed: UInt64
  /// The table's columns, in table order.
  package let columns: [String]
}

extension CoreDataStore {
  /// How rows of `table` are hashed under `seed` as they are read (``RowHashing``).
  package func rowHashing(of table: String, seed: UInt64) throws -> RowHashing {
    let statement = try database.prepare("SELECT * FROM \(SchemaStatement.quote(table)) LIMIT 0")
    return RowHashing(seed: seed, columns: statement.columnNames)
  }
}
