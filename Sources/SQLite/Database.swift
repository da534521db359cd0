internal import CSQLite

/// A connection to an SQLite database; it owns its `sqlite3` handle and closes it when released.
///
/// A connection is not thread-safe: use it from one thread (or task) at a time.
///
/// ```swift
/// let db = try Database(path: "Store.sqlite", mode: .readOnly)
/// try db.read { db in
///   let count = try db.prepare("SELECT count(*) FROM ZITEM").scalar()
/// }
/// ```
public final class Database {
  let handle: OpaquePointer
  /// The path the connection was opened with.
  public let path: String
  /// The mode the connection was opened with.
  public let mode: OpenMode
  var functions: [FunctionBox] = []
  /// Whether ``harden()`` ran.
  public internal(set) var isHardened = false

  /// Opens (or creates) the database at `path`; wraps `sqlite3_open_v2`.
  ///
  /// The path is passed as a `file:` URI so that `mode` is enforced by SQLite itself; a read-only
  /// connection on a WAL database reads the `-wal` (unlike `immutable=1`) and never checkpoints it.
  ///
  /// `busyTimeout` (milliseconds) is how long each statement, the first read of the schema
  /// included, waits for another process's lock before failing with `SQLITE_BUSY`.
  /// - Throws: ``SQLiteError`` naming the path when the file cannot be opened or is not a database.
  public init(path: String, mode: OpenMode = .readWrite, busyTimeout: Int32 = 0)
    throws(SQLiteError)
  {
    var flags = SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX
    let modeParameter: String
    switch mode {
    case .readOnly:
      flags |= SQLITE_OPEN_READONLY
      modeParameter = "ro"
    case .readWrite:
      flags |= SQLITE_OPEN_READWRITE
      modeParameter = "rw"
    case .readWriteCreate:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
      modeParameter = "rwc"
    }
    _ = Database.configured
    let uri = "file:\(Database.percentEncodedPath(path))?mode=\(modeParameter)"
    var db: OpaquePointer?
    let rc = sqlite3_open_v2(uri, &db, flags, nil)
    guard rc == SQLITE_OK, let db else {
      let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
      sqlite3_close_v2(db)
      throw SQLiteError(code: rc, message: message, path: path)
    }
    self.handle = db
    self.path = path
    self.mode = mode
    sqlite3_extended_result_codes(db, 1)
    if busyTimeout > 0 { sqlite3_busy_timeout(db, busyTimeout) }
    // Opening is lazy in SQLite: touch the schema now so a file that is not a database fails
    // here, with its path, rather than at the first query.
    do {
      try execute("SELECT count(*) FROM sqlite_master")
    } catch {
      sqlite3_close_v2(db)
      throw SQLiteError(code: error.code, message: error.message, path: path)
    }
  }

  deinit {
    sqlite3_close_v2(handle)
  }

  /// SQLite's process-wide configuration, made once before its first connection: no memory
  /// statistics (nothing reads them, and they cost a global mutex around every allocation).
  private static let configured: Void = {
    _ = gv_sqlite3_disable_memory_statistics()
  }()

  /// The bytes SQLite's allocations hold, as its memory statistics count them: 0 while they
  /// are off (``init(path:mode:busyTimeout:)`` turns them off before the first connection).
  package static var memoryCounted: Int64 { sqlite3_memory_used() }

  /// Leaves a WAL database's `-wal` and `-shm` as they are when this connection closes,
  /// rather than checkpointing the log into the database and removing them (SQLite's way
  /// when the last connection closes): for a live store an app owns.
  public func leaveWriteAheadLogOnClose() {
    _ = gv_sqlite3_db_config_int(handle, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
  }

  /// Prepares one SQL statement; wraps `sqlite3_prepare_v3`.
  /// - Throws: ``SQLiteError`` carrying the SQL when it does not compile.
  public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
    try Statement(database: self, sql: sql)
  }

  /// Runs one SQL statement to its end, ignoring any rows it returns.
  ///
  /// A text holding a second statement is refused, never run in part: statements built from
  /// data cannot smuggle another one in.
  /// - Throws: ``SQLiteError`` carrying the SQL.
  public func execute(_ sql: String) throws(SQLiteError) {
    try prepare(sql).run()
  }

  /// Runs a script of several SQL statements; wraps `sqlite3_exec`. For scripts a program
  /// writes itself (tests, set-up), never for text read from data; a hardened connection
  /// (``harden()``) refuses it.
  /// - Throws: ``SQLiteError`` carrying the SQL.
  public func executeScript(_ sql: String) throws(SQLiteError) {
    guard !isHardened else {
      throw SQLiteError(
        code: SQLITE_MISUSE, message: "a hardened connection runs one statement at a time",
        sql: sql, path: path)
    }
    var errorMessage: UnsafeMutablePointer<CChar>?
    let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
    if rc != SQLITE_OK {
      let message = errorMessage.map { String(cString: $0) } ?? lastErrorMessage
      sqlite3_free(errorMessage)
      throw SQLiteError(code: rc, message: message, sql: sql, path: path)
    }
  }

  /// The row ID of the most recent successful insert on this connection.
  public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

  /// The number of rows changed by the most recent statement.
  public var changes: Int { Int(sqlite3_changes64(handle)) }

  /// Whether the connection is inside an explicit transaction.
  public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

  /// Sets how long a statement waits for a lock held by another connection before failing
  /// with `SQLITE_BUSY`.
  public func setBusyTimeout(milliseconds: Int32) {
    sqlite3_busy_timeout(handle, milliseconds)
  }

  /// Keeps the write-ahead log and its index when the connection closes
  /// (`SQLITE_FCNTL_PERSIST_WAL`): closing then deletes neither `-wal` nor `-shm` by name, which
  /// matters once another database has been moved to this one's path.
  public func keepWriteAheadLogOnClose() {
    var on: Int32 = 1
    sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
  }

  /// The version of the SQLite library in use, for example `3.40.1`.
  public static var libraryVersion: String { String(cString: sqlite3_libversion()) }

  var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

  func error(code: Int32, sql: String?) -> SQLiteError {
    SQLiteError(code: code, message: lastErrorMessage, sql: sql, path: path)
  }

  /// Encodes the characters that have a meaning in a `file:` URI (`%`, `?`, `#`).
  static func percentEncodedPath(_ path: String) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(path.utf8.count)
    for byte in path.utf8 {
      switch byte {
      case UInt8(ascii: "%"), UInt8(ascii: "?"), UInt8(ascii: "#"):
        bytes.append(UInt8(ascii: "%"))
        bytes.append(contentsOf: String(byte, radix: 16, uppercase: true).utf8)
      default:
        bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}

extension Database {
  /// Whether `word` is one of SQLite's keywords (compared without case); wraps
  /// `sqlite3_keyword_check`. A keyword used as a name must be quoted.
  public static func isKeyword(_ word: String) -> Bool {
    var word = word
    return word.withUTF8 { buffer in
      buffer.withMemoryRebound(to: CChar.self) {
        guard let base = $0.baseAddress else { return false }
        return sqlite3_keyword_check(base, Int32(buffer.count)) != 0
      }
    }
  }
}
