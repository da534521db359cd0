import SQLite

extension StoreLoader {
  /// Commits what the loader holds (tables, bookkeeping) and writes the entity tables' rows from
  /// here on page by page without SQLite (``DirectLoad``), for as long as they come in key
  /// order; the first row that cannot (a key out of order, a value SQLite would turn into or
  /// out of text, a table SQLite must keep an index of) ends it, and it and what follows go
  /// through SQL as before. What a whole restore into a new file does; a private temporary
  /// database has no file to write.
  /// - Throws: ``StoreError`` when the commit fails or the file cannot be opened.
  package func writeTablesDirectly() throws(StoreError) {
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
    direct = try DirectLoad(database: database, path: path, layout: layout)
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
