/// One set of rows an incremental backup compares with its parent's, each row an element of a
/// key and a ``RowHasher`` hash: an entity hierarchy's objects (by `Z_PK`), a many-to-many
/// join table's rows grouped by owner (by the owner's key), or a table the model does not
/// describe (by its `INTEGER PRIMARY KEY`, or as one element when it has none).
package struct LedgerSet: Sendable, Hashable, Comparable {
  /// What the set's elements are.
  package enum Kind: Sendable, Hashable {
    /// The rows of the table of the hierarchy whose root is named: key `Z_PK`.
    case objects(root: String)
    /// A join table's rows grouped by owner: key the owner's primary key (column `source`),
    /// whose hierarchy is `root`'s; each row's destination and order key (columns
    /// `destination` and `order`).
    case join(root: String, source: String, destination: String, order: String?)
    /// A table outside the model: key its `INTEGER PRIMARY KEY` column `keyColumn`, or, when
    /// it has none, the whole table as one element of key 0.
    case table(keyColumn: String?)
  }

  /// The name the archive gives the set: `objects/ROOT`, `joins/TABLE` or `tables/TABLE`.
  package let name: String
  /// The SQL table read.
  package let table: String
  /// What the elements are.
  package let kind: Kind

  /// A set named `name` over `table`.
  package init(name: String, table: String, kind: Kind) {
    self.name = name
    self.table = table
    self.kind = kind
  }

  /// Sets by name.
  package static func < (a: LedgerSet, b: LedgerSet) -> Bool { a.name < b.name }
}
