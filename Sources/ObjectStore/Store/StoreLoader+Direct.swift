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
    try run("cannot commit the store's tables") { try database.execute("COMMIT") }
    direct = try DirectLoad(database: database, path: path, layout: layout)
  }

  /// Ends the direct writes ``writeTablesDirectly()`` started, if they run: writes the tables'
  /// pages, opens the transaction the rest of the load runs in, and inserts the many-to-many
  /// rows that waited.
  /// - Throws: ``StoreError`` when a page or row cannot be written, or naming an object whose
  ///   key another object of its table has.
  package func endDirectWrites() throws(StoreError) {
    guard let load = direct else { return }
    direct = nil
    try load.finish()
    try run("cannot begin the store's transaction") { try database.execute("BEGIN IMMEDIATE") }
    for (join, spool) in load.joinRows {
      try run("cannot insert the rows of \(join.name)") {
        try spool.flush()
        let hasOrder = join.orderColumn != nil
        let width = hasOrder ? 3 : 2
        let size = BatchInsertion.rows(ofWidth: width, most: BatchInsertion.joinRowsPerStatement)
        let grouped = try joinStatement(join, rows: size)
        let single = try joinStatement(join)
        var waiting: [(Int64, Int64, Int64?)] = []
        func insert(_ rows: [(Int64, Int64, Int64?)], with statement: Statement) throws {
          for (slot, (source, destination, order)) in rows.enumerated() {
            let base = slot * width
            try statement.bind(source, at: base + 1)
            try statement.bind(destination, at: base + 2)
            if hasOrder {
              if let order {
                try statement.bind(order, at: base + 3)
              } else {
                try statement.bindNull(at: base + 3)
              }
            }
          }
          try statement.run()
        }
        while try spool.advance() {
          let (destination, order) = spool.withBytes { bytes in
            (
              Int64(littleEndian: bytes.loadUnaligned(as: Int64.self)),
              bytes.count >= 16
                ? Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: Int64.self)) : nil
            )
          }
          waiting.append((spool.key, destination, order))
          if waiting.count == size {
            try insert(waiting, with: size > 1 ? grouped : single)
            waiting.removeAll(keepingCapacity: true)
          }
        }
        for row in waiting { try insert([row], with: single) }
      }
    }
  }
}
