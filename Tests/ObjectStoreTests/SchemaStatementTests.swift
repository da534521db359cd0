import Foundation
import ObjectModel
import ObjectStore
import SQLite
import TestSupport
import Testing

/// Schema text is data: read into values in a small grammar, written back by graphvault, and
/// everything outside the grammar refused.
@Suite("Schema statements read as data")
struct SchemaStatementTests {
  /// The schema SQLite itself reports for `statements` run in a fresh in-memory database.
  static func sqliteSnapshot(_ statements: [String]) throws -> SchemaSnapshot {
    let db = try Database(path: ":memory:", mode: .readWriteCreate)
    for statement in statements { try db.execute(statement) }
    return try SchemaSnapshot(db)
  }

  @Test(
    "every table and index of every real Core Data store reads, and its rewrite makes what SQLite made of the original",
    .enabled(if: SharedFixtures.isAvailable, SharedFixtures.skipNote))
  func coreDatasOwnSchemaRoundTrips() throws {
    for store in SharedFixtures.files(endingWith: ".sqlite") {
      let directory = try TemporaryDirectory()
      let copy = try SharedFixtures.copyStore(
        String(store.path.dropFirst(SharedFixtures.coreDataRoot.path.count + 1)),
        into: directory.url)
      let db = try Database(path: copy.path, mode: .readOnly)
      let texts = try db.prepare(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND type IN ('table', 'index') ORDER BY rowid"
      ).allRows().compactMap { $0[0].textValue }
      let rewritten = try texts.map { try SchemaStatement(parsing: $0).sql }
      #expect(
        try Self.sqliteSnapshot(rewritten) == Self.sqliteSnapshot(texts),
        "\(store.lastPathComponent)")
      for (text, again) in zip(texts, rewritten) where text.hasPrefix("CREATE TABLE Z") {
        // Core Data's entity tables are written back to the letter, but for its bookkeeping
        // tables' spacing.
        if !text.contains("Z_PRIMARYKEY") && !text.contains("Z_METADATA")
          && !text.contains("Z_MODELCACHE")
        {
          #expect(again == text)
        }
      }
    }
  }

  @Test("a table's columns, types, keys, defaults and collations read back as SQLite reads them")
  func anApplicationsTableReadsBack() throws {
    let text = """
      CREATE TABLE IF NOT EXISTS "order" (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        [group name] VARCHAR(255) NOT NULL DEFAULT 'it''s' COLLATE nocase,
        amount DECIMAL(10, 2) DEFAULT -1.5e3, -- a comment
        flag BOOLEAN DEFAULT TRUE UNIQUE, "blob" BLOB /* another */,
        UNIQUE (amount, flag)
      )
      """
    let statement = try SchemaStatement(parsing: text)
    guard case .table(let table) = statement else {
      Issue.record("not a table")
      return
    }
    #expect(table.name == "order")
    #expect(table.columns.map(\.name) == ["id", "group name", "amount", "flag", "blob"])
    #expect(
      table.columns.map(\.type) == ["INTEGER", "VARCHAR(255)", "DECIMAL(10, 2)", "BOOLEAN", "BLOB"])
    #expect(table.column(named: "GROUP NAME")?.defaultValue == "'it''s'")
    #expect(table.column(named: "group name")?.collation == "NOCASE")
    #expect(
      statement.sql.hasPrefix(
        #"CREATE TABLE "order" ( id INTEGER PRIMARY KEY AUTOINCREMENT, "group name""#))
    #expect(try Self.sqliteSnapshot([statement.sql]) == Self.sqliteSnapshot([text]))
    #expect(try SchemaStatement(parsing: statement.sql) == statement)
  }

  @Test(
    "text that is not a plain CREATE TABLE, INDEX or TRIGGER is refused, naming what is wrong",
    arguments: [
      ("CREATE TABLE t (a); DROP TABLE other", "after the statement"),
      ("CREATE TABLE t (a); ATTACH DATABASE 'x.db' AS x", "after the statement"),
      ("ATTACH DATABASE 'other.db' AS v", "expected CREATE"),
      ("CREATE TABLE v.t (a)", "not this database"),
      ("CREATE TEMP TABLE t (a)", "temporary"),
      ("CREATE VIEW v AS SELECT 1", "view"),
      ("CREATE VIRTUAL TABLE t USING fts5(a)", "view or virtual table"),
      ("CREATE TABLE t AS SELECT * FROM sqlite_master", "query"),
      ("CREATE TABLE t (a CHECK (a > 0))", "refused"),
      ("CREATE TABLE t (a, CHECK (load_extension('x')))", "CHECK"),
      ("CREATE TABLE t (a DEFAULT (random()))", "literal"),
      ("CREATE TABLE t (a GENERATED ALWAYS AS (1))", "refused"),
      ("CREATE TABLE t (a REFERENCES u (b) ON DELETE CASCADE)", "refused"),
      ("CREATE TABLE t (a, FOREIGN KEY (a) REFERENCES u (b))", "FOREIGN"),
      ("CREATE TABLE t (a) WITHOUT ROWID", "WITHOUT"),
      ("CREATE TABLE t (a COLLATE evil)", "collation"),
      ("CREATE INDEX i ON t (lower(a))", "columns only"),
      ("CREATE INDEX i ON t (a) WHERE a > 0", "partial"),
      ("CREATE TABLE t (a INTEGER, a TEXT)", "twice"),
      ("CREATE TABLE t (a, PRIMARY KEY (b))", "lacks"),
      ("CREATE TABLE t (a \u{0}x)", "unexpected character"),
      ("CREATE TABLE t (a 'unclosed)", "not closed"),
      ("SELECT 1", "expected CREATE"),
      ("CREATE PROCEDURE p", "not a CREATE TABLE"),
    ])
  func unsafeTextIsRefused(text: String, expected: String) throws {
    #expect {
      try SchemaStatement(parsing: text)
    } throws: { error in
      "\(error)".contains(expected)
    }
  }

  @Test("names that are keywords or not plain identifiers are written quoted")
  func oddNamesAreQuoted() throws {
    #expect(SchemaStatement.quote("ZBOOK") == "ZBOOK")
    #expect(SchemaStatement.quote("order") == "\"order\"")
    #expect(SchemaStatement.quote("a b") == "\"a b\"")
    #expect(SchemaStatement.quote("x\"y") == "\"x\"\"y\"")
    #expect(SchemaStatement.quote("1st") == "\"1st\"")
    let index = try SchemaStatement(
      parsing: #"CREATE UNIQUE INDEX "select" ON "order" ("from" DESC)"#)
    #expect(index.sql == #"CREATE UNIQUE INDEX "select" ON "order" ("from" DESC)"#)
  }

  @Test("a trigger is kept as its text, with its name and table, and never parsed further")
  func aTriggerIsKeptAsText() throws {
    let statement = try SchemaStatement(
      parsing:
        "CREATE TRIGGER t1 AFTER INSERT ON ZBOOK FOR EACH ROW BEGIN\n  DELETE FROM ZPAGE; END")
    #expect(
      statement
        == .trigger(
          name: "t1", table: "ZBOOK",
          text: "CREATE TRIGGER t1 AFTER INSERT ON ZBOOK FOR EACH ROW BEGIN DELETE FROM ZPAGE; END")
    )
  }
}
