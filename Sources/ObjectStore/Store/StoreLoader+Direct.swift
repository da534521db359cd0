import SQLite

extension StoreLoader {
  /// Commits what the loader holds (tables, bookkeeping) and writes the entity tables' rows from
  /// here on page by page without SQLite (``DirectLoad``), for as long as they come in key
  /// order; the first row that cannot (a key out of order, a value SQLite would turn into or
  /// out of text, a table SQLite must keep an index of) ends it, and it and what follows go
  /// through SQL as before. What a whole restore into a new file does; a private temporary
  /// database has no file to write.
  ///
  /// Those of `indexes` that a direct write builds with the tables' pages
  /// (``buildsWithPages(_:)``) are created now, while their tables are empty; the others after
  /// the rows (``finish(indexesAndTriggers:journalMode:)``).
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
    for index in buildsWithPages(indexes) {
      try run("cannot create index \(index.name)") { try database.execute(index.sql) }
      indexesMade.insert(index.name)
    }
    direct = try DirectLoad(database: database, path: path, layout: layout)
  }

  /// The indexes among `objects` (a store's schema, tables first) that a direct write builds
  /// with its tables' pages, in their order: those of entity tables written directly on one
  /// integer column (``DirectLoad/describe(_:in:entities:)``). Judged on a private copy of the
  /// schema in memory, so that the answer, and the order a loader creates indexes in, depend on
  /// the schema alone, not on how the rows came (the same fixture, byte for byte, whichever way
  /// it was cut). A schema that copy cannot make has none.
  func buildsWithPages(_ objects: [CoreDataStore.SchemaObject]) -> [CoreDataStore.SchemaObject] {
    guard let layout else { return [] }
    let tables = Set(layout.tables.map(\.name))
    let candidates = objects.filter { $0.type == "index" && tables.contains($0.table) }
    guard !candidates.isEmpty, let copy = try? Database(path: ":memory:", mode: .readWriteCreate)
    else { return [] }
    do {
      try copy.harden()
      try StandInFunctions.register(on: copy)
      for object in objects where object.type == "table" { try copy.execute(object.sql) }
      // An index is kept when its table is still written directly with it: every index of a
      // table written directly is one it builds.
      var built = Set<String>()
      for index in candidates {
        guard (try? copy.execute(index.sql)) != nil else { continue }
        if try DirectLoad.describe(index.table, in: copy, entities: []) != nil {
          built.insert(index.name)
        } else {
          try copy.execute("DROP INDEX \(SchemaStatement.quote(index.name))")
        }
      }
      return candidates.filter { built.contains($0.name) }
    } catch {
      return []
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
