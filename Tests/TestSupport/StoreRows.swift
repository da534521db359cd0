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
