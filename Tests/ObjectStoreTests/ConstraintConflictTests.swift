import Foundation
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// A save that breaks a uniqueness constraint fails with a typed conflict naming the entity,
/// the constraint and both objects, as Core Data's `NSConstraintConflict` does, and saves
/// nothing.
@Suite("Uniqueness constraint conflicts")
struct ConstraintConflictTests {
  let directory: TemporaryDirectory
  let path: String
  let model: ObjectModel

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Library.sqlite").path
    model = try LibraryModel.make()
    try StoreCreator.create(at: path, model: model)
    let context = try ObjectContext(storePath: path, model: model)
    let author = try context.insert("Author")
    try author.setValue(.string("ann"), for: "alias")
    try context.save()
  }

  /// The conflict `save` fails with, or nil when it does not fail with one.
  func conflict(saving context: ObjectContext) -> ConstraintConflict? {
    do {
      try context.save()
      return nil
    } catch {
      #expect(error.kind == .constraintConflict, "\(error)")
      return error.constraintConflict
    }
  }

  @Test func anObjectTakingAStoredObjectsValuesNamesBothAndSavesNothing() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let stored = try #require(try context.fetch(FetchRequest(entity: "Author")).first)
    let other = try context.insert("Author")
    try other.setValue(.string("bo"), for: "alias")
    let copy = try context.insert("Author")
    try copy.setValue(.string("ann"), for: "alias")
    let conflict = try #require(self.conflict(saving: context))
    // The constraint is the abstract parent's, inherited.
    #expect(
      conflict
        == ConstraintConflict(
          entity: "Writer", attributes: ["alias"], values: [.string("ann")],
          object: copy.reference, conflictingObject: stored.reference, isStored: true))
    #expect(conflict.description.contains("uniqueness constraint (alias)"))
    #expect(try sqlRows(path, "SELECT ZALIAS FROM ZWRITER ORDER BY 1") == ["ann"])
    // Mended, the same context saves.
    try copy.setValue(.string("cy"), for: "alias")
    try context.save()
    #expect(try sqlRows(path, "SELECT ZALIAS FROM ZWRITER ORDER BY 1") == ["ann", "bo", "cy"])
  }

  @Test func twoObjectsSavedWithTheSameValuesNameEachOther() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let first = try context.insert("Author")
    try first.setValue(.string("dee"), for: "alias")
    let second = try context.insert("Author")
    try second.setValue(.string("dee"), for: "alias")
    let conflict = try #require(self.conflict(saving: context))
    #expect(conflict.isStored == false)
    #expect(
      Set([conflict.object, conflict.conflictingObject]) == [first.reference, second.reference])
    #expect(try sqlRows(path, "SELECT count(*) FROM ZWRITER") == ["1"])
  }

  /// An inserted author with a stored author's alias, and a new book by it, saved under
  /// `policy`; the stored author had age 50 and one book.
  func upsert(
    under policy: ObjectContext.MergePolicy, age: AttributeValue?
  ) throws -> (
    context: ObjectContext, copy: ManagedObject, stored: ManagedObject, book: ManagedObject
  ) {
    let setup = try ObjectContext(storePath: path, model: model)
    let ann = try #require(try setup.fetch(FetchRequest(entity: "Author")).first)
    try ann.setValue(.integer(50), for: "age")
    let old = try setup.insert("Book")
    try old.setValue(.string("Persuasion"), for: "title")
    try old.setObject(ann, for: "author")
    try setup.save()

    let context = try ObjectContext(storePath: path, model: model)
    context.mergePolicy = policy
    let copy = try context.insert("Author")
    try copy.setValue(.string("ann"), for: "alias")
    try copy.setValue(age, for: "age")
    let book = try context.insert("Book")
    try book.setValue(.string("Emma"), for: "title")
    try book.setObject(copy, for: "author")
    try context.save()
    let stored = try #require(try context.fetch(FetchRequest(entity: "Author")).first)
    return (context, copy, stored, book)
  }

  @Test(arguments: [
    (ObjectContext.MergePolicy.mergeByKey, AttributeValue?.some(.integer(41)), "41"),
    (.mergeByKey, nil, "50"), (.objectWins, .integer(41), "41"), (.objectWins, nil, "None"),
    (.storeWins, .integer(41), "50"),
  ])
  func aPropertyTrumpPolicyUpsertsAnInsertedObjectIntoTheOneHoldingItsConstraintValues(
    policy: ObjectContext.MergePolicy, age: AttributeValue?, savedAge: String
  ) throws {
    let (context, copy, stored, book) = try upsert(under: policy, age: age)
    defer { withExtendedLifetime(context) {} }
    // One author, the stored one, with the values the policy gives and both books.
    #expect(try sqlRows(path, "SELECT ZALIAS, ZAGE FROM ZWRITER") == ["ann|\(savedAge)"])
    #expect(
      try sqlRows(
        path,
        "SELECT ZBOOK.ZTITLE FROM ZBOOK JOIN ZWRITER ON ZBOOK.ZAUTHOR = ZWRITER.Z_PK ORDER BY 1")
        == ["Emma", "Persuasion"])
    #expect(copy.isDeleted)
    #expect(try book.object(for: "author") === stored)
    #expect(try stored.objects(for: "books").count == 2)
  }

  @Test func twoInsertedObjectsWithTheSameValuesBecomeOneUnderAMergePolicy() throws {
    let context = try ObjectContext(storePath: path, model: model)
    context.mergePolicy = .mergeByKey
    var books: [ManagedObject] = []
    for (index, title) in ["Emma", "Beloved"].enumerated() {
      let author = try context.insert("Author")
      try author.setValue(.string("dee"), for: "alias")
      try author.setValue(.integer(Int64(60 + index)), for: "age")
      let book = try context.insert("Book")
      try book.setValue(.string(title), for: "title")
      try book.setObject(author, for: "author")
      books.append(book)
    }
    try context.save()
    // The first inserted holds the values; the second's set values win over it.
    #expect(
      try sqlRows(path, "SELECT ZALIAS, ZAGE FROM ZWRITER ORDER BY 1") == ["ann|30", "dee|61"])
    #expect(
      try sqlRows(
        path,
        "SELECT ZBOOK.ZTITLE FROM ZBOOK JOIN ZWRITER ON ZBOOK.ZAUTHOR = ZWRITER.Z_PK WHERE ZALIAS = 'dee' ORDER BY 1"
      ) == ["Beloved", "Emma"])
    #expect(try books[0].object(for: "author") === books[1].object(for: "author"))
  }
}
