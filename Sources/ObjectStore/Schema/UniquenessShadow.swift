import Foundation
import SQLite

/// The values under one entity table's unique indexes, for ``UniquenessCheck``: a table of them
/// in a private temporary database of its own, so that its indexes can be built on another
/// thread (``buildInBackground(on:)``) while the values of other tables are added.
///
/// The thread that owns it (the check's) adds values and waits for the build; the build's
/// thread touches the database only between ``buildInBackground(on:)`` and the end of the
/// wait in ``built()``, when the owner does not.
final class UniquenessShadow: @unchecked Sendable {
  /// The columns kept, in order.
  let columns: [String]
  /// The statement inserting one object's values.
  let insert: Statement
  private let database: Database
  /// The table's unique indexes, as the store declares them.
  private let indexes: [CoreDataStore.SchemaObject]
  /// Left once a build begun in the background has ended.
  private let done = DispatchGroup()
  /// Whether a build has begun (only the owner reads or writes it).
  private(set) var building = false
  /// What the build found: set before `done` is left, read after it is waited for.
  private var failure: StoreError?

  /// A shadow of `table` keeping `columns` (with their declared types) for `indexes`.
  /// - Throws: ``SQLiteError`` when its database cannot be made.
  init(
    table: String, columns: [SchemaStatement.Column], indexes: [CoreDataStore.SchemaObject]
  ) throws(SQLiteError) {
    self.columns = columns.map(\.name)
    self.indexes = indexes
    database = try Database(path: StoreLoader.privateTemporary, mode: .readWriteCreate)
    try database.harden()
    let create = SchemaStatement.table(
      .init(name: table, columns: columns, primaryKey: nil, unique: []))
    try database.execute(create.sql)
    let parameters = Array(repeating: "?", count: columns.count).joined(separator: ", ")
    insert = try database.prepare(
      "INSERT INTO \(SchemaStatement.quote(table)) VALUES (\(parameters))")
    try database.execute("BEGIN")
  }

  /// Begins building the indexes on `queue`, unless a build has begun.
  func buildInBackground(on queue: DispatchQueue) {
    guard !building else { return }
    building = true
    done.enter()
    queue.async { [self] in
      failure = build()
      done.leave()
    }
  }

  /// Builds the indexes now, or waits for the build begun.
  /// - Throws: ``StoreError`` whose underlying ``SQLiteError`` is a constraint failure naming
  ///   the index and its columns, when two objects share the values of a unique index.
  func built() throws(StoreError) {
    if building {
      done.wait()
    } else {
      building = true
      failure = build()
    }
    if let failure { throw failure }
  }

  /// Creates the indexes over the values kept; the error of the first that fails.
  private func build() -> StoreError? {
    for index in indexes {
      do {
        try database.execute(index.sql)
      } catch {
        return StoreError(
          .database, "two objects share the values of unique index \(index.name)",
          underlying: error)
      }
    }
    return nil
  }
}
