import Foundation
import SQLite

/// Every row of every table of an SQLite database, as text, sorted: two stores are equal row
/// for row when these are.
public func storeRows(_ path: String) throws -> [String] {
  let db = try Database(path: path, mode: .readOnly)
  var result: [String] = []
  for table in try db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .allRows().compactMap({ $0[0].textValue })
  {
    for row in try db.prepare("SELECT * FROM \(table)").allRows() {
      result.append(table + ": " + row.map(\.description).joined(separator: ", "))
    }
  }
  return result.sorted()
}

/// The rows `sql` gives in the SQLite database at `path`, read by Python's `sqlite3` (not by
/// graphvault's own SQLite layer), each row one line of `|`-separated values.
public func sqlRows(_ path: String, _ sql: String) throws -> [String] {
  let result = try Subprocess.python(
    "import sqlite3,sys\nfor r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print('|'.join(map(str, r)))",
    [path, sql])
  guard result.status == 0 else {
    throw NSError(
      domain: "sqlRows", code: Int(result.status),
      userInfo: [NSLocalizedDescriptionKey: "\(sql): \(result.stderr)"])
  }
  return result.stdout.split(separator: "\n").map(String.init)
}

/// Runs the SQL statements of `script` on the SQLite database at `path` with Python's
/// `sqlite3` and commits them: a change made as an app (or a person) would, not by graphvault.
public func sqlScript(_ path: String, _ script: String) throws {
  let result = try Subprocess.python(
    "import sqlite3,sys\nc=sqlite3.connect(sys.argv[1])\nc.executescript(sys.argv[2])\nc.commit()",
    [path, script])
  guard result.status == 0 else {
    throw NSError(
      domain: "sqlScript", code: Int(result.status),
      userInfo: [NSLocalizedDescriptionKey: result.stderr])
  }
}

/// Re-creates book `pk` of a sample store under the next free primary key with `changes` (SQL
/// assignments, such as `ZTITLE = 'New'`) applied, its tags and pages moved with it, as an app
/// that deletes an object and inserts it anew would (with SQL, not graphvault).
/// - Returns: the new primary key.
@discardableResult
public func recreateBook(in store: String, _ pk: Int, changes: String = "") throws -> Int {
  let newPK = try Int(sqlRows(store, "SELECT max(Z_PK) + 1 FROM ZBOOK")[0])!
  try sqlScript(
    store,
    """
    CREATE TEMP TABLE moved AS SELECT * FROM ZBOOK WHERE Z_PK = \(pk);
    DELETE FROM ZBOOK WHERE Z_PK = \(pk);
    UPDATE moved SET Z_PK = \(newPK)\(changes.isEmpty ? "" : ", " + changes);
    INSERT INTO ZBOOK SELECT * FROM moved;
    UPDATE Z_1TAGS SET Z_1BOOKS = \(newPK) WHERE Z_1BOOKS = \(pk);
    UPDATE ZPAGE SET ZBOOK = \(newPK) WHERE ZBOOK = \(pk);
    UPDATE Z_PRIMARYKEY SET Z_MAX = \(newPK) WHERE Z_NAME = 'Book';
    DROP TABLE moved;
    """)
  return newPK
}
