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
