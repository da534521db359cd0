internal import CSQLite

extension Database {
  /// The pragmas a hardened connection may run: the ones graphvault itself uses to create,
  /// describe and check stores.
  public static let permittedPragmas: Set<String> = [
    "page_size", "auto_vacuum", "journal_mode", "table_info", "table_xinfo", "index_list",
    "index_info", "index_xinfo", "integrity_check", "quick_check", "data_version", "busy_timeout",
    "synchronous",
  ]

  /// The functions a hardened connection refuses to call, whatever the SQL: the ones that reach
  /// outside the database (files, shared libraries, tokenizer pointers).
  static let refusedFunctions: Set<String> = [
    "load_extension", "fts3_tokenizer", "readfile", "writefile", "edit", "zipfile",
    "sqlar_compress",
    "sqlar_uncompress",
  ]

  /// Makes this connection refuse everything graphvault does not ask of it, for connections
  /// that load or inspect data read from an archive:
  ///
  /// - defensive mode on (no writes to the schema tables, no corrupting pragmas), untrusted
  ///   schema (functions in triggers and views must be innocuous), extension loading off
  ///   (`SQLITE_DBCONFIG_DEFENSIVE`, `SQLITE_DBCONFIG_TRUSTED_SCHEMA`,
  ///   `SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION`);
  /// - an authorizer (`sqlite3_set_authorizer`) that denies `ATTACH` and `DETACH`, every
  ///   statement on a schema other than `main` and `temp`, pragmas outside
  ///   ``permittedPragmas``, virtual tables, views, and the functions that reach files;
  /// - ``executeScript(_:)`` refused: one statement a call.
  ///
  /// - Throws: ``SQLiteError`` when SQLite does not take a setting.
  public func harden() throws(SQLiteError) {
    for (option, value) in [
      (SQLITE_DBCONFIG_DEFENSIVE, Int32(1)), (SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0),
      (SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0), (SQLITE_DBCONFIG_ENABLE_TRIGGER, 1),
    ] where gv_sqlite3_db_config_int(handle, option, value) != value {
      throw SQLiteError(
        code: SQLITE_MISUSE, message: "SQLite refused configuration option \(option)", path: path)
    }
    let rc = sqlite3_set_authorizer(
      handle,
      { _, action, first, second, schema, _ in
        Database.authorize(
          action, first.map { String(cString: $0) }, second.map { String(cString: $0) },
          schema.map { String(cString: $0) })
      }, nil)
    guard rc == SQLITE_OK else { throw error(code: rc, sql: nil) }
    isHardened = true
  }

  /// The authorizer's verdict on one action of a statement being compiled.
  static func authorize(_ action: Int32, _ first: String?, _ second: String?, _ schema: String?)
    -> Int32
  {
    switch action {
    case SQLITE_ATTACH, SQLITE_DETACH, SQLITE_CREATE_VTABLE, SQLITE_DROP_VTABLE,
      SQLITE_CREATE_VIEW, SQLITE_CREATE_TEMP_VIEW:
      return SQLITE_DENY
    case SQLITE_PRAGMA:
      return permittedPragmas.contains(first?.lowercased() ?? "") ? SQLITE_OK : SQLITE_DENY
    case SQLITE_FUNCTION:
      return refusedFunctions.contains(second?.lowercased() ?? "") ? SQLITE_DENY : SQLITE_OK
    default:
      if let schema, schema != "main", schema != "temp" { return SQLITE_DENY }
      return SQLITE_OK
    }
  }
}
