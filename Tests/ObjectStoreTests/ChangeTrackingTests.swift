import Foundation
import ObjectModel
import ObjectStore
import TestSupport
import Testing

/// Change tracking as in Core Data: per object and per context, the did-save notification,
/// and a second context merging it.
@Suite("Change tracking")
struct ChangeTrackingTests {
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
    for title in ["Dune", "Emma"] {
      let book = try context.insert("Book")
      try book.setValue(.string(title), for: "title")
      try book.setObject(author, for: "author")
    }
    let tag = try context.insert("Tag")
    try tag.setValue(.string("classic"), for: "name")
    try context.save()
  }

  func book(_ title: String, in context: ObjectContext) throws -> ManagedObject {
    try #require(
      try context.fetch(
        FetchRequest(entity: "Book", predicate: ObjectStore.Predicate(format: "title == %@", title))
      ).first)
  }

  @Test func eachObjectSaysWhetherItIsInsertedUpdatedOrDeleted() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let dune = try book("Dune", in: context)
    let emma = try book("Emma", in: context)
    #expect(!dune.hasChanges && !dune.isUpdated && !dune.isInserted && !dune.isDeleted)
    #expect(!context.hasChanges)
    try dune.setValue(.string("Dune Messiah"), for: "title")
    let fresh = try context.insert("Book")
    try context.delete(emma)
    #expect(dune.isUpdated && dune.hasChanges && !dune.isInserted)
    #expect(fresh.isInserted && fresh.hasChanges && !fresh.isUpdated)
    #expect(emma.isDeleted && emma.hasChanges && !emma.isUpdated)
    #expect(context.insertedObjects == [fresh])
    #expect(context.updatedObjects.contains(dune))
    #expect(context.deletedObjects == [emma])
    try fresh.setValue(.string("New"), for: "title")
    try context.save()
    #expect(!dune.hasChanges && !fresh.hasChanges && !fresh.isInserted)
    #expect(context.insertedObjects.isEmpty && context.updatedObjects.isEmpty)
    #expect(context.deletedObjects.isEmpty)
  }

  @Test func aManyToManyLinkMadeInMemoryUpdatesBothEnds() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let dune = try book("Dune", in: context)
    let tag = try #require(try context.fetch(FetchRequest(entity: "Tag")).first)
    try tag.add(dune, to: "books")
    #expect(dune.isUpdated && tag.isUpdated)
    #expect(try dune.changedValues() == ["tags": .toMany([tag.reference])])
    #expect(try dune.committedValues(forKeys: ["tags"]) == ["tags": .toMany([])])
  }

  @Test func anOwnerWhoseOneToManyMembersMovedIsUpdatedAsItsChangedValuesSay() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let dune = try book("Dune", in: context)
    let author = try #require(try dune.object(for: "author"))
    let other = try context.insert("Author")
    try other.setValue(.string("bo"), for: "alias")
    try context.save()
    #expect(!author.isUpdated && !other.isUpdated)
    // A book moves to the other author: both authors' books changed, as Core Data says.
    try dune.setObject(other, for: "author")
    for owner in [author, other] {
      #expect(try !owner.changedValues().isEmpty)
      #expect(owner.isUpdated && owner.hasChanges)
      #expect(context.updatedObjects.contains(owner))
    }
    // Moved back: the owners' members are as stored again, and they are no longer updated
    // (the book itself stays updated, as Core Data keeps an object that was set).
    try dune.setObject(author, for: "author")
    for owner in [author, other] {
      #expect(try owner.changedValues().isEmpty)
      #expect(!owner.isUpdated)
    }
  }

  @Test func changedAndCommittedValuesSayWhatChangedAndWhatIsStored() throws {
    let context = try ObjectContext(storePath: path, model: model)
    let dune = try book("Dune", in: context)
    let emma = try book("Emma", in: context)
    let author = try #require(try dune.object(for: "author"))
    let other = try context.insert("Author")
    try other.setValue(.string("bo"), for: "alias")
    #expect(try dune.changedValues().isEmpty)
    try dune.setValue(.string("Dune Messiah"), for: "title")
    try dune.setValue(.double(4.5), for: "rating")
    try dune.setObject(other, for: "author")
    // Set back to what is stored: no longer a change.
    try emma.setValue(.string("Persuasion"), for: "title")
    try emma.setValue(.string("Emma"), for: "title")
    #expect(
      try dune.changedValues() == [
        "title": .attribute(.string("Dune Messiah")), "rating": .attribute(.double(4.5)),
        "author": .toOne(other.reference),
      ])
    #expect(try emma.changedValues().isEmpty)
    #expect(
      try dune.committedValues(forKeys: ["title", "rating", "author"]) == [
        "title": .attribute(.string("Dune")), "rating": .attribute(nil),
        "author": .toOne(author.reference),
      ])
    // The author's books: one moved away in memory, the stored two in committed values.
    #expect(try author.changedValues() == ["books": .toMany([emma.reference])])
    let stored = try author.committedValues(forKeys: ["books"])
    #expect(stored == ["books": .toMany([dune.reference, emma.reference])])
    #expect(throws: StoreError.self) { try dune.committedValues(forKeys: ["nothing"]) }
  }

  /// Core Data's pattern: one context saves, the notification carries the object IDs, and a
  /// second context merges them while keeping its own unsaved changes.
  @Test func aSaveNotificationMergedIntoASecondContextBringsItUpToDate() throws {
    let writer = try ObjectContext(storePath: path, model: model)
    let reader = try ObjectContext(storePath: path, model: model)
    let readersDune = try book("Dune", in: reader)
    let readersEmma = try book("Emma", in: reader)
    let author = try #require(try readersDune.object(for: "author"))
    #expect(try author.objects(for: "books").count == 2)
    try readersDune.setValue(.double(3), for: "rating")  // the reader's own change

    let received = Received()
    let observer = NotificationCenter.default.addObserver(
      forName: .objectContextDidSave, object: writer, queue: nil
    ) { received.add($0) }
    defer { NotificationCenter.default.removeObserver(observer) }
    let dune = try book("Dune", in: writer)
    try dune.setValue(.string("Dune Messiah"), for: "title")
    try writer.delete(try book("Emma", in: writer))
    let fresh = try writer.insert("Book")
    try fresh.setValue(.string("Frankenstein"), for: "title")
    try fresh.setObject(try writer.object(with: author.reference), for: "author")
    try writer.save()

    let notification = try #require(received.first)
    let changes = try #require(ContextDidSave(notification))
    #expect(changes.inserted == [fresh.reference])
    #expect(changes.deleted == [readersEmma.reference])
    #expect(changes.updated.contains(dune.reference))
    try reader.mergeChanges(fromContextDidSave: notification)
    #expect(try readersDune.value(for: "title") == .string("Dune Messiah"))
    #expect(try readersDune.value(for: "rating") == .double(3))
    #expect(readersDune.isUpdated)
    #expect(readersEmma.isDeleted)
    #expect(
      Set(try author.objects(for: "books").map(\.reference))
        == [readersDune.reference, fresh.reference])
    try reader.save()  // no conflict: the reader saw the writer's version
    let again = try ObjectContext(storePath: path, model: model)
    let saved = try book("Dune Messiah", in: again)
    #expect(try saved.value(for: "rating") == .double(3))
  }

  @Test func aContextMergesEverySaveOfAnotherUntilCancelled() throws {
    let writer = try ObjectContext(storePath: path, model: model)
    let reader = try ObjectContext(storePath: path, model: model)
    let readersDune = try book("Dune", in: reader)
    let merging = reader.mergeChanges(fromSavesOf: writer)
    let dune = try book("Dune", in: writer)
    try dune.setValue(.string("Dune I"), for: "title")
    try writer.save()
    #expect(try readersDune.value(for: "title") == .string("Dune I"))
    merging.cancel()
    try dune.setValue(.string("Dune II"), for: "title")
    try writer.save()
    #expect(try readersDune.value(for: "title") == .string("Dune I"))
    #expect(merging.lastError == nil)
  }

  @Test func aNotificationOfAnotherKindIsRefused() throws {
    let context = try ObjectContext(storePath: path, model: model)
    #expect(throws: StoreError.self) {
      try context.mergeChanges(fromContextDidSave: Notification(name: .init("Other")))
    }
  }
}

/// Notifications received by an observer.
final class Received: @unchecked Sendable {
  private let lock = NSLock()
  private var notifications: [Notification] = []
  var first: Notification? { lock.withLock { notifications.first } }
  func add(_ notification: Notification) { lock.withLock { notifications.append(notification) } }
}
