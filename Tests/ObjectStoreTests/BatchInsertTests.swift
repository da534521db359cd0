import Foundation
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// A batch insert (Core Data's `NSBatchInsertRequest`) writes rows straight into the store:
/// the rows a save of the same objects writes, checked as a save checks them, in one
/// transaction that writes nothing when any row fails.
@Suite("Batch inserts")
struct BatchInsertTests {
  let directory: TemporaryDirectory
  let path: String
  let model: ObjectModel

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Library.sqlite").path
    model = try LibraryModel.make()
    try StoreCreator.create(at: path, model: model)
  }

  /// A fresh empty store of the library model, with persistent history when asked.
  func emptyStore(_ name: String, history: Bool = false) throws -> String {
    let store = directory.path(name).path
    var options = StoreCreator.Options()
    options.persistentHistory = history
    try StoreCreator.create(at: store, model: model, options: options)
    return store
  }

  /// Book `number`'s values, set through `set` (a batch row's or an object's `setValue`).
  static func fill(_ number: Int, _ set: (AttributeValue?, String) throws -> Void) throws {
    try set(.string("Book \(number)"), "title")
    try set(.double(2.5 + Double(number % 5) / 2), "rating")
    try set(.integer(Int64(number % 7 + 1)), "edition")
    try set(.date(700_000_000 + Double(number)), "publishedAt")
    try set(.decimal("9.99"), "price")
    if number.isMultiple(of: 3) { try set(nil, "inPrint") }
  }

  static let books = "SELECT * FROM ZBOOK ORDER BY Z_PK"
  static let keys = "SELECT Z_NAME, Z_MAX FROM Z_PRIMARYKEY ORDER BY Z_ENT"

  @Test func rowsAreWrittenAsASaveOfTheSameObjectsWritesThem() throws {
    let saved = try emptyStore("saved.sqlite")
    let context = try ObjectContext(storePath: saved, model: model)
    for number in 0..<500 {
      let book = try context.insert("Book")
      try Self.fill(number) { try book.setValue($0, for: $1) }
    }
    try context.save()

    let batched = try emptyStore("batched.sqlite")
    let batch = try ObjectContext(storePath: batched, model: model)
    var number = 0
    let result = try batch.execute(
      BatchInsertRequest(entity: "Book") { row in
        guard number < 500 else { return true }
        try Self.fill(number) { try row.setValue($0, for: $1) }
        number += 1
        return false
      })
    #expect(result.inserted == 500 && result.updated == 0 && result.objects == nil)
    #expect(try sqlRows(batched, Self.books) == sqlRows(saved, Self.books))
    #expect(try sqlRows(batched, Self.keys) == sqlRows(saved, Self.keys))
    #expect(
      try sqlRows(batched, "SELECT count(*), min(Z_OPT), max(Z_OPT) FROM ZBOOK") == ["500|1|1"])
    // The defaults of what a row leaves unset: inPrint's true, unless emptied.
    #expect(
      try sqlRows(batched, "SELECT ZINPRINT IS NULL, count(*) FROM ZBOOK GROUP BY 1")
        == ["0|333", "1|167"])
  }

  @Test func typedValuesConvertAsOnAnObjectAndObjectsComeBackInRowOrder() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let id = UUID()
    var request = BatchInsertRequest(entity: "GraphicNovel") { row in
      guard row.index < 3 else { return true }
      try row.setValue("Novel \(row.index)", for: "title")
      try row.setValue(Int32(row.index + 1), for: "edition")
      try row.setValue(id, for: "uniqueID")
      try row.setValue(Decimal(string: "1.5"), for: "price")
      try row.setValue(true, for: "isBlackAndWhite")
      return false
    }
    request.resultType = .objectReferences
    let result = try context.execute(request)
    #expect(result.objects?.map(\.entity) == ["GraphicNovel", "GraphicNovel", "GraphicNovel"])
    #expect(result.objects?.map(\.primaryKey) == [1, 2, 3])
    let novels = try context.fetch(FetchRequest(entity: "GraphicNovel"))
    #expect(
      try novels.map { try $0.value(for: "title", as: String.self) } == [
        "Novel 0", "Novel 1", "Novel 2",
      ])
    #expect(try novels.map { try $0.value(for: "edition", as: Int32.self) } == [1, 2, 3])
    #expect(try novels.first?.value(for: "uniqueID", as: UUID.self) == id)
    #expect(try novels.first?.value(for: "price", as: Decimal.self) == Decimal(string: "1.5"))
    // The context's own inserts take keys after the batch's.
    let book = try context.insert("Book")
    try book.setValue("After", for: "title")
    try context.save()
    #expect(book.primaryKey == 4)
  }

  @Test func aTransformableValueIsStoredThroughItsTransformer() throws {
    let context = try ObjectContext(storePath: path, model: model)
    try context.execute(
      BatchInsertRequest(entity: "Book") { row in
        guard row.index < 2 else { return true }
        try row.setValue("Book \(row.index)", for: "title")
        if row.index == 0 {
          try row.setValue("teal", for: "color")
        } else {
          try row.setTransformedValue("plum", for: "color")
        }
        return false
      })
    let books = try context.fetch(
      FetchRequest(entity: "Book", sortDescriptors: [SortDescriptor("title")]))
    #expect(
      try books.map { try $0.transformedValue(for: "color", as: String.self) } == [
        "teal", "plum",
      ])
    #expect(throws: StoreError.self) {
      try context.execute(
        BatchInsertRequest(entity: "Book") { row in
          try row.setTransformedValue("x", for: "title")
          return true
        })
    }
  }

  @Test func keysAddedByAnotherWriterSinceTheContextCountedAreNotHandedOutAgain() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let first = try context.insert("Tag")
    try context.save()
    #expect(first.primaryKey == 1)
    // Another writer adds tag 2 (and moves the counter) behind the context's back.
    try sqlScript(
      path,
      "INSERT INTO ZTAG (Z_PK, Z_ENT, Z_OPT, ZNAME) SELECT 2, Z_ENT, 1, 'theirs' FROM Z_PRIMARYKEY WHERE Z_NAME = 'Tag'; UPDATE Z_PRIMARYKEY SET Z_MAX = 2 WHERE Z_NAME = 'Tag';"
    )
    var request = BatchInsertRequest(entity: "Tag", objects: [["name": .string("mine")]])
    request.resultType = .objectReferences
    #expect(try context.execute(request).objects?.map(\.primaryKey) == [3])
    #expect(try context.insert("Tag").primaryKey == 4)
  }

  @Test func theDictionaryFormWritesEachDictionary() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let request = BatchInsertRequest(
      entity: "Tag", objects: [["name": .string("sci-fi")], ["name": .string("poetry")], [:]])
    let result = try context.execute(request)
    #expect(result.inserted == 3)
    #expect(
      try sqlRows(path, "SELECT Z_PK, ZNAME FROM ZTAG ORDER BY Z_PK") == [
        "1|sci-fi", "2|poetry", "3|None",
      ])
    // Executed again, the same request inserts the same objects again.
    #expect(try context.execute(request).inserted == 3)
    #expect(try sqlRows(path, "SELECT count(*) FROM ZTAG") == ["6"])
  }

  /// Runs `request` expecting a failure of `kind`, then checks nothing was written and that
  /// the context's next key is still 1. Returns the failure's message.
  func failure(_ request: BatchInsertRequest, _ kind: StoreError.Kind) throws -> String {
    let context = try ObjectContext(storePath: path, model: model)
    var message = ""
    do {
      try context.execute(request)
      Issue.record("the batch insert did not fail")
    } catch {
      #expect(error.kind == kind, "\(error)")
      message = "\(error)"
    }
    #expect(try sqlRows(path, "SELECT count(*) FROM ZBOOK") == ["0"])
    #expect(try sqlRows(path, "SELECT Z_MAX FROM Z_PRIMARYKEY WHERE Z_NAME = 'Book'") == ["0"])
    let book = try context.insert("Book")
    #expect(book.primaryKey == 1)
    return message
  }

  /// A request of two good books, then one that `spoil` makes bad.
  static func spoiled(_ spoil: @escaping (inout BatchInsertRow) throws -> Void)
    -> BatchInsertRequest
  {
    BatchInsertRequest(entity: "Book") { row in
      guard row.index < 3 else { return true }
      try row.setValue("Book \(row.index)", for: "title")
      if row.index == 2 { try spoil(&row) }
      return false
    }
  }

  @Test func aRowLeavingARequiredAttributeEmptyFailsNamingItAndWritesNothing() throws {
    let message = try failure(Self.spoiled { try $0.setValue(nil, for: "title") }, .validation)
    #expect(message.contains("Book row 2: title is required"))
  }

  @Test(arguments: [
    ("author", "is a relationship"), ("pagesCount", "is derived"), ("scratch", "is transient"),
    ("subtitle", "has no attribute subtitle"), ("edition", "does not convert"),
  ])
  func aValueABatchCannotWriteFailsNamingTheKeyAndTheRow(key: String, problem: String) throws {
    let message = try failure(
      Self.spoiled { try $0.setValue("x", for: key) }, .invalidValue)
    #expect(message.contains(problem), "\(message)")
    #expect(message.contains("(row 2)"), "\(message)")
  }

  @Test func aStoredValueOfTheWrongKindIsRefused() throws {
    let message = try failure(
      Self.spoiled { try $0.setValue(.string("soon"), for: "publishedAt") }, .invalidValue)
    #expect(message.contains("Book.publishedAt is Date"), "\(message)")
  }

  @Test func whatTheHandlerThrowsFailsTheBatch() throws {
    struct Broken: Error, CustomStringConvertible { var description: String { "feed broken" } }
    let message = try failure(Self.spoiled { _ in throw Broken() }, .invalidValue)
    #expect(message.contains("handler failed at row 2: feed broken"), "\(message)")
  }

  @Test func aReadOnlyContextRefusesABatch() throws {
    let context = try ObjectContext(storePath: path, model: model, readOnly: true)
    #expect(throws: StoreError.self) {
      try context.execute(BatchInsertRequest(entity: "Tag", objects: [[:]]))
    }
    #expect(throws: StoreError.self) {
      try ObjectContext(storePath: path, model: model).execute(
        BatchInsertRequest(entity: "Writer", objects: [["alias": .string("x")]]))
    }
  }

  // MARK: Uniqueness constraints

  /// The store with author ann, aged 50, and a batch of authors ann (age emptied), bo and
  /// bo again, run under `policy`; the store's authors after it.
  func authors(under policy: ObjectContext.MergePolicy) throws -> (BatchInsertResult, [String]) {
    let setup = try ObjectContext(storePath: path, model: model)
    let ann = try setup.insert("Author")
    try ann.setValue(.string("ann"), for: "alias")
    try ann.setValue(.integer(50), for: "age")
    try setup.save()
    let context = try ObjectContext(storePath: path, model: model)
    context.mergePolicy = policy
    var request = BatchInsertRequest(
      entity: "Author",
      objects: [
        ["alias": .string("ann")], ["alias": .string("bo"), "age": .integer(20)],
        ["alias": .string("bo"), "age": .integer(21)],
      ])
    request.resultType = .objectReferences
    let result = try context.execute(request)
    return (
      result,
      try sqlRows(path, "SELECT Z_PK, ZALIAS, ifnull(ZAGE, '-'), Z_OPT FROM ZWRITER ORDER BY Z_PK")
    )
  }

  @Test func underMergeByKeyARowHoldingAnObjectsConstraintValuesUpdatesIt() throws {
    let (result, rows) = try authors(under: .mergeByKey)
    #expect(result.inserted == 1)
    #expect(result.updated == 2)
    #expect(result.objects?.map(\.primaryKey) == [1, 2, 2])
    // ann takes the row's default age (30); bo, inserted by the batch, the later row's age.
    #expect(rows == ["1|ann|30|2", "2|bo|21|1"])
  }

  @Test func underStoreWinsTheStoredObjectKeepsItsValues() throws {
    let (result, rows) = try authors(under: .storeWins)
    #expect(result.updated == 2)
    #expect(rows == ["1|ann|50|2", "2|bo|20|1"])
  }

  /// With the constraint's unique index, SQLite refuses the row and the conflict is named
  /// then; without it (a store whose app dropped it), each row is looked up first.
  @Test(arguments: [true, false])
  func underErrorAConflictNamesTheRowTheConstraintAndTheStoredObject(indexed: Bool) throws {
    let unique = try sqlRows(
      path, "SELECT name FROM sqlite_master WHERE tbl_name = 'ZWRITER' AND sql LIKE '%UNIQUE%'")
    #expect(unique.count == 1)
    if !indexed { try sqlScript(path, unique.map { "DROP INDEX \"\($0)\";" }.joined()) }
    var conflict: ConstraintConflict?
    do {
      _ = try authors(under: .error)
    } catch let error as StoreError {
      #expect(error.kind == .constraintConflict)
      #expect("\(error)".contains("row 0 of the batch"))
      conflict = error.constraintConflict
    }
    let found = try #require(conflict)
    #expect(found.entity == "Writer")
    #expect(found.attributes == ["alias"])
    #expect(found.conflictingObject == ObjectReference(entity: "Author", primaryKey: 1))
    #expect(found.isStored)
    #expect(try sqlRows(path, "SELECT ZALIAS, ZAGE, Z_OPT FROM ZWRITER") == ["ann|50|1"])
  }

  @Test func anEmptiedValueIsWrittenOverOnlyWhereTheRowWins() throws {
    let setup = try ObjectContext(storePath: path, model: model)
    let ann = try setup.insert("Author")
    try ann.setValue(.string("ann"), for: "alias")
    try setup.save()
    for (policy, age) in [(ObjectContext.MergePolicy.mergeByKey, "30"), (.objectWins, "-")] {
      let context = try ObjectContext(storePath: path, model: model)
      context.mergePolicy = policy
      try context.execute(
        BatchInsertRequest(entity: "Author") { row in
          guard row.index == 0 else { return true }
          try row.setValue("ann", for: "alias")
          try row.setValue(nil as Int16?, for: "age")
          return false
        })
      #expect(try sqlRows(path, "SELECT ifnull(ZAGE, '-') FROM ZWRITER") == [age])
      #expect(try sqlRows(path, "SELECT count(*) FROM ZWRITER") == ["1"])
    }
  }

  // MARK: History

  @Test func aStoreKeepingHistoryRecordsTheBatchAsOneTransaction() throws {
    let store = try emptyStore("history.sqlite", history: true)
    let context = try ObjectContext(storePath: store, model: model)
    context.transactionAuthor = "importer"
    try context.execute(
      BatchInsertRequest(
        entity: "Tag", objects: (0..<4).map { ["name": .string("tag \($0)")] }))
    #expect(try sqlRows(store, "SELECT count(*) FROM ATRANSACTION") == ["1"])
    #expect(
      try sqlRows(
        store,
        "SELECT ZCHANGETYPE, ZENTITYPK FROM ACHANGE JOIN Z_PRIMARYKEY ON Z_PRIMARYKEY.Z_ENT = ZENTITY WHERE Z_NAME = 'Tag' ORDER BY ZENTITYPK"
      ) == ["0|1", "0|2", "0|3", "0|4"])
    #expect(
      try sqlRows(
        store,
        "SELECT ZNAME FROM ATRANSACTIONSTRING JOIN ATRANSACTION ON ZAUTHORTS = ATRANSACTIONSTRING.Z_PK"
      ) == ["importer"])
    // An empty batch records nothing.
    try context.execute(BatchInsertRequest(entity: "Tag", objects: []))
    #expect(try sqlRows(store, "SELECT count(*) FROM ATRANSACTION") == ["1"])
  }
}
