internal import CSQLite

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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

extension SQLiteError {
  /// The error SQLite gives an insert whose rowid a row of `table` has already
  /// (`SQLITE_CONSTRAINT_PRIMARYKEY`), for rows written without SQLite that it would have
  /// refused.
  package static func primaryKeyConflict(table: String, column: String, path: String?)
    -> SQLiteError
  {
    SQLiteError(
      code: SQLITE_CONSTRAINT | (6 << 8), message: "UNIQUE constraint failed: \(table).\(column)",
      path: path)
  }
}

extension SQLiteError {
  /// The error SQLite gives `CREATE UNIQUE INDEX` on `table` when two rows have the same values
  /// in `columns` (`SQLITE_CONSTRAINT_UNIQUE`), for an index built without SQLite that it would
  /// have refused.
  package static func uniqueConflict(table: String, columns: [String], path: String?)
    -> SQLiteError
  {
    SQLiteError(
      code: SQLITE_CONSTRAINT | (8 << 8),
      message: "UNIQUE constraint failed: "
        + columns.map { "\(table).\($0)" }.joined(separator: ", "),
      path: path)
  }
}

extension SQLiteError {
  /// The error SQLite itself gives a failed read or write of a file it manages, from the
  /// `errno` the system call left: `SQLITE_FULL` ("database or disk is full") when the disk or
  /// quota is full, else an I/O error naming the system's reason. For files written beside
  /// SQLite (``PageFile``, a loader's spools), so that their failures read as SQLite's would.
  package static func fileFailure(writing: Bool, path: String?) -> SQLiteError {
    let number = errno
    if writing && (number == ENOSPC || number == EDQUOT) {
      return SQLiteError(code: SQLITE_FULL, message: "database or disk is full", path: path)
    }
    let reason = number == 0 ? "" : ": " + String(cString: strerror(number))
    return SQLiteError(
      code: SQLITE_IOERR | ((writing ? 3 : 1) << 8),
      message: "disk I/O error\(reason)", path: path)
  }
}
