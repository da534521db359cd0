/// Statements prepared once and run many times on one connection, by their SQL: for code that
/// asks the same question object after object (a context reading members, a fixture's closure
/// following keys), where preparing a statement costs more than running it.
///
/// A statement handed out is reset with its bindings cleared; finish with it (step to the end,
/// or ``Statement/reset(clearBindings:)``) before asking for the same SQL again.
public final class StatementCache {
  /// The connection the statements belong to.
  public let database: Database
  private let limit: Int
  private var statements: [String: Statement] = [:]

  /// A cache of at most `limit` statements on `database`; past that it starts over (SQL built
  /// with lists of values varies without end).
  public init(database: Database, limit: Int = 128) {
    self.database = database
    self.limit = limit
  }

  /// `sql` prepared on first use, reset and ready to bind.
  /// - Throws: ``SQLiteError`` when `sql` does not prepare.
  public func statement(_ sql: String) throws(SQLiteError) -> Statement {
    if let known = statements[sql] {
      known.reset(clearBindings: true)
      return known
    }
    let statement = try database.prepare(sql)
    if statements.count >= limit { statements.removeAll() }
    statements[sql] = statement
    return statement
  }
}
