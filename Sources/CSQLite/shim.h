#ifndef GRAPHVAULT_CSQLITE_SHIM_H
#define GRAPHVAULT_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift
// cannot import: these wrappers make SQLite copy the bytes it is given.
static inline int gv_sqlite3_bind_text_copy(sqlite3_stmt *s, int i, const char *z, int n) {
  return sqlite3_bind_text(s, i, z, n, SQLITE_TRANSIENT);
}
static inline int gv_sqlite3_bind_blob_copy(sqlite3_stmt *s, int i, const void *z, int n) {
  return sqlite3_bind_blob(s, i, z, n, SQLITE_TRANSIENT);
}
static inline void gv_sqlite3_result_text_copy(sqlite3_context *c, const char *z, int n) {
  sqlite3_result_text(c, z, n, SQLITE_TRANSIENT);
}
static inline void gv_sqlite3_result_blob_copy(sqlite3_context *c, const void *z, int n) {
  sqlite3_result_blob(c, z, n, SQLITE_TRANSIENT);
}

// sqlite3_db_config is variadic, which Swift cannot call: one wrapper for the options that
// take an int and report the setting back.
static inline int gv_sqlite3_db_config_int(sqlite3 *db, int option, int value) {
  int now = -1;
  int rc = sqlite3_db_config(db, option, value, &now);
  return rc == SQLITE_OK ? now : -1;
}

// sqlite3_config is variadic too. Memory statistics cost a global mutex around every
// allocation SQLite makes; nothing here reads them. Must run before SQLite is initialized.
static inline int gv_sqlite3_disable_memory_statistics(void) {
  return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
#endif
