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
}
