import SQLite

extension StoreLoader {
  /// Commits what the loader holds (tables, bookkeeping) and writes the entity tables' rows from
  /// here on page by page without SQLite (``DirectLoad``), for as long as they come in key
  /// order; the first row that cannot (a key out of order, a value SQLite would turn into or
  /// out of text, a table SQLite must keep an index of) ends it, and it and what follows go
  /// through SQL as before. What a whole restore into a new file does; a private temporary
  /// database has no file to write.
  ///
  /// Those of `indexes` that a direct write builds (on one integer column of an entity table:
  /// ``DirectLoad/describeIndex(_:of:in:affinities:rowid:)``) are created now, while their
  /// tables are empty, and built with the tables' pages; ``finish(indexesAndTriggers:journalMode:)``
  /// creates the others after the rows.
  /// - Throws: ``StoreError`` when the commit fails, an index cannot be created or the file
  ///   cannot be opened.
  package func writeTablesDirectly(indexes: [CoreDataStore.SchemaObject] = []) throws(StoreError) {
    guard direct == nil, path != Self.privateTemporary else { return }
    guard let layout else {
      throw StoreError(.unsupported, "prepare(model:entityRows:) first", path: path)
    }
    try run("cannot commit the store's tables") {
      try database.execute("COMMIT")
      // The file is private until it is published (synced then): a failed load is removed,
      // never recovered, so its transactions need neither a journal nor a sync each.
      try database.execute("PRAGMA journal_mode = OFF")
      try database.execute("PRAGMA synchronous = OFF")
    }
    let tables = Set(layout.tables.map(\.name))
    let candidates = Dictionary(
      grouping: indexes.filter { $0.type == "index" && tables.contains($0.table) }, by: \.table)
    for (table, candidates) in candidates.sorted(by: { $0.key < $1.key }) {
      try run("cannot create the indexes of \(table)") {
        try makeIndexes(candidates, of: table)
      }
    }
    direct = try DirectLoad(database: database, path: path, layout: layout)
  }

  /// Makes those of `candidates`, indexes of `table`, that a direct write builds, when it
  /// writes the table.
  private func makeIndexes(_ candidates: [CoreDataStore.SchemaObject], of table: String) throws {
    let info = try database.prepare("SELECT type, pk FROM pragma_table_xinfo(?)")
    try info.bind(.text(table), at: 1)
    let columns = try info.allRows()
    let affinities = columns.map { ColumnAffinity(declaredType: $0[0].textValue ?? "") }
    // A table without an INTEGER PRIMARY KEY is not written directly.
    guard columns.filter({ $0[1] != .integer(0) }).count == 1,
      let rowid = columns.firstIndex(where: { $0[1] != .integer(0) })
    else { return }
    var made: [String] = []
    for index in candidates {
      try database.execute(index.sql)
      if try DirectLoad.describeIndex(
        index.name, of: table, in: database, affinities: affinities, rowid: rowid) != nil
      {
        made.append(index.name)
      } else {
        try database.execute("DROP INDEX \(SchemaStatement.quote(index.name))")
      }
    }
    // Kept only when the table is written directly with them; else made after its rows.
    if try DirectLoad.describe(table, in: database, entities: []) == nil {
      for name in made { try database.execute("DROP INDEX \(SchemaStatement.quote(name))") }
    } else {
      indexesMade.formUnion(made)
    }
  }

  /// Ends the direct writes ``writeTablesDirectly()`` started, if they run: writes the tables'
  /// pages and opens the transaction the rest of the load runs in.
  /// - Throws: ``StoreError`` when a page cannot be written, or naming an object whose key
  ///   another object of its table has.
  package func endDirectWrites() throws(StoreError) {
    guard let load = direct else { return }
    direct = nil
    try load.finish()
    try run("cannot begin the store's transaction") { try database.execute("BEGIN IMMEDIATE") }
  }

  /// Runs `body`'s SQL on the store while its tables are written directly: the pages written
  /// so far are handed to the connection, which commits before they are taken back.
  func handingOver(_ body: () throws -> Void) throws {
    guard let load = direct else { return try body() }
    try load.suspend()
    try run("cannot begin a transaction") { try database.execute("BEGIN IMMEDIATE") }
    try body()
    try run("cannot commit") { try database.execute("COMMIT") }
    try load.resume()
  }
}
