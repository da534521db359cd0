import Foundation
import ObjectModel
import ObjectStore
import PropertyList
import TestSupport
import Testing

@Suite("Undo and redo", .serialized)
struct UndoTests {
  let directory: TemporaryDirectory
  let path: String
  let model: ObjectModel

  init() throws {
    directory = try TemporaryDirectory()
    path = directory.path("Notes.sqlite").path
    model = try BucketModel.make()
    try StoreCreator.create(at: path, model: model)
  }

  func context() throws -> ObjectContext {
    let context = try ObjectContext(storePath: path, model: model)
    context.undoManager = ContextUndoManager()
    return context
  }

  @Test func attributeExtendedAndTransientChangesUndoAndRedoOneByOne() throws {
    let context = try context()
    let undo = try #require(context.undoManager)
    let note = try context.insert("Note")
    try note.setValue(.string("one"), for: "title")
    try note.setValue(.string("blue"), forExtendedKey: "shade")
    try note.setValue(.string("green"), forExtendedKey: "shade")
    try note.setValue(nil, forExtendedKey: "shade")
    try undo.undo()
    #expect(try note.value(forExtendedKey: "shade") == .string("green"))
    try undo.undo()
    #expect(try note.value(forExtendedKey: "shade") == .string("blue"))
    try undo.undo()
    #expect(try note.value(forExtendedKey: "shade") == nil)
    try undo.redo()
    #expect(try note.value(forExtendedKey: "shade") == .string("blue"))
    try undo.undo()
    try undo.undo()
    #expect(try note.value(for: "title") == nil)
    // Undoing the insert discards the object.
    try undo.undo()
    #expect(note.isDeleted)
    #expect(!context.hasChanges)
    try undo.redo()
    #expect(!note.isDeleted)
    #expect(context.hasChanges)
  }

  @Test func aGroupUndoesTogetherAndANewChangeClearsRedo() throws {
    let context = try context()
    let undo = try #require(context.undoManager)
    let note = try context.insert("Note")
    try note.setValue(.string("t"), for: "title")
    try context.save()
    undo.beginUndoGrouping()
    try note.setValue(.string("red"), for: "color")
    try note.setValue(.string("renamed"), for: "title")
    try note.setValue(.integer(7), forExtendedKey: "stars")
    undo.endUndoGrouping()
    try undo.undo()
    #expect(try note.value(for: "color") == nil)
    #expect(try note.value(for: "title") == .string("t"))
    #expect(try note.value(forExtendedKey: "stars") == nil)
    #expect(undo.canRedo)
    try note.setValue(.string("other"), for: "color")
    #expect(!undo.canRedo)
  }

  @Test func relationshipsAndADeleteWithItsCascadeUndoAcrossASave() throws {
    let context = try context()
    let undo = try #require(context.undoManager)
    let folder = try context.insert("Folder")
    var notes: [ManagedObject] = []
    for title in ["a", "b", "c"] {
      let note = try context.insert("Note")
      try note.setValue(.string(title), for: "title")
      try note.setValue(.string(title.uppercased()), forExtendedKey: "upper")
      try folder.add(note, to: "notes")
      notes.append(note)
    }
    try folder.setObjects([notes[2], notes[0], notes[1]], for: "notes")
    try undo.undo()
    #expect(try folder.objects(for: "notes").map(\.reference) == notes.map(\.reference))
    try undo.redo()
    try context.save()
    // Delete the folder: its notes cascade. Saved, then undone: all of it comes back.
    try context.delete(folder)
    try context.save()
    try undo.undo()
    try context.save()
    let reread = try ObjectContext(storePath: path, model: model)
    let back = try reread.object(with: folder.reference)
    #expect(
      try back.objects(for: "notes").map { try $0.value(for: "title") } == [
        .string("c"), .string("a"), .string("b"),
      ])
    #expect(
      try reread.object(with: notes[1].reference).value(forExtendedKey: "upper") == .string("B"))
    // And a to-one change.
    try notes[0].setObject(nil, for: "folder")
    try undo.undo()
    #expect(try notes[0].object(for: "folder")?.reference == folder.reference)
  }

  @Test func transientChangesAreTrackedAndUndone() throws {
    let libraryPath = directory.path("Library.sqlite").path
    let library = try LibraryModel.make()
    try StoreCreator.create(at: libraryPath, model: library)
    let context = try ObjectContext(storePath: libraryPath, model: library)
    context.undoManager = ContextUndoManager()
    let book = try context.insert("Book")
    try book.setValue(.string("Dune"), for: "title")
    try context.save()
    try book.setTransientValue(["any", "value"], for: "scratch")
    try book.setTransientValue(42, for: "scratch")
    #expect(context.hasChanges)
    try context.undoManager?.undo()
    #expect(book.transientValue(for: "scratch") as? [String] == ["any", "value"])
    try context.undoManager?.undo()
    #expect(book.transientValue(for: "scratch") == nil)
    try context.undoManager?.redo()
    #expect(book.transientValue(for: "scratch") as? [String] == ["any", "value"])
  }

  @Test func savingCanForgetTheUndoStackAndRollbackAlwaysDoes() throws {
    let context = try context()
    let undo = try #require(context.undoManager)
    let note = try context.insert("Note")
    try note.setValue(.string("t"), for: "title")
    try context.save()
    #expect(undo.canUndo)
    undo.removesAllActionsOnSave = true
    try note.setValue(.string("u"), for: "title")
    try context.save()
    #expect(!undo.canUndo)
    try note.setValue(.string("v"), for: "title")
    context.rollback()
    #expect(!undo.canUndo)
    #expect(try note.value(for: "title") == .string("u"))
  }

  @Test(
    "an insert deleted, undone and redone, and rolled back and inserted again, is saved once, as the last state it had"
  )
  func anInsertThatComesAndGoesIsSavedOnce() throws {
    let context = try context()
    let undo = try #require(context.undoManager)
    let kept = try context.insert("Note")
    try kept.setValue(.string("kept"), for: "title")
    let note = try context.insert("Note")
    try note.setValue(.string("first"), for: "title")
    #expect(note.isInserted && kept.isInserted)
    try context.delete(note)
    #expect(!note.isInserted && note.isDeleted)
    try undo.undo()
    #expect(note.isInserted && !note.isDeleted)
    try note.setValue(.string("second"), for: "title")
    #expect(context.insertedObjects.count == 2)
    try context.save()
    #expect(!note.isInserted && !kept.isInserted && !context.hasChanges)
    let fresh = try ObjectContext(storePath: path, model: model)
    let titles = try fresh.fetch(FetchRequest(entity: "Note")).compactMap {
      try $0.value(for: "title")
    }
    #expect(titles.sorted { "\($0)" < "\($1)" } == [.string("kept"), .string("second")])

    // A rollback discards a pending insert; one inserted after it is saved alone.
    let discarded = try context.insert("Note")
    try discarded.setValue(.string("gone"), for: "title")
    context.rollback()
    #expect(!discarded.isInserted && discarded.isDeleted)
    let last = try context.insert("Note")
    try last.setValue(.string("last"), for: "title")
    try context.save()
    #expect(
      try ObjectContext(storePath: path, model: model).count(for: FetchRequest(entity: "Note")) == 3
    )
  }
}
