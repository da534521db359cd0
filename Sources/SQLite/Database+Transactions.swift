internal import CSQLite

extension Database {
  /// How a transaction takes its locks.
  public enum TransactionKind: String, Sendable {
    /// Takes locks when first needed (`BEGIN DEFERRED`); a read transaction in WAL mode sees
    /// one consistent snapshot from its first read to its end.
    case deferred = "DEFERRED"
    /// Takes the write lock at once (`BEGIN IMMEDIATE`).
    case immediate = "IMMEDIATE"
    /// Takes an exclusive lock at once (`BEGIN EXCLUSIVE`).
    case exclusive = "EXCLUSIVE"
  }

  /// Runs `body` inside a transaction: commits when it returns, rolls back when it throws.
  ///
  /// - Throws: the error `body` threw (after rolling back), or ``SQLiteError`` from `BEGIN` or
  ///   `COMMIT`.
  public func transaction<R>(
    _ kind: TransactionKind = .deferred, _ body: (Database) throws -> R
  ) throws -> R {
    try execute("BEGIN \(kind.rawValue)")
    let result: R
    do {
      result = try body(self)
    } catch {
      rollbackIgnoringErrors()
      throw error
    }
    do {
      try execute("COMMIT")
    } catch {
      rollbackIgnoringErrors()
      throw error
    }
    return result
  }

  /// Runs `body` in one read transaction, so every statement inside sees the same snapshot of
  /// the database even while other connections write to it. The transaction is always ended
  /// with `ROLLBACK`, so a read never commits anything.
  public func read<R>(_ body: (Database) throws -> R) throws -> R {
    try execute("BEGIN DEFERRED")
    defer { rollbackIgnoringErrors() }
    // A deferred transaction takes its snapshot at the first read: take it now.
    try execute("SELECT count(*) FROM sqlite_master")
    return try body(self)
  }

  private func rollbackIgnoringErrors() {
    if isInTransaction { sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
  }
}
