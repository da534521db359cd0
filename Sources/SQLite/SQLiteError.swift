internal import CSQLite

/// An error reported by SQLite, with the result code, SQLite's message and the SQL that failed.
public struct SQLiteError: Error, CustomStringConvertible, Sendable, Equatable {
  /// The extended result code (`SQLITE_BUSY`, `SQLITE_CORRUPT`, `SQLITE_NOTADB`, …).
  public let code: Int32
  /// SQLite's own message for the failure.
  public let message: String
  /// The SQL statement that failed, when a statement was involved.
  public let sql: String?
  /// The database file, when known.
  public let path: String?

  /// Creates an error from its parts.
  public init(code: Int32, message: String, sql: String? = nil, path: String? = nil) {
    self.code = code
    self.message = message
    self.sql = sql
    self.path = path
  }

  /// The primary result code (the low byte of ``code``).
  public var primaryCode: Int32 { code & 0xFF }

  /// Whether the database file is not an SQLite database or is damaged.
  public var isNotADatabase: Bool {
    primaryCode == SQLITE_NOTADB || primaryCode == SQLITE_CORRUPT
  }

  /// Whether the database was locked or busy.
  public var isBusy: Bool { primaryCode == SQLITE_BUSY || primaryCode == SQLITE_LOCKED }

  /// Whether the file could not be opened.
  public var isCannotOpen: Bool { primaryCode == SQLITE_CANTOPEN }

  /// Whether the disk or the file failed: full, an I/O error, a file that cannot be opened or
  /// written, out of memory.
  public var isIOFailure: Bool {
    [
      SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_NOMEM, SQLITE_NOLFS,
      SQLITE_PROTOCOL,
    ].contains(primaryCode)
  }

  /// Whether the operating system refused access (`SQLITE_PERM`).
  public var isPermissionDenied: Bool { primaryCode == SQLITE_PERM }

  /// Whether a constraint (a unique key, NOT NULL, a check) refused the statement.
  public var isConstraint: Bool { primaryCode == SQLITE_CONSTRAINT }

  /// A one-line description naming the code, message, file and SQL.
  public var description: String {
    var text = "SQLite error \(code) (\(String(cString: sqlite3_errstr(code)))): \(message)"
    if let path { text += " [database: \(path)]" }
    if let sql { text += " [SQL: \(sql)]" }
    return text
  }
}
