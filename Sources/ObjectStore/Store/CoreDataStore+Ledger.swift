import SQLite

extension CoreDataStore {
  /// The sets of rows an incremental backup compares (``LedgerSet``), by name: one per entity
  /// table, per join table and per table outside the model.
  package func ledgerSets(layout: StoreLayout) throws -> [LedgerSet] {
    var sets = layout.tables.map {
      LedgerSet(
        name: "objects/\($0.rootEntity)", table: $0.name, kind: .objects(root: $0.rootEntity))
    }
    for join in layout.joins {
      let root = layout.model.root(of: join.entity)?.name ?? join.entity
      sets.append(
        LedgerSet(
          name: "joins/\(join.name)", table: join.name,
          kind: .join(
            root: root, source: join.sourceColumn, destination: join.destinationColumn,
            order: join.orderColumn)))
    }
    for table in try otherTables(besides: layout) {
      sets.append(
        LedgerSet(
          name: "tables/\(table)", table: table, kind: .table(keyColumn: try rowKeyColumn(table))))
    }
    return sets.sorted()
  }

  /// The column that is `table`'s rowid (its one `INTEGER PRIMARY KEY`), or nil.
  func rowKeyColumn(_ table: String) throws -> String? {
    guard keepsRowID(table) else { return nil }
    let statement = try database.prepare("SELECT name, type, pk FROM pragma_table_info(?)")
    try statement.bind(.text(table), at: 1)
    var keys: [(name: String, type: String)] = []
    while try statement.step() {
      if statement.int64(at: 2) > 0 { keys.append((statement.text(at: 0), statement.text(at: 1))) }
    }
    guard keys.count == 1, keys[0].type.uppercased() == "INTEGER" else { return nil }
    return keys[0].name
  }

  private func quoted(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }

  /// Calls `body` with every element of `set` as the store holds it now (inside ``read(_:)``
  /// for a consistent view), in ascending key order: its key and its hash keyed by `seed`.
  ///
  /// An object's hash covers every column of its row, in table order, with its storage class
  /// (`Z_ENT` and `Z_OPT` included); a join element's, the owner's rows in destination order
  /// (destination key and order key, `NULL` for none); a table row's, every column.
  ///
  /// With `keys` (ascending), only the elements of those keys (a table without a key is one
  /// element whatever the keys).
  package func forEachElement(
    of set: LedgerSet, seed: UInt64, keys: [Int64]? = nil,
    _ body: (_ key: Int64, _ hash: UInt64) throws -> Void
  ) throws {
    guard let keys else {
      try forEachElement(of: set, seed: seed, filter: nil, body)
      return
    }
    for part in Self.parts(of: keys) {
      try forEachElement(of: set, seed: seed, filter: .keys(Array(part)), body)
      if case .table(nil) = set.kind { return }
    }
  }

  /// Calls `body` with the elements of `set` whose keys are at least `from` (when given) and
  /// below `below` (when given), as ``forEachElement(of:seed:keys:_:)`` gives them: a part of
  /// a set that can be hashed apart from the rest. Parts cut at the same bounds hold each
  /// element once, whatever number its key is stored as (``keyBounds(of:)`` gives no bounds
  /// for a set with a key that is no number); a table without a key is one element, not cut.
  package func forEachElement(
    of set: LedgerSet, seed: UInt64, from: Int64?, below: Int64?,
    _ body: (_ key: Int64, _ hash: UInt64) throws -> Void
  ) throws {
    try forEachElement(of: set, seed: seed, filter: .range(from: from, below: below), body)
  }

  /// The smallest and largest key of `set`'s elements: where its parts for
  /// ``forEachElement(of:seed:from:below:_:)`` lie; nil when the set cannot be cut: it has no
  /// elements or no key, or a join row's owner is missing or stored as text or a blob (which
  /// sort outside every range of numbers).
  package func keyBounds(of set: LedgerSet) throws -> ClosedRange<Int64>? {
    let column: String
    switch set.kind {
    case .objects: column = "Z_PK"
    case .table(let key?): column = quoted(key)
    case .table(nil): return nil
    case .join(_, let source, _, _):
      column = source
      let ownerless = try database.prepare(
        "SELECT count(*) FROM (SELECT 1 FROM \(quoted(set.table)) WHERE \(source) IS NULL LIMIT 1)"
      ).scalar()
      guard ownerless == .integer(0) else { return nil }
    }
    return try integerBounds(of: column, in: quoted(set.table))
  }

  /// Which elements a hashing reads: those of some keys, or of a range of keys.
  private enum Filter {
    case keys([Int64])
    case range(from: Int64?, below: Int64?)
  }

  private func forEachElement(
    of set: LedgerSet, seed: UInt64, filter selection: Filter?,
    _ body: (_ key: Int64, _ hash: UInt64) throws -> Void
  ) throws {
    // The ` WHERE …` that keeps the selected keys of `column`, and its parameters.
    func filter(_ column: String) -> (sql: String, bound: [SQLiteValue]) {
      switch selection {
      case nil: ("", [])
      case .keys(let keys)?:
        (
          " WHERE \(column) IN (\(CoreDataStore.placeholders(keys.count)))",
          keys.map { .integer($0) }
        )
      case .range(let from, let below)?:
        Self.keyRange(column, from: from, below: below).map { (" WHERE \($0.condition)", $0.bound) }
          ?? ("", [])
      }
    }
    switch set.kind {
    case .objects:
      let (condition, bound) = filter("Z_PK")
      try hashRows(
        "SELECT Z_PK, * FROM \(quoted(set.table))\(condition) ORDER BY Z_PK", bound, seed: seed,
        body)
    case .table(let keyColumn?):
      let (condition, bound) = filter(quoted(keyColumn))
      try hashRows(
        "SELECT \(quoted(keyColumn)), * FROM \(quoted(set.table))\(condition) ORDER BY 1",
        bound, seed: seed, body)
    case .table(nil):
      let statement = try rowsStatement(of: set.table)
      defer { statement.reset() }
      var hasher = RowHasher(seed: seed)
      let columns = statement.columnCount
      while try statement.step() {
        hasher.add(integer: Int64(columns))
        statement.hashColumns(from: 0, into: &hasher)
      }
      try body(0, hasher.value)
    case .join(_, let source, let destination, let order):
      let (condition, bound) = filter(source)
      let statement = try database.prepare(
        "SELECT \(source), \(destination), \(order ?? "NULL") FROM \(quoted(set.table))\(condition) ORDER BY 1, 2"
      )
      try statement.bind(bound)
      defer { statement.reset() }
      var owner: Int64?
      var hasher = RowHasher(seed: seed)
      while try statement.step() {
        let source = statement.int64(at: 0)
        if source != owner {
          if let owner { try body(owner, hasher.value) }
          owner = source
          hasher = RowHasher(seed: seed)
        }
        statement.hashColumns(from: 1, into: &hasher)
      }
      if let owner { try body(owner, hasher.value) }
    }
  }

  /// Hashes each row of `sql`, whose first column is the key, by every column after it.
  private func hashRows(
    _ sql: String, _ bound: [SQLiteValue], seed: UInt64,
    _ body: (_ key: Int64, _ hash: UInt64) throws -> Void
  ) throws {
    let statement = try database.prepare(sql)
    try statement.bind(bound)
    defer { statement.reset() }
    while try statement.step() {
      var hasher = RowHasher(seed: seed)
      statement.hashColumns(from: 1, into: &hasher)
      try body(statement.int64(at: 0), hasher.value)
    }
  }
}
