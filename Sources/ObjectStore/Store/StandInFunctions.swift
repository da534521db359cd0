import SQLite

/// Stand-ins for the SQL functions Core Data registers at run time and its derived-attribute
/// triggers call; without them, inserting into such a table fails with "no such function".
enum StandInFunctions {
  static let names = [
    "NSCoreDataDATriggerUpdatedAffectedObjectValue",
    "NSCoreDataDATriggerInsertUpdatedAffectedObjectValue",
  ]

  static func register(on database: Database) throws(SQLiteError) {
    for name in names {
      try database.createFunction(name, innocuous: true) { _ in .null }
    }
  }
}
