import Foundation
import SQLite

extension ObjectContext {
  /// The entity numbers of Core Data's persistent-history entities.
  private enum HistoryEntity {
    static let change: Int64 = 16001
    static let transaction: Int64 = 16002
    static let string: Int64 = 16003
  }

  /// What a change is, as persistent history records it: 0 insert, 1 update, 2 delete.
  enum HistoryChange: Int64 {
    case insert = 0
    case update = 1
    case delete = 2
  }

  /// One persistent-history transaction being recorded: its `ATRANSACTION` row is written
  /// with the first change, an `ACHANGE` row with each, and the keys' counters at the end.
  final class HistoryRecorder {
    private let context: ObjectContext
    private let db: Database
    private var transaction: Int64 = 0
    private var change: Int64 = 0
    private var insertChange: Statement?

    init(_ context: ObjectContext, _ db: Database) {
      self.context = context
      self.db = db
    }

    /// Records one change (the first one writes the transaction's row).
    func record(_ type: HistoryChange, _ reference: ObjectReference) throws {
      let insert = try insertChange ?? begin()
      try insert.bind([
        .integer(change), .integer(HistoryEntity.change), .integer(type.rawValue),
        .integer(Int64(context.layout.entityNumbers[reference.entity] ?? 0)),
        .integer(reference.primaryKey), .integer(transaction),
      ])
      try insert.run()
      change += 1
    }

    /// Moves the history tables' key counters past what was recorded (nothing when no change
    /// was).
    func finish() throws {
      guard insertChange != nil else { return }
      try context.setHistoryMax(HistoryEntity.change, change - 1, name: "CHANGE", db)
      try context.setHistoryMax(HistoryEntity.transaction, transaction, name: "TRANSACTION", db)
    }

    /// Writes the transaction's row: its timestamp, and the author, context name and process
    /// name as `ATRANSACTIONSTRING` keys.
    private func begin() throws -> Statement {
      let author = context.transactionAuthor
      let name = context.name
      let process = ProcessInfo.processInfo.processName
      let strings = try context.historyStringKeys([author, name, process].compactMap { $0 }, db)
      transaction = try context.nextHistoryKey(
        HistoryEntity.transaction, table: "ATRANSACTION", db)
      let insertTransaction = try db.prepare(
        """
        INSERT INTO ATRANSACTION (Z_PK, Z_ENT, ZAUTHORTS, ZCONTEXTNAMETS, ZPROCESSIDTS, ZTIMESTAMP)
        VALUES (?, ?, ?, ?, ?, ?)
        """)
      try insertTransaction.bind([
        .integer(transaction), .integer(HistoryEntity.transaction),
        author.flatMap { strings[$0] }.map(SQLiteValue.integer) ?? .null,
        name.flatMap { strings[$0] }.map(SQLiteValue.integer) ?? .null,
        strings[process].map(SQLiteValue.integer) ?? .null,
        .real(Date().timeIntervalSinceReferenceDate),
      ])
      try insertTransaction.run()
      change = try context.nextHistoryKey(HistoryEntity.change, table: "ACHANGE", db)
      let statement = try db.prepare(
        """
        INSERT INTO ACHANGE (Z_PK, Z_ENT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID)
        VALUES (?, ?, ?, ?, ?, ?)
        """)
      insertChange = statement
      return statement
    }
  }

  /// Records the pending changes as one persistent-history transaction, as a Core Data save on
  /// a store with history tracking does: an `ATRANSACTION` row (timestamp, and the author,
  /// context name and process name as `ATRANSACTIONSTRING` keys) and an `ACHANGE` row per
  /// inserted, updated and deleted object. Updates record no changed-column set (`ZCOLUMNS`
  /// NULL): Core Data's bit vector is not reproduced.
  func writeHistory(_ db: Database) throws {
    guard recordsHistory else { return }
    let recorder = HistoryRecorder(self, db)
    for reference in inserted.sorted(by: Self.stableOrder) {
      try recorder.record(.insert, reference)
    }
    for reference in updated.subtracting(inserted).subtracting(deleted).sorted(by: Self.stableOrder)
    {
      try recorder.record(.update, reference)
    }
    for reference in deleted.sorted(by: Self.stableOrder) {
      try recorder.record(.delete, reference)
    }
    try recorder.finish()
  }

  /// The `ATRANSACTIONSTRING` key of each name, adding the names the table lacks.
  fileprivate func historyStringKeys(_ names: [String], _ db: Database) throws -> [String: Int64] {
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
  fileprivate func nextHistoryKey(_ entity: Int64, table: String, _ db: Database) throws -> Int64 {
    let statement = try db.prepare(
      "SELECT max(coalesce((SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_ENT = ?), 0), coalesce((SELECT max(Z_PK) FROM \(table)), 0))"
    )
    try statement.bind(.integer(entity), at: 1)
    return (try statement.allRows().first?.first?.integerValue ?? 0) + 1
  }

  /// Sets a history entity's `Z_MAX`, adding its `Z_PRIMARYKEY` row when the store lacks it.
  fileprivate func setHistoryMax(_ entity: Int64, _ key: Int64, name: String, _ db: Database) throws
  {
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
