import Foundation
import SQLite

extension ObjectContext {
  /// The entity numbers of Core Data's persistent-history entities.
  private enum HistoryEntity {
    static let change: Int64 = 16001
    static let transaction: Int64 = 16002
    static let string: Int64 = 16003
  }

  /// What a save changes, as persistent history records it: 0 insert, 1 update, 2 delete.
  private enum ChangeType: Int64 {
    case insert = 0
    case update = 1
    case delete = 2
  }

  /// Records the pending changes as one persistent-history transaction, as a Core Data save on
  /// a store with history tracking does: an `ATRANSACTION` row (timestamp, and the author,
  /// context name and process name as `ATRANSACTIONSTRING` keys) and an `ACHANGE` row per
  /// inserted, updated and deleted object. Updates record no changed-column set (`ZCOLUMNS`
  /// NULL): Core Data's bit vector is not reproduced.
  func writeHistory(_ db: Database) throws {
    guard recordsHistory else { return }
    var changes: [(ChangeType, ObjectReference)] = []
    for reference in inserted.sorted(by: Self.stableOrder) { changes.append((.insert, reference)) }
    for reference in updated.subtracting(inserted).subtracting(deleted).sorted(by: Self.stableOrder)
    {
      changes.append((.update, reference))
    }
    for reference in deleted.sorted(by: Self.stableOrder) { changes.append((.delete, reference)) }
    guard !changes.isEmpty else { return }
    let strings = try historyStringKeys(
      [transactionAuthor, name, ProcessInfo.processInfo.processName].compactMap { $0 }, db)
    let transaction = try nextHistoryKey(HistoryEntity.transaction, table: "ATRANSACTION", db)
    let insertTransaction = try db.prepare(
      """
      INSERT INTO ATRANSACTION (Z_PK, Z_ENT, ZAUTHORTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP)
      VALUES (?, ?, ?, ?, ?, ?)
      """)
    try insertTransaction.bind([
      .integer(transaction), .integer(HistoryEntity.transaction),
      transactionAuthor.flatMap { strings[$0] }.map(SQLiteValue.integer) ?? .null,
      name.flatMap { strings[$0] }.map(SQLiteValue.integer) ?? .null,
      strings[ProcessInfo.processInfo.processName].map(SQLiteValue.integer) ?? .null,
      .real(Date().timeIntervalSinceReferenceDate),
    ])
    try insertTransaction.run()
    var change = try nextHistoryKey(HistoryEntity.change, table: "ACHANGE", db)
    let insertChange = try db.prepare(
      """
      INSERT INTO ACHANGE (Z_PK, Z_ENT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID)
      VALUES (?, ?, ?, ?, ?, ?)
      """)
    for (type, reference) in changes {
      try insertChange.bind([
        .integer(change), .integer(HistoryEntity.change), .integer(type.rawValue),
        .integer(Int64(layout.entityNumbers[reference.entity] ?? 0)),
        .integer(reference.primaryKey), .integer(transaction),
      ])
      try insertChange.run()
      change += 1
    }
    try setHistoryMax(HistoryEntity.change, change - 1, name: "CHANGE", db)
    try setHistoryMax(HistoryEntity.transaction, transaction, name: "TRANSACTION", db)
  }

  /// The `ATRANSACTIONSTRING` key of each name, adding the names the table lacks.
  private func historyStringKeys(_ names: [String], _ db: Database) throws -> [String: Int64] {
    var keys: [String: Int64] = [:]
    let find = try db.prepare("SELECT Z_PK FROM ATRANSACTIONSTRING WHERE ZNAME = ?")
    let add = try db.prepare("INSERT INTO ATRANSACTIONSTRING (Z_PK, Z_ENT, ZNAME) VALUES (?, ?, ?)")
    for name in Set(names) {
      try find.bind(.text(name), at: 1)
      if let known = try find.allRows().first?.first?.integerValue {
        keys[name] = known
        continue
      }
      let key = try nextHistoryKey(HistoryEntity.string, table: "ATRANSACTIONSTRING", db)
      try add.bind([.integer(key), .integer(HistoryEntity.string), .text(name)])
      try add.run()
      try setHistoryMax(HistoryEntity.string, key, name: "TRANSACTIONSTRING", db)
      keys[name] = key
    }
    return keys
  }

  /// The next primary key of a history table: past both `Z_PRIMARYKEY`'s `Z_MAX` and the
  /// table's highest key.
  private func nextHistoryKey(_ entity: Int64, table: String, _ db: Database) throws -> Int64 {
    let statement = try db.prepare(
      "SELECT max(coalesce((SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?), 0), coalesce((SELECT max(Z_PK) FROM \(table)), 0))"
    )
    try statement.bind(.integer(entity), at: 1)
    return (try statement.allRows().first?.first?.integerValue ?? 0) + 1
  }

  /// Sets a history entity's `Z_MAX`, adding its `Z_PRIMARYKEY` row when the store lacks it.
  private func setHistoryMax(_ entity: Int64, _ key: Int64, name: String, _ db: Database) throws {
    let update = try db.prepare("UPDATE Z_PRIMARYKEY SET Z_MAX = max(Z_MAX, ?) WHERE Z_ENT = ?")
    try update.bind([.integer(key), .integer(entity)])
    try update.run()
    guard db.changes == 0 else { return }
    let insert = try db.prepare(
      "INSERT INTO Z_PRIMARYKEY (Z_ENT, Z_NAME, Z_SUPER, Z_MAX) VALUES (?, ?, 0, ?)")
    try insert.bind([.integer(entity), .text(name), .integer(key)])
    try insert.run()
  }
}
