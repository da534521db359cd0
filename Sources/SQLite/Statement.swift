internal import CSQLite

/// A prepared SQL statement; it owns its `sqlite3_stmt` and finalizes it when released.
///
/// Bind parameters (1-based, as in SQLite), ``step()`` through the rows and read columns
/// (0-based). ``reset()`` makes the statement ready to run again with new bindings, which is how
/// hot loops reuse one compiled statement.
public final class Statement {
  let handle: OpaquePointer
  /// The connection this statement belongs to; kept alive while the statement lives.
  public let database: Database
  /// The SQL the statement was prepared from.
  public let sql: String

  init(database: Database, sql: String) throws(SQLiteError) {
    var stmt: OpaquePointer?
    var rest = ""
    let rc = sql.withCString { text in
      var tail: UnsafePointer<CChar>?
      let rc = sqlite3_prepare_v3(
        database.handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, &tail)
      if rc == SQLITE_OK, let tail { rest = String(cString: tail) }
      return rc
    }
    guard rc == SQLITE_OK, let stmt else {
      throw database.error(code: rc == SQLITE_OK ? SQLITE_MISUSE : rc, sql: sql)
    }
    // One text, one statement: whatever follows the first statement is never run, so it is
    // refused rather than silently dropped.
    guard rest.allSatisfy({ $0.isWhitespace || $0 == ";" }) else {
      sqlite3_finalize(stmt)
      throw SQLiteError(
        code: SQLITE_MISUSE, message: "the text holds more than one statement", sql: sql,
        path: database.path)
    }
    self.handle = stmt
    self.database = database
    self.sql = sql
  }

  deinit {
    sqlite3_finalize(handle)
  }

  // MARK: Binding

  /// The number of parameters the statement takes.
  public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

  /// Binds `value` to the 1-based parameter `index`; wraps the `sqlite3_bind_*` family.
  /// - Throws: ``SQLiteError`` when the index is out of range.
  public func bind(_ value: SQLiteValue, at index: Int) throws(SQLiteError) {
    let i = Int32(index)
    let rc: Int32
    switch value {
    case .null: rc = sqlite3_bind_null(handle, i)
    case .integer(let v): rc = sqlite3_bind_int64(handle, i, v)
    case .real(let v): rc = sqlite3_bind_double(handle, i, v)
    case .text(let v): rc = bindText(v, at: i)
    case .blob(let v): rc = bindBlob(v, at: i)
    }
    try check(rc)
  }

  /// Binds an integer to the 1-based parameter `index` without boxing it in a ``SQLiteValue``.
  public func bind(_ value: Int64, at index: Int) throws(SQLiteError) {
    try check(sqlite3_bind_int64(handle, Int32(index), value))
  }

  /// Binds a double to the 1-based parameter `index`.
  public func bind(_ value: Double, at index: Int) throws(SQLiteError) {
    try check(sqlite3_bind_double(handle, Int32(index), value))
  }

  /// Binds text to the 1-based parameter `index`.
  public func bind(_ value: String, at index: Int) throws(SQLiteError) {
    try check(bindText(value, at: Int32(index)))
  }

  /// Binds bytes as a blob to the 1-based parameter `index`.
  public func bind(_ value: [UInt8], at index: Int) throws(SQLiteError) {
    try check(bindBlob(value, at: Int32(index)))
  }

  /// Binds UTF-8 bytes as text to the 1-based parameter `index` without copying them: they
  /// must stay valid and unchanged until the statement is reset, rebound or finalized.
  public func bindUnsafe(text bytes: UnsafeRawBufferPointer, at index: Int) throws(SQLiteError) {
    guard let base = bytes.baseAddress, !bytes.isEmpty else {
      try bind("", at: index)
      return
    }
    try check(
      sqlite3_bind_text(
        handle, Int32(index), base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil))
  }

  /// Binds bytes as a blob to the 1-based parameter `index` without copying them: they must
  /// stay valid and unchanged until the statement is reset, rebound or finalized.
  public func bindUnsafe(blob bytes: UnsafeRawBufferPointer, at index: Int) throws(SQLiteError) {
    guard let base = bytes.baseAddress, !bytes.isEmpty else {
      try bind([UInt8](), at: index)
      return
    }
    try check(sqlite3_bind_blob(handle, Int32(index), base, Int32(bytes.count), nil))
  }

  /// Binds SQL `NULL` to the 1-based parameter `index`.
  public func bindNull(at index: Int) throws(SQLiteError) {
    try check(sqlite3_bind_null(handle, Int32(index)))
  }

  /// Binds `values` to parameters 1, 2, … in order.
  public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
    for (offset, value) in values.enumerated() {
      try bind(value, at: offset + 1)
    }
  }

  /// Resets the statement so it can run again; bindings are kept unless `clearBindings` is set.
  public func reset(clearBindings: Bool = false) {
    sqlite3_reset(handle)
    if clearBindings { sqlite3_clear_bindings(handle) }
  }

  private func bindText(_ value: String, at index: Int32) -> Int32 {
    var value = value
    return value.withUTF8 { buffer in
      buffer.withMemoryRebound(to: CChar.self) {
        guard let base = $0.baseAddress else {
          return gv_sqlite3_bind_text_copy(handle, index, "", 0)
        }
        return gv_sqlite3_bind_text_copy(handle, index, base, Int32(buffer.count))
      }
    }
  }

  private func bindBlob(_ value: [UInt8], at index: Int32) -> Int32 {
    value.withUnsafeBytes { buffer in
      // A zero-length blob needs a non-NULL pointer, or SQLite stores NULL.
      gv_sqlite3_bind_blob_copy(
        handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, Int32(buffer.count))
    }
  }

  private func check(_ rc: Int32) throws(SQLiteError) {
    if rc != SQLITE_OK { throw database.error(code: rc, sql: sql) }
  }

  // MARK: Stepping

  /// Advances to the next row; wraps `sqlite3_step`.
  /// - Returns: `true` when a row is available, `false` when the statement has finished.
  /// - Throws: ``SQLiteError`` carrying the SQL.
  @discardableResult
  public func step() throws(SQLiteError) -> Bool {
    let rc = sqlite3_step(handle)
    switch rc {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default:
      let error = database.error(code: rc, sql: sql)
      sqlite3_reset(handle)
      throw error
    }
  }

  /// Runs the statement to completion, ignoring any rows, then resets it.
  public func run() throws(SQLiteError) {
    defer { reset() }
    while try step() {}
  }

  /// Runs the statement and returns the first column of the first row (``SQLiteValue/null``
  /// when there is no row), then resets it.
  public func scalar() throws(SQLiteError) -> SQLiteValue {
    defer { reset() }
    return try step() ? value(at: 0) : .null
  }

  /// Runs the statement and returns every row as an array of values, then resets it.
  /// Meant for small results; large reads should step and read columns directly.
  public func allRows() throws(SQLiteError) -> [[SQLiteValue]] {
    defer { reset() }
    var rows: [[SQLiteValue]] = []
    let count = columnCount
    while try step() {
      rows.append((0..<count).map { value(at: $0) })
    }
    return rows
  }

  // MARK: Columns

  /// The number of columns in a result row.
  public var columnCount: Int { Int(sqlite3_column_count(handle)) }

  /// The name of the 0-based result column `index`.
  public func columnName(at index: Int) -> String {
    sqlite3_column_name(handle, Int32(index)).map { String(cString: $0) } ?? ""
  }

  /// The names of all result columns.
  public var columnNames: [String] { (0..<columnCount).map { columnName(at: $0) } }

  /// The declared type of the 0-based result column `index` (`VARCHAR`, `TIMESTAMP`, …), when it
  /// comes straight from a table column.
  public func declaredType(at index: Int) -> String? {
    sqlite3_column_decltype(handle, Int32(index)).map { String(cString: $0) }
  }

  /// The storage class of the current row's column `index`.
  public func storageType(at index: Int) -> StorageType {
    StorageType(rawValue: sqlite3_column_type(handle, Int32(index))) ?? .null
  }

  /// Whether the current row's column `index` is `NULL`.
  public func isNull(at index: Int) -> Bool {
    sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL
  }

  /// The current row's column `index` as an integer (SQLite's conversion rules apply).
  public func int64(at index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(index)) }

  /// The current row's column `index` as a double (SQLite's conversion rules apply).
  public func double(at index: Int) -> Double { sqlite3_column_double(handle, Int32(index)) }

  /// The current row's column `index` as text (SQLite's conversion rules apply).
  public func text(at index: Int) -> String {
    withText(at: index) { String(decoding: $0, as: UTF8.self) }
  }

  /// The current row's column `index` as bytes.
  public func blob(at index: Int) -> [UInt8] {
    withBlob(at: index) { Array($0) }
  }

  /// Calls `body` with the current row's column `index` as UTF-8 text (SQLite's conversion
  /// rules apply) without copying it. The buffer is valid only inside `body`.
  public func withText<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows
    -> R
  {
    let pointer = sqlite3_column_text(handle, Int32(index))
    let count = Int(sqlite3_column_bytes(handle, Int32(index)))
    return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
  }

  /// Calls `body` with the bytes of the current row's column `index` without copying them.
  /// The buffer is valid only inside `body`.
  public func withBlob<R>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R
  {
    let pointer = sqlite3_column_blob(handle, Int32(index))
    let count = Int(sqlite3_column_bytes(handle, Int32(index)))
    return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
  }

  /// Feeds the current row's columns from `first` on into `hasher`, each with its storage
  /// class (``RowHasher``), reading each value once.
  public func hashColumns(from first: Int, into hasher: inout RowHasher) {
    for index in first..<columnCount {
      RowColumns.Column(sqlite3_column_value(handle, Int32(index))).hash(into: &hasher)
    }
  }

  /// The current row's column `index` as a typed value, in its own storage class.
  public func value(at index: Int) -> SQLiteValue {
    switch storageType(at: index) {
    case .null: return .null
    case .integer: return .integer(int64(at: index))
    case .real: return .real(double(at: index))
    case .text: return .text(text(at: index))
    case .blob: return .blob(blob(at: index))
    }
  }
}

/// SQLite's storage classes.
public enum StorageType: Int32, Sendable {
  /// `SQLITE_INTEGER`.
  case integer = 1
  /// `SQLITE_FLOAT`.
  case real = 2
  /// `SQLITE_TEXT`.
  case text = 3
  /// `SQLITE_BLOB`.
  case blob = 4
  /// `SQLITE_NULL`.
  case null = 5
}
