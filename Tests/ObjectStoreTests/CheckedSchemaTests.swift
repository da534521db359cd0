import Foundation
import ObjectModel
import ObjectStore
import SQLite
import TestSupport
import Testing

/// An archived schema is compared with the one the model gets: Core Data's own entries are
/// created from graphvault's text, harmless additions from parsed values, the rest refused.
@Suite("Archived schemas checked against the model")
struct CheckedSchemaTests {
  let model: ObjectModel
  let generated: [CoreDataStore.SchemaObject]

  init() throws {
    model = try LibraryModel.make()
    generated = try StoreSchema(model: model).schemaObjects
  }

  func object(_ sql: String) throws -> CoreDataStore.SchemaObject {
    let statement = try SchemaStatement(parsing: sql)
    return CoreDataStore.SchemaObject(
      type: statement.type, name: statement.name, table: statement.table, sql: sql)
  }

  @Test("the schema the model gets passes as it is, in graphvault's own text")
  func theModelsOwnSchemaPasses() throws {
    let checked = try CheckedSchema(objects: generated, model: model)
    #expect(checked.objects.map(\.sql) == generated.map(\.sql))
    #expect(checked.dropped.isEmpty)
    #expect(checked.snapshot == (try SchemaSnapshot(of: StoreSchema(model: model))))
  }

  @Test("an application's table and an index on its columns pass, rewritten from their values")
  func anApplicationsTablePasses() throws {
    let table = try object(
      "CREATE TABLE APPSETTINGS (KEY TEXT PRIMARY KEY,   VALUE TEXT NOT NULL DEFAULT '')")
    let index = try object("CREATE INDEX APPSETTINGS_VALUE ON APPSETTINGS (VALUE)")
    let checked = try CheckedSchema(objects: generated + [table, index], model: model)
    #expect(
      checked.objects.suffix(2).map(\.sql) == [
        #"CREATE TABLE APPSETTINGS ( "KEY" TEXT PRIMARY KEY, VALUE TEXT NOT NULL DEFAULT '' )"#,
        "CREATE INDEX APPSETTINGS_VALUE ON APPSETTINGS (VALUE)",
      ])
  }

  @Test("a model's table with its columns in another order, or one more plain column, passes")
  func columnOrderAndExtraColumnsPass() throws {
    let objects = try generated.map { object -> CoreDataStore.SchemaObject in
      guard object.name == "ZBOOK" else { return object }
      guard case .table(var table) = try SchemaStatement(parsing: object.sql) else { return object }
      table.columns = [table.columns[0]] + table.columns.dropFirst().reversed()
      table.columns.append(SchemaStatement.Column(name: "ZLEFTOVER", type: "VARCHAR"))
      return CoreDataStore.SchemaObject(
        type: "table", name: "ZBOOK", table: "ZBOOK", sql: SchemaStatement.table(table).sql)
    }
    let checked = try CheckedSchema(objects: objects, model: model)
    let book = try #require(checked.objects.first { $0.name == "ZBOOK" })
    #expect(book.sql == objects.first { $0.name == "ZBOOK" }?.sql)
    #expect(checked.snapshot.tables["ZBOOK"]?.last?.name == "ZLEFTOVER")
  }

  @Test(
    "entries that would run code, reach outside the store or leave the model without a place are refused, naming them",
    arguments: [
      (
        "trigger", "Z_EVIL", "ZBOOK",
        "CREATE TRIGGER Z_EVIL AFTER INSERT ON ZBOOK BEGIN DELETE FROM ZBOOK; END",
        "trigger Z_EVIL: it is not a trigger Core Data makes"
      ),
      ("view", "V", "V", "CREATE VIEW V AS SELECT 1", "a view"),
      (
        "index", "ZBOOK_NOPE", "ZBOOK", "CREATE INDEX ZBOOK_NOPE ON ZBOOK (ZNOPE)",
        "which ZBOOK lacks"
      ),
      ("index", "ORPHAN", "NOWHERE", "CREATE INDEX ORPHAN ON NOWHERE (A)", "not a table before it"),
      (
        "index", "ZBOOK_T", "ZBOOK", "CREATE UNIQUE INDEX ZBOOK_T ON ZBOOK (ZTITLE)",
        "uniqueness constraints"
      ),
      ("table", "sqlite_stat1", "sqlite_stat1", "CREATE TABLE sqlite_stat1 (a)", "SQLite's own"),
      ("table", "APP", "APP", "CREATE TABLE APP (A); DROP TABLE ZBOOK", "after the statement"),
    ])
  func unsafeEntriesAreRefused(
    type: String, name: String, table: String, sql: String, expected: String
  ) throws {
    let added = CoreDataStore.SchemaObject(type: type, name: name, table: table, sql: sql)
    #expect {
      try CheckedSchema(objects: generated + [added], model: model)
    } throws: { error in
      "\(error)".contains(expected)
    }
    // Asked to, the check leaves the entry out and says so.
    let lenient = try CheckedSchema(
      objects: generated + [added], model: model, leavingOutUnsafe: true)
    #expect(lenient.objects.count == generated.count)
    #expect(lenient.dropped.count == 1 && lenient.dropped.first?.contains(expected) == true)
  }

  /// The model's schema with table `name` created by `sql` instead.
  func replacing(_ name: String, with sql: String) -> [CoreDataStore.SchemaObject] {
    generated.map { object in
      object.name == name
        ? CoreDataStore.SchemaObject(type: "table", name: name, table: name, sql: sql) : object
    }
  }

  @Test(
    "a table of the model that lacks a column, or whose key is not Z_PK, is refused",
    arguments: [
      (
        "ZBOOK", "CREATE TABLE ZBOOK ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER )",
        "table ZBOOK: it lacks column"
      ),
      (
        "ZTAG", "CREATE TABLE ZTAG ( Z_PK INTEGER, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR )",
        "table ZTAG: its column Z_PK is not the primary key"
      ),
    ])
  func aModelTableWithoutItsColumnsIsRefused(table: String, sql: String, expected: String)
    throws
  {
    #expect {
      try CheckedSchema(objects: replacing(table, with: sql), model: model)
    } throws: { error in
      "\(error)".contains(expected)
    }
  }

  @Test("a table the model needs that is missing is refused, naming it")
  func aMissingModelTableIsRefused() throws {
    #expect {
      try CheckedSchema(objects: generated.filter { $0.table != "ZTAG" }, model: model)
    } throws: { error in
      "\(error)".contains("table ZTAG, which the model needs, is missing")
    }
  }

  @Test("an entry whose SQL creates something other than its name and type say is refused")
  func anEntryThatLiesAboutItselfIsRefused() throws {
    let lying = CoreDataStore.SchemaObject(
      type: "index", name: "ZBOOK_ZAUTHOR_INDEX", table: "ZBOOK",
      sql: "CREATE TABLE OTHER (A)")
    #expect {
      try CheckedSchema(
        objects: generated.filter { $0.name != "ZBOOK_ZAUTHOR_INDEX" } + [lying], model: model)
    } throws: { error in
      "\(error)".contains("its SQL creates table OTHER")
    }
  }
}
