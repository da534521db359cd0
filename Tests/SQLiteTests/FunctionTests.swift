import SQLite
import TestSupport
import Testing

@Suite("Custom SQL functions")
struct FunctionTests {
  @Test func aRegisteredFunctionIsCalledWithItsArguments() throws {
    let directory = try TemporaryDirectory()
    let db = try Database(path: directory.path("f.sqlite").path, mode: .readWriteCreate)
    try db.createFunction("describe_args", deterministic: true) { arguments in
      .text(
        (0..<arguments.countOfArguments).map { arguments[$0].description }.joined(separator: ","))
    }
    let result = try db.prepare("SELECT describe_args(1, 2.5, 'x', x'00ff', NULL)").scalar()
    #expect(result == .text("1,2.5,'x',<blob 2 bytes>,NULL"))
  }

  @Test func aFunctionErrorFailsTheStatementWithItsMessage() throws {
    let directory = try TemporaryDirectory()
    let db = try Database(path: directory.path("f.sqlite").path, mode: .readWriteCreate)
    try db.createFunction("refuse", argumentCount: 0) { _ throws(FunctionError) in
      throw FunctionError("refused on purpose")
    }
    do {
      _ = try db.prepare("SELECT refuse()").scalar()
      Issue.record("expected an error")
    } catch {
      #expect(error.message == "refused on purpose")
    }
  }

  @Test func triggersThatCallCoreDatasRuntimeFunctionsRunWithStandIns() throws {
    // Core Data's derived-attribute triggers call functions registered at run time; without
    // stand-ins, an insert fails with "no such function".
    let directory = try TemporaryDirectory()
    let path = directory.path("trigger.sqlite").path
    let setup = try Database(path: path, mode: .readWriteCreate)
    try setup.executeScript(
      """
      CREATE TABLE ZPAGE (Z_PK INTEGER PRIMARY KEY, ZBOOK INTEGER);
      CREATE TRIGGER Z_DA_ZPAGE_INSERT AFTER INSERT ON ZPAGE FOR EACH ROW BEGIN
        SELECT NSCoreDataDATriggerUpdatedAffectedObjectValue('ZBOOK', 1, NEW.ZBOOK, 'ZPAGESCOUNT', 1);
      END;
      """)
    #expect(throws: SQLiteError.self) { try setup.execute("INSERT INTO ZPAGE VALUES (1, 1)") }

    let db = try Database(path: path, mode: .readWrite)
    var calls = 0
    try db.createFunction("NSCoreDataDATriggerUpdatedAffectedObjectValue") { _ in
      calls += 1
      return .null
    }
    try db.execute("INSERT INTO ZPAGE VALUES (1, 1)")
    #expect(calls == 1)
  }
}
